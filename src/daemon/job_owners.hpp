// Who may report for a job: its owner, root, or SlurmUser. Owners come from slurmctld through
// libslurm (slurm_load_job) and are cached per job id: a job's owner never changes, and a training
// loop reports thousands of times, so slurmctld sees one RPC per job rather than one per report.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/base/log.hpp"

namespace explsched::daemon {

class JobOwners {
public:
    enum class Kind { owner, unknown_job, unavailable };
    struct Answer {
        Kind kind = Kind::unavailable;
        uint32_t uid = 0;   // when kind == owner
        std::string error;  // when unknown_job/unavailable: "<what failed>: <why>"
    };

    // slurm_conf: path of slurm.conf; empty: $SLURM_CONF, else /etc/slurm/slurm.conf.
    JobOwners(std::string slurm_conf, Logger& log);
    ~JobOwners();
    JobOwners(const JobOwners&) = delete;
    JobOwners& operator=(const JobOwners&) = delete;

    // Root always; SlurmUser once slurmctld told us who that is (asked lazily, retried).
    bool privileged(uint32_t uid);
    // Thread-safe; blocks on slurmctld for an uncached job.
    Answer lookup(uint32_t job_id);

    // The slurm.conf in use, or why there is none (for the startup log line).
    std::string describe();

private:
    bool init_locked(std::string& error);

    std::string conf_path_;
    Logger& log_;
    std::mutex mutex_;  // libslurm calls and the caches
    bool initialized_ = false;
    std::optional<uint32_t> slurm_user_;
    std::chrono::steady_clock::time_point next_ctl_try_{};
    std::unordered_map<uint32_t, uint32_t> owners_;
    // Unknown jobs are remembered briefly, so a flood of reports for a bogus id costs slurmctld
    // one RPC per few seconds rather than one per report.
    std::unordered_map<uint32_t, std::chrono::steady_clock::time_point> unknown_until_;
};

}  // namespace explsched::daemon
