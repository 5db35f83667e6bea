#include "daemon/retention.hpp"

#include <chrono>

namespace explsched::daemon {

namespace {

constexpr std::size_t kInstancesPerPass = 10000;

double wall_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

Result<PruneStats> prune_once(const std::string& db_path, Committer& committer, JobOwners& owners,
                              const DaemonLimits& limits, double now) {
    PruneStats stats;
    if (limits.retention == 0) return stats;
    auto reader = ReportReader::open(db_path);
    if (!reader) return reader.error();
    auto old = (*reader)->instances_before(now - static_cast<double>(limits.retention), kInstancesPerPass);
    if (!old) return old.error();
    reader->reset();
    for (const StoredInstance& inst : *old) {
        const JobOwners::Answer a = owners.lookup(inst.job_id, true);
        if (a.kind == JobOwners::Kind::unavailable) {
            stats.skipped = true;  // cannot tell whether it still runs: delete nothing now
            return stats;
        }
        // A legacy row (submit 0) is kept while any job with that id is active.
        if (a.kind == JobOwners::Kind::owner && a.active &&
            (inst.job_submit == 0 || a.submit_time == inst.job_submit)) {
            ++stats.kept_active;
            continue;
        }
        for (;;) {
            auto n = committer.prune(inst.job_id, inst.job_submit, limits.retention_batch);
            if (!n) return n.error();
            stats.rows += *n;
            if (*n < limits.retention_batch) break;
        }
        ++stats.instances;
    }
    return stats;
}

Retention::Retention(std::string db_path, Committer& committer, JobOwners& owners, const DaemonLimits& limits,
                     Logger& log)
    : db_path_(std::move(db_path)), committer_(committer), owners_(owners), limits_(limits), log_(log) {
    if (limits_.retention > 0) thread_ = std::thread([this] { run(); });
}

Retention::~Retention() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Retention::run() {
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            // The first pass waits one period too: a restarting daemon does not prune at once.
            if (cv_.wait_for(lock, std::chrono::seconds(limits_.retention_period), [&] { return stop_; }))
                return;
        }
        auto r = prune_once(db_path_, committer_, owners_, limits_, wall_now());
        if (!r) {
            if (log_.enabled(LogLevel::error)) log_.write(LogLevel::error, "retention: " + r.error().message);
        } else if (r->skipped) {
            if (log_.enabled(LogLevel::verbose))
                log_.write(LogLevel::verbose, "retention: slurmctld unreachable; nothing pruned this time");
        } else if (r->rows > 0 && log_.enabled(LogLevel::info)) {
            log_.write(LogLevel::info, "retention: pruned " + std::to_string(r->rows) + " reports of " +
                                           std::to_string(r->instances) + " finished job(s); kept " +
                                           std::to_string(r->kept_active) + " old but active");
        }
    }
}

}  // namespace explsched::daemon
