// Shared by the slurmctld shims (priority/explsched, preempt/explsched): binds the core's Logger to
// Slurm's log, holds slurmctld's and the association manager's locks for a scope, and reads a
// job's --explore options from its record. Include after slurmctld.h, locks.h and assoc_mgr.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/log.hpp"
#include "core/base/scoped_lock.hpp"
#include "core/sched/explore_spec.hpp"

namespace explsched::shim {

// slurmctld's locks for a scope: never lock_slurmctld/unlock_slurmctld by hand (an exception or an
// early return in between would leave every RPC that needs the lock waiting forever).
using SlurmctldLocks = ScopedCLock<slurmctld_lock_t, lock_slurmctld, unlock_slurmctld>;
// The association manager's locks for a scope (the levels must outlive the guard).
using AssocMgrLocks = ScopedCLock<assoc_mgr_lock_t*, assoc_mgr_lock, assoc_mgr_unlock>;

class SlurmctldLogger final : public Logger {
public:
    bool enabled(LogLevel level) const override { return get_log_level() >= slurm_level(level); }
    void write(LogLevel level, std::string_view message) override {
        const int l = slurm_level(level);
        if (get_log_level() < l) return;
        log_var(static_cast<log_level_t>(l), "%s: %.*s", plugin_type, static_cast<int>(message.size()),
                message.data());
    }

private:
    static int slurm_level(LogLevel level) {
        switch (level) {
            case LogLevel::error:
                return LOG_LEVEL_ERROR;
            case LogLevel::info:
                return LOG_LEVEL_INFO;
            case LogLevel::verbose:
                return LOG_LEVEL_VERBOSE;
            case LogLevel::debug:
                return LOG_LEVEL_DEBUG;
        }
        return LOG_LEVEL_DEBUG;
    }
};

// The job's --explore options (stored by the SPANK plugin with spank_job_control_setenv).
inline Result<ExploreSpec> job_explore_spec(const job_record_t* job) {
    std::vector<std::string_view> env;
    env.reserve(job->spank_job_env_size);
    for (uint32_t i = 0; i < job->spank_job_env_size; ++i)
        if (job->spank_job_env[i] != nullptr) env.emplace_back(job->spank_job_env[i]);
    return parse_explore_env(env);
}

// The sweep an exploratory job belongs to, as the engine names it: groups are per user, so two
// users' "lr" sweeps are different sweeps.
inline std::string job_sweep(const job_record_t* job, const ExploreSpec& spec) {
    return std::to_string(job->user_id) + ":" + spec.group;
}

// Replaces the job's SystemComment only when the text changed (it is saved in slurmctld's state).
inline void set_system_comment(job_record_t* job, const std::string& text) {
    if (job->system_comment != nullptr && text == job->system_comment) return;
    xfree(job->system_comment);
    job->system_comment = xstrdup(text.c_str());
}

}  // namespace explsched::shim
