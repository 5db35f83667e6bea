#include "daemon/rate_limiter.hpp"

#include <algorithm>

namespace explsched::daemon {

bool RateLimiter::take(const std::string& key, double rate, double burst, Clock::time_point now,
                       double cost) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, fresh] = buckets_.try_emplace(key);
    Bucket& b = it->second;
    if (fresh) {
        b.tokens = burst;
    } else {
        const double dt = std::chrono::duration<double>(now - b.updated).count();
        if (dt > 0.0) b.tokens = std::min(burst, b.tokens + dt * rate);
    }
    b.updated = std::max(b.updated, now);
    if (b.tokens < cost) return false;
    b.tokens -= cost;
    return true;
}

void RateLimiter::prune(double rate, double burst, Clock::time_point now) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = buckets_.begin(); it != buckets_.end();) {
        const double dt = std::chrono::duration<double>(now - it->second.updated).count();
        if (it->second.tokens + dt * rate >= burst)
            it = buckets_.erase(it);
        else
            ++it;
    }
}

std::size_t RateLimiter::size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return buckets_.size();
}

}  // namespace explsched::daemon
