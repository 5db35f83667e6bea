// Retention: the reports of a job instance go once its last report is older than `retention` AND
// slurmctld no longer knows that instance as pending, running or suspended. A pass runs every
// retention_period on its own thread: it lists old instances through a read-only connection
// (readers never block the writer in WAL mode), asks slurmctld about each (through the owner
// cache), and deletes in transactions of at most retention_batch rows through the committer, so
// the write lock is never held for a whole large job. When slurmctld cannot be reached nothing
// is deleted in that pass. Row ids are never reused, so readers' cursors stay valid.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "core/base/log.hpp"
#include "core/report/report_store.hpp"
#include "daemon/committer.hpp"
#include "daemon/daemon_limits.hpp"
#include "daemon/job_owners.hpp"

namespace explsched::daemon {

struct PruneStats {
    uint64_t instances = 0;  // instances whose reports were deleted
    uint64_t rows = 0;
    uint64_t kept_active = 0;  // old but still pending/running
    bool skipped = false;      // slurmctld unreachable: nothing deleted
};

// One pass, synchronously (the thread below calls it; tests call it directly).
Result<PruneStats> prune_once(const std::string& db_path, Committer& committer, JobOwners& owners,
                              const DaemonLimits& limits, double now);

class Retention {
public:
    // Starts the thread when limits.retention > 0.
    Retention(std::string db_path, Committer& committer, JobOwners& owners, const DaemonLimits& limits,
              Logger& log);
    ~Retention();  // stops and joins
    Retention(const Retention&) = delete;
    Retention& operator=(const Retention&) = delete;

private:
    void run();

    std::string db_path_;
    Committer& committer_;
    JobOwners& owners_;
    DaemonLimits limits_;
    Logger& log_;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace explsched::daemon
