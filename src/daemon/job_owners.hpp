// Who may report for a job: its owner, root, or SlurmUser; and which job INSTANCE a report belongs
// to: Slurm reuses job ids (wrap-around at MaxJobId, a controller whose state was reset), so the
// owner lookup also returns the job's submit time, and (job id, submit time) names the instance.
//
// Answers come from slurmctld through libslurm (slurm_load_job) and are cached: an owner for
// owner_cache_ttl (a training loop reports thousands of times, slurmctld sees one RPC per job and
// TTL), an unknown job id for unknown_job_ttl (a flood of reports for bogus ids costs slurmctld one
// RPC per id and TTL). The cache holds at most `capacity` entries. When slurmctld cannot be
// reached the answer is `unavailable` (the client is told to retry) and slurmctld is left alone
// for a moment rather than asked again by every report.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/base/log.hpp"

namespace explsched::daemon {

struct OwnerCacheOptions {
    std::chrono::seconds owner_ttl{60};
    std::chrono::seconds unknown_ttl{5};
    std::size_t capacity = 100000;
};

class JobOwners {
public:
    enum class Kind { owner, unknown_job, unavailable };
    struct Answer {
        Kind kind = Kind::unavailable;
        uint32_t uid = 0;         // when kind == owner
        int64_t submit_time = 0;  // when kind == owner: the instance's submit time
        bool active = false;      // when kind == owner: pending, running or suspended
        bool cached = false;      // the answer came from the cache
        std::string error;        // when unknown_job/unavailable: "<what failed>: <why>"
        uint32_t restarts = 0;    // when kind == owner: requeues so far (each gave a new submit time)
    };

    // slurm_conf: path of slurm.conf; empty: $SLURM_CONF, else /etc/slurm/slurm.conf.
    JobOwners(std::string slurm_conf, Logger& log, OwnerCacheOptions cache = {});
    virtual ~JobOwners();
    JobOwners(const JobOwners&) = delete;
    JobOwners& operator=(const JobOwners&) = delete;

    // Root always; SlurmUser once slurmctld told us who that is (asked lazily, retried).
    bool privileged(uint32_t uid);
    // SlurmUser's uid, when slurmctld told it (asks if not yet known; may block on slurmctld).
    std::optional<uint32_t> slurm_user();
    // Thread-safe; blocks on slurmctld for an uncached job (without holding the cache lock).
    // fresh: ignore a cached owner (the reporter is not the cached owner: the id may have been
    // reused since).
    Answer lookup(uint32_t job_id, bool fresh = false);

    // The slurm.conf in use, or why there is none (for the startup log line).
    std::string describe();
    std::size_t cached_entries();

protected:
    // The RPC: slurm_load_job. Overridden by tests.
    virtual Answer ask_slurmctld(uint32_t job_id);

private:
    bool init_locked(std::string& error);
    void remember_locked(uint32_t job_id, const Answer& answer, std::chrono::steady_clock::time_point now);

    std::string conf_path_;
    Logger& log_;
    OwnerCacheOptions cache_options_;
    std::mutex mutex_;  // libslurm initialisation and the cache
    bool initialized_ = false;
    std::optional<uint32_t> slurm_user_;
    std::chrono::steady_clock::time_point next_ctl_try_{};
    std::chrono::steady_clock::time_point ctl_down_until_{};
    std::string ctl_down_error_;
    struct Entry {
        Answer answer;
        std::chrono::steady_clock::time_point expires;
    };
    std::unordered_map<uint32_t, Entry> cache_;
};

}  // namespace explsched::daemon
