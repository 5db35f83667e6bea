// preempt/explsched: the slurmctld shim. slurmctld asks it whether a pending job may preempt a
// running one and in which order candidates go; the answers come from the core.
#include <cmath>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>

#include "core/base/export.hpp"
#include "core/sched/job_summary.hpp"
#include "core/sched/policy.hpp"
#include "core/sched/settings.hpp"

#include "plugins/slurm_compat.hpp"
#include "plugins/slurmctld_shim.hpp"

extern "C" {
EXPLSCHED_EXPORT extern const char plugin_name[] = "ExplSched preemption plugin";
EXPLSCHED_EXPORT extern const char plugin_type[] = "preempt/explsched";
EXPLSCHED_EXPORT extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;
}

namespace {

using namespace explsched;

shim::SlurmctldLogger g_log;

// The job's assessment as priority/explsched last wrote it (SystemComment), or that of a
// non-exploratory job when it has none.
Assessment assessment_of(const job_record_t* job) {
    const TrialKey key{job->job_id, job->array_task_id};
    Assessment a = assessment_for_preemption(key, job->priority, nullptr);
    if (job->system_comment != nullptr) {
        auto summary = parse_summary_line(job->system_comment);
        if (summary) {
            a = assessment_for_preemption(key, job->priority, &summary.value());
        } else if (g_log.enabled(LogLevel::debug)) {
            g_log.write(LogLevel::debug,
                        "job " + std::to_string(job->job_id) + ": " + summary.error().message);
        }
    }
    a.owner = job->user_id;  // preempt_cross_user compares owners
    return a;
}

// The sweep of an exploratory job (protect_leader shields a leader from other sweeps' trials
// only); unreadable: in no sweep, so shielded from.
void set_sweep(Assessment& a, const job_record_t* job) {
    if (!a.exploratory) return;
    auto spec = shim::job_explore_spec(job);
    if (spec && spec->exploratory()) a.group = shim::job_sweep(job, *spec);
}

uint16_t job_preempt_mode(const job_record_t* job) {
    const part_record_t* part = job->part_ptr;
    if (part != nullptr && part->preempt_mode != NO_VAL16)
        return static_cast<uint16_t>(part->preempt_mode & ~PREEMPT_MODE_GANG);
    return static_cast<uint16_t>(slurm_conf.preempt_mode & ~PREEMPT_MODE_GANG);
}

// The grace a preemption gives the job (asked once, as slurmctld begins preempting it). When it
// begins slurmctld sends SIGTERM to the job's steps only, not to its batch script, which gets it
// when the job is requeued, KillWait before SIGKILL. A batch job running no step but its script
// (the trial is the script, or a child of it) would learn nothing in the grace: it would only keep
// the preemptor waiting grace_time (and up to slurmctld's 30-s pass that expires graces) before
// getting the same signal. It is requeued at once; a job with steps (srun) gets grace_time, and so
// does one that asked for a signal of its own (--signal, which PreemptParameters=send_user_signal
// sends in the grace).
uint32_t grace_for(const job_record_t* job, uint32_t grace_time) {
    if (grace_time == 0 || job->batch_flag == 0 || job->step_list == nullptr || job->warn_signal != 0)
        return grace_time;
    list_itr_t* it = list_iterator_create(job->step_list);
    bool steps = false;
    while (auto* step = static_cast<step_record_t*>(list_next(it)))
        if (step->step_id.step_id < SLURM_MAX_NORMAL_STEP_ID) {
            steps = true;
            break;
        }
    list_iterator_destroy(it);
    if (!steps)
        info(
            "%s: job %u runs no step but its batch script, which SIGTERM reaches only at the requeue: "
            "requeued now (no grace; KillWait before SIGKILL)",
            plugin_type, job->job_id);
    return steps ? grace_time : 0;
}

// The settings of the ExplSched plugin that ranks: PrioritySiteFactorParameters under
// site_factor/explsched, else PriorityParameters; parsed again only when the text changes
// (reconfigure).
Settings current_settings() {
    static std::mutex mutex;
    static std::string text;
    static Settings settings;
    std::lock_guard<std::mutex> lock(mutex);
    const bool site = slurm_conf.site_factor_plugin != nullptr &&
                      std::strcmp(slurm_conf.site_factor_plugin, "site_factor/explsched") == 0;
    const char* raw = site ? slurm_conf.site_factor_params : slurm_conf.priority_params;
    const char* params = raw != nullptr ? raw : "";
    if (text != params) {
        text = params;
        auto parsed = parse_settings(text, ",");
        // priority/explsched refuses a bad line at start and keeps its old settings on reconfigure;
        // here the defaults are the safe fallback.
        settings = parsed ? std::move(parsed).value() : Settings{};
    }
    return settings;
}

}  // namespace

