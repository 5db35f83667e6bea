// preempt/explsched: the slurmctld shim. slurmctld asks it whether a pending job may preempt a
// running one and in which order candidates go; the answers come from the core.
#include <string>

#include "export.hpp"

#include "common/config.hpp"
#include "common/preempt_rule.hpp"

extern "C" {
#include "src/common/bitstring.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/preempt.h"
#include "src/slurmctld/slurmctld.h"
}

#include "../../slurmctld_shim.hpp"

extern "C" {
EXPLSCHED_EXPORT extern const char plugin_name[] = "ExplSched preemption plugin";
EXPLSCHED_EXPORT extern const char plugin_type[] = "preempt/explsched";
EXPLSCHED_EXPORT extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;
}

namespace {

using namespace explsched;

shim::SlurmctldLogger g_log;

PreemptFacts preempt_facts(const job_record_t* job) {
    PreemptFacts f;
    f.job_id = job->job_id;
    f.priority = job->priority;
    auto spec = shim::job_explore_spec(job);
    if (spec) f.exploratory = spec->exploratory();
    if (job->part_ptr != nullptr) {
        f.partition_tier = job->part_ptr->priority_tier;
        f.partition_preempt_off = job->part_ptr->preempt_mode == PREEMPT_MODE_OFF;
    }
    return f;
}

uint16_t job_preempt_mode(const job_record_t* job) {
    const part_record_t* part = job->part_ptr;
    if (part != nullptr && part->preempt_mode != NO_VAL16)
        return static_cast<uint16_t>(part->preempt_mode & ~PREEMPT_MODE_GANG);
    return static_cast<uint16_t>(slurm_conf.preempt_mode & ~PREEMPT_MODE_GANG);
}

Settings load_settings() {
    const char* params = slurm_conf.priority_params;
    auto parsed = parse_settings(params != nullptr ? params : "", ",");
    // priority/explsched reports a bad line (and refuses to start); here fall back to defaults.
    return parsed ? std::move(parsed).value() : Settings{};
}

}  // namespace

extern "C" {

EXPLSCHED_EXPORT int init(void) {
    verbose("%s loaded", plugin_type);
    return SLURM_SUCCESS;
}

EXPLSCHED_EXPORT void fini(void) {}

EXPLSCHED_EXPORT bool preempt_p_job_preempt_check(job_queue_rec_t* preemptor, job_queue_rec_t* preemptee) {
    try {
        if (preemptor->job_ptr == nullptr || preemptee->job_ptr == nullptr) return false;
        return may_preempt(preempt_facts(preemptor->job_ptr), preempt_facts(preemptee->job_ptr),
                           load_settings())
            .allowed;
    } catch (...) {
        return false;
    }
}

EXPLSCHED_EXPORT bool preempt_p_preemptable(job_record_t* preemptee, job_record_t* preemptor) {
    try {
        const PreemptAnswer v = may_preempt(preempt_facts(preemptor), preempt_facts(preemptee), load_settings());
        if (g_log.enabled(LogLevel::debug))
            g_log.write(LogLevel::debug, "job " + std::to_string(preemptor->job_id) + " over job " +
                                             std::to_string(preemptee->job_id) + ": " + v.reason);
        return v.allowed;
    } catch (...) {
        return false;
    }
}

EXPLSCHED_EXPORT int preempt_p_get_data(job_record_t* job_ptr, slurm_preempt_data_type_t data_type, void* data) {
    try {
        switch (data_type) {
            case PREEMPT_DATA_ENABLED:
                *static_cast<bool*>(data) = slurm_conf.preempt_mode != PREEMPT_MODE_OFF;
                return SLURM_SUCCESS;
            case PREEMPT_DATA_MODE:
                *static_cast<uint16_t*>(data) = job_preempt_mode(job_ptr);
                return SLURM_SUCCESS;
            case PREEMPT_DATA_PRIO:
                *static_cast<uint32_t*>(data) = preemptee_order(preempt_facts(job_ptr));
                return SLURM_SUCCESS;
            case PREEMPT_DATA_GRACE_TIME:
                *static_cast<uint32_t*>(data) = load_settings().grace_time;
                return SLURM_SUCCESS;
        }
        error("%s: unknown preempt data type %d", plugin_type, static_cast<int>(data_type));
        return SLURM_ERROR;
    } catch (...) {
        return SLURM_ERROR;
    }
}

}  // extern "C"
