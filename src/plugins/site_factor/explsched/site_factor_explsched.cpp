// site_factor/explsched: ExplSched's utility-versus-price term as each job's site factor under
// priority/multifactor (PrioritySiteFactorPlugin=site_factor/explsched), the recommended setup:
// fair-share, QOS, age, partition and TRES factors stay multifactor's, and sprio's SITE column
// shows ours. Settings come from PrioritySiteFactorParameters (the keys of PriorityParameters
// under priority/explsched). The re-ranking is the shared driver's (plugins/rerank/rerank.hpp);
// hopeless trials are held, requeued or cancelled as under priority/explsched.
#include <cstdint>
#include <cstring>

#include "core/base/export.hpp"

#include "plugins/slurm_compat.hpp"

#include "plugins/rerank/rerank.hpp"

extern "C" {
EXPLSCHED_EXPORT extern const char plugin_name[] = "ExplSched site factor plugin";
EXPLSCHED_EXPORT extern const char plugin_type[] = "site_factor/explsched";
EXPLSCHED_EXPORT extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;

EXPLSCHED_EXPORT int init(void) {
    // priority/multifactor runs the decay thread that calls site_factor_p_update (and recomputes
    // priorities at all) only with slurmdbd: without it the site factors would stay at their
    // submit-time values, silently. Refuse, naming the fix.
    const char* storage = slurm_conf.accounting_storage_type;
    if (storage == nullptr || std::strcmp(storage, "accounting_storage/slurmdbd") != 0) {
        error(
            "%s: needs AccountingStorageType=accounting_storage/slurmdbd (priority/multifactor updates site "
            "factors and priorities only with slurmdbd; AccountingStorageType is %s). Without slurmdbd use "
            "PriorityType=priority/explsched",
            plugin_type, storage != nullptr ? storage : "unset");
        return SLURM_ERROR;
    }
    const int rc = explsched::rerank::init(explsched::rerank::Mode::site_factor);
    if (rc == SLURM_SUCCESS) verbose("%s loaded", plugin_name);
    return rc;
}

EXPLSCHED_EXPORT int fini(void) { return explsched::rerank::fini(); }

EXPLSCHED_EXPORT void site_factor_p_reconfig(void) { explsched::rerank::reconfig(); }

// At submit and requeue, from priority/multifactor's priority_p_set (job write lock held).
EXPLSCHED_EXPORT void site_factor_p_set(job_record_t* job_ptr) {
    explsched::rerank::site_factor_at_submit(job_ptr);
}

// Every PriorityCalcPeriod, from multifactor's decay thread (job write lock held), just before it
// recomputes every job's priority.
EXPLSCHED_EXPORT void site_factor_p_update(void) { explsched::rerank::site_factor_update(); }
}