extern "C" {

EXPLSCHED_EXPORT int init(void) {
    verbose("%s loaded", plugin_type);
    return SLURM_SUCCESS;
}

EXPLSCHED_EXPORT void fini(void) {}

EXPLSCHED_EXPORT bool preempt_p_preemptable(job_record_t* preemptee, job_record_t* preemptor);

// Whether preemptee is worth preempting for preemptor at all (slurmctld's first filter).
EXPLSCHED_EXPORT bool preempt_p_job_preempt_check(job_queue_rec_t* preemptor, job_queue_rec_t* preemptee) {
    try {
        if (preemptor->job_ptr == nullptr || preemptee->job_ptr == nullptr) return false;
        return preempt_p_preemptable(preemptee->job_ptr, preemptor->job_ptr);
    } catch (...) {
        return false;
    }
}

EXPLSCHED_EXPORT bool preempt_p_preemptable(job_record_t* preemptee, job_record_t* preemptor) {
    try {
        // Only running (or suspended) jobs hold resources worth preempting.
        if (!IS_JOB_RUNNING(preemptee) && !IS_JOB_SUSPENDED(preemptee)) return false;
        if (preemptee->part_ptr != nullptr && preemptee->part_ptr->preempt_mode == PREEMPT_MODE_OFF)
            return false;
        // The current run's length: a requeued job gets a new start_time when it starts again,
        // and its SystemComment may still say "preemptable" from before (min_run_s).
        const time_t now = time(nullptr);
        const double running_s = preemptee->start_time > 0 && now >= preemptee->start_time
                                     ? static_cast<double>(now - preemptee->start_time)
                                     : NAN;
        Assessment by = assessment_of(preemptor);
        Assessment of = assessment_of(preemptee);
        // only a leader's verdict reads the sweeps: their --explore is parsed for it alone
        if (of.reason.code == ReasonCode::leads_sweep) {
            set_sweep(by, preemptor);
            set_sweep(of, preemptee);
        }
        const PreemptVerdict v = preempt_verdict(by, of, current_settings().engine, running_s);
        if (v.allowed)
            info("%s: job %u may preempt job %u: %s", plugin_type, preemptor->job_id, preemptee->job_id,
                 v.reason.c_str());
        else if (g_log.enabled(LogLevel::debug))
            g_log.write(LogLevel::debug, "job " + std::to_string(preemptor->job_id) +
                                             " may not preempt job " + std::to_string(preemptee->job_id) +
                                             ": " + v.reason);
        return v.allowed;
    } catch (...) {
        return false;
    }
}

EXPLSCHED_EXPORT int preempt_p_get_data(job_record_t* job_ptr, slurm_preempt_data_type_t data_type,
                                        void* data) {
    try {
        switch (data_type) {
            case PREEMPT_DATA_ENABLED:
                *static_cast<bool*>(data) = slurm_conf.preempt_mode != PREEMPT_MODE_OFF;
                return SLURM_SUCCESS;
            case PREEMPT_DATA_MODE:
                *static_cast<uint16_t*>(data) = job_preempt_mode(job_ptr);
                return SLURM_SUCCESS;
            case PREEMPT_DATA_PRIO:
                // Lowest first: the job priority already ranks utility against the GPU price.
                *static_cast<uint32_t*>(data) = job_ptr->priority;
                return SLURM_SUCCESS;
            case PREEMPT_DATA_GRACE_TIME:
                *static_cast<uint32_t*>(data) = grace_for(job_ptr, current_settings().grace_time);
                return SLURM_SUCCESS;
        }
        error("%s: unknown preempt data type %d", plugin_type, static_cast<int>(data_type));
        return SLURM_ERROR;
    } catch (...) {
        return SLURM_ERROR;
    }
}

}  // extern "C"
