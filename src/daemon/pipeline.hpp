// The stages a report goes through inside explschedd, and the queues between them:
//
//   event loop (parse, validate) → auth workers (munge, job owner) → event loop (reorder)
//     → committer (group commit) → event loop (reply, in request order per connection)
//
// Tasks name their connection and sequence number rather than pointing at it: a connection may
// close while its reports are in flight, and a late result for it is then simply dropped.
// The event loop bounds how many tasks exist (per connection and in total), so the queues
// themselves need no bound.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/fd.hpp"
#include "core/report/report_store.hpp"
#include "core/report/report_wire.hpp"

namespace explsched::daemon {

struct Ticket {
    uint64_t conn = 0;
    uint64_t seq = 0;
};

struct AuthTask {
    Ticket ticket;
    wire::ReportRequest request;
    bool rate_charged = false;  // the per-uid rate was charged before munge (a peer on this host)
};

struct CommitTask {
    Ticket ticket;
    ReportInput input;
};

// A stage's answer for one ticket: `uid` and `job_submit` when authentication passed (reply
// unset), or the final reply (refusal, or the commit's verdict). `authenticated`: the credential
// was valid, whatever happened next (the connection has passed its authentication deadline).
struct Completion {
    enum class Stage { auth, commit } stage = Stage::auth;
    Ticket ticket;
    uint32_t uid = 0;
    int64_t job_submit = 0;
    uint32_t job_restarts = 0;
    bool authenticated = false;
    std::optional<wire::Reply> reply;
    std::optional<std::string> text;  // a complete answer of several lines (a curve read)
};

// A FIFO that worker threads block on; close() wakes them all to exit once it is drained.
template <typename T>
class WorkQueue {
public:
    void push(T item) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            items_.push_back(std::move(item));
        }
        cv_.notify_one();
    }
    // Blocks until at least one item is there (or the queue is closed and empty: returns empty);
    // takes up to `max` items.
    std::vector<T> pop(std::size_t max) {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return closed_ || !items_.empty(); });
        std::vector<T> out;
        while (!items_.empty() && out.size() < max) {
            out.push_back(std::move(items_.front()));
            items_.pop_front();
        }
        return out;
    }
    void close() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            closed_ = true;
        }
        cv_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<T> items_;
    bool closed_ = false;
};

// A WorkQueue that serves its clients in turn: items are queued per key (the reporting peer), and
// pop() takes one item of each key round-robin, so one user's thousand queued reports delay another
// user's report by one munge check, not a thousand.
template <typename T>
class FairQueue {
public:
    void push(const std::string& key, T item) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto& q = per_key_[key];
            if (q.empty()) order_.push_back(key);
            q.push_back(std::move(item));
        }
        cv_.notify_one();
    }
    std::vector<T> pop(std::size_t max) {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return closed_ || !order_.empty(); });
        std::vector<T> out;
        while (!order_.empty() && out.size() < max) {
            std::string key = std::move(order_.front());
            order_.pop_front();
            auto it = per_key_.find(key);
            out.push_back(std::move(it->second.front()));
            it->second.pop_front();
            if (it->second.empty())
                per_key_.erase(it);
            else
                order_.push_back(std::move(key));
        }
        return out;
    }
    void close() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            closed_ = true;
        }
        cv_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::unordered_map<std::string, std::deque<T>> per_key_;
    std::deque<std::string> order_;  // keys with queued items, in serving order
    bool closed_ = false;
};

// Completions flow back to the event loop, which polls the eventfd.
class CompletionQueue {
public:
    CompletionQueue() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

    int fd() const { return fd_.get(); }

    void post(std::vector<Completion> batch) {
        if (batch.empty()) return;
        bool wake;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            wake = items_.empty();
            for (auto& c : batch) items_.push_back(std::move(c));
        }
        // One wake-up per burst: the loop takes everything at once.
        if (wake) {
            const uint64_t one = 1;
            [[maybe_unused]] const ssize_t n = ::write(fd_.get(), &one, sizeof one);
        }
    }
    std::vector<Completion> take() {
        uint64_t count;
        [[maybe_unused]] const ssize_t n = ::read(fd_.get(), &count, sizeof count);
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<Completion> out;
        out.swap(items_);
        return out;
    }

private:
    Fd fd_;
    std::mutex mutex_;
    std::vector<Completion> items_;
};

}  // namespace explsched::daemon
