// The one thread that writes the report database. It takes every report waiting (up to
// max_batch) and commits them in one transaction: while one COMMIT waits for its fsync, the
// next batch gathers, so throughput grows with load while each report is still acknowledged only
// after the COMMIT that stored it. max_batch = 1 is the one-commit-per-report baseline.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

#include "core/base/log.hpp"
#include "core/report/report_store.hpp"
#include "daemon/pipeline.hpp"

namespace explsched::daemon {

struct CommitStats {
    std::atomic<uint64_t> batches{0};
    std::atomic<uint64_t> stored{0};
    std::atomic<uint64_t> duplicates{0};
    std::atomic<uint64_t> refused{0};
    std::atomic<uint64_t> failed{0};  // reports of batches whose transaction failed
};

class Committer {
public:
    Committer(ReportStore& store, std::size_t max_batch, CompletionQueue& done, Logger& log);
    ~Committer();  // drains the queue, then joins
    Committer(const Committer&) = delete;
    Committer& operator=(const Committer&) = delete;

    void push(const CommitTask& task) { queue_.push(task); }
    // One bounded delete for retention, between two batches (the store is one connection, used
    // by one thread at a time).
    Result<uint64_t> prune(uint32_t job_id, int64_t job_submit, uint64_t max_rows);
    const CommitStats& stats() const { return stats_; }

private:
    void run();

    ReportStore& store_;
    std::mutex store_mutex_;
    std::size_t max_batch_;
    CompletionQueue& done_;
    Logger& log_;
    WorkQueue<CommitTask> queue_;
    CommitStats stats_;
    std::thread thread_;
};

}  // namespace explsched::daemon
