// Token buckets by key ("uid=1001", "host=10.0.0.7"): each refills at `rate` tokens/s up to
// `burst`; a report takes one token or is refused (retry, code rate_limited). Thread-safe: the
// event loop charges local peers before munge, auth workers charge remote ones after it.
// Memory is bounded: full buckets are forgotten by prune() (a full bucket is the default).
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

namespace explsched::daemon {

class RateLimiter {
public:
    using Clock = std::chrono::steady_clock;

    // Takes `cost` tokens from the bucket of `key` (created full); false (taking nothing) when it
    // holds fewer.
    bool take(const std::string& key, double rate, double burst, Clock::time_point now = Clock::now(),
              double cost = 1.0);
    // Forgets buckets that have refilled completely by `now`.
    void prune(double rate, double burst, Clock::time_point now = Clock::now());
    std::size_t size() const;

private:
    struct Bucket {
        double tokens = 0.0;
        Clock::time_point updated{};
    };
    mutable std::mutex mutex_;
    std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace explsched::daemon
