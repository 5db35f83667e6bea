// priority/explsched: ExplSched's utility ranking as the whole Slurm priority, for sites that
// want utility to dominate (site_factor/explsched under priority/multifactor is the recommended
// setup). The re-ranking itself is the shared driver's (plugins/rerank/rerank.hpp); this file is
// the plugin's entry points, the factors sprio prints, and Slurm's bookkeeping at job end.
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/base/export.hpp"

#include "plugins/slurm_compat.hpp"

#include "plugins/rerank/rerank.hpp"
#include "plugins/slurmctld_shim.hpp"

extern "C" {
EXPLSCHED_EXPORT extern const char plugin_name[] = "ExplSched priority plugin";
EXPLSCHED_EXPORT extern const char plugin_type[] = "priority/explsched";
EXPLSCHED_EXPORT extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;

// sshare and sprio load priority plugins outside slurmctld, where these do not exist: weak
// references resolve to NULL there instead of failing the load.
extern list_t* job_list __attribute__((weak));
extern int slurmctld_tres_cnt __attribute__((weak));
extern void* acct_db_conn __attribute__((weak));
extern bool validate_operator(uid_t uid) __attribute__((weak));
}

namespace {

using namespace explsched;

// PrivateData=jobs: a user sees only their own jobs' factors, unless an operator or a
// coordinator of the job's account (as priority/multifactor decides).
bool factors_visible(const job_record_t* job, uid_t uid) {
    if (!(slurm_conf.private_data & PRIVATE_DATA_JOBS) || job->user_id == uid) return true;
    if (&validate_operator != nullptr && validate_operator(uid)) return true;
    return compat::is_user_acct_coord(&acct_db_conn != nullptr ? acct_db_conn : nullptr, uid, job->account);
}

}  // namespace

extern "C" {

EXPLSCHED_EXPORT int init(void) {
    const int rc = rerank::init(rerank::Mode::priority);
    if (rc == SLURM_SUCCESS) verbose("%s loaded", plugin_name);
    return rc;
}

EXPLSCHED_EXPORT int fini(void) { return rerank::fini(); }

EXPLSCHED_EXPORT uint32_t priority_p_set(uint32_t last_prio, job_record_t* job_ptr) {
    (void)last_prio;
    return rerank::priority_at_submit(job_ptr);
}

EXPLSCHED_EXPORT void priority_p_reconfig(bool assoc_clear) {
    (void)assoc_clear;
    rerank::reconfig();
}

EXPLSCHED_EXPORT void priority_p_set_assoc_usage(slurmdb_assoc_rec_t* assoc) { (void)assoc; }

EXPLSCHED_EXPORT double priority_p_calc_fs_factor(long double usage_efctv, long double shares_norm) {
    // Fair-share is not ours to compute; the same answer priority/basic gives (used by sshare).
    if (shares_norm <= 0.0L) return 0.0;
    return static_cast<double>(std::pow(2.0L, -(usage_efctv / shares_norm)));
}

// Slurm 23.02+ asks for these two; 22.05 never calls them. Priorities are ours to set: no boost
// for recovered jobs (as priority/multifactor). The re-rank thread started in init and waits for
// slurmctld's job list itself.
EXPLSCHED_EXPORT uint32_t priority_p_recover(uint32_t prio_boost) {
    (void)prio_boost;
    return 0;
}

EXPLSCHED_EXPORT void priority_p_thread_start(void) {}

EXPLSCHED_EXPORT void priority_p_job_end(job_record_t* job_ptr) {
    // Slurm's bookkeeping, as priority/basic does it: return the unused part of the job's
    // reserved TRES-seconds to its QOS and associations. Not policy.
    try {
        if (&slurmctld_tres_cnt == nullptr || slurmctld_tres_cnt <= 0 || job_ptr->tres_alloc_cnt == nullptr)
            return;
        const uint64_t time_limit_secs = static_cast<uint64_t>(job_ptr->time_limit) * 60;
        std::vector<uint64_t> unused(static_cast<size_t>(slurmctld_tres_cnt), 0);
        for (int i = 0; i < slurmctld_tres_cnt; ++i)
            if (job_ptr->tres_alloc_cnt[i] != NO_CONSUME_VAL64)
                unused[static_cast<size_t>(i)] = job_ptr->tres_alloc_cnt[i] * time_limit_secs;
        assoc_mgr_lock_t levels = {NO_LOCK, WRITE_LOCK, NO_LOCK, WRITE_LOCK, NO_LOCK, NO_LOCK, NO_LOCK};
        shim::AssocMgrLocks locks(&levels);
        auto subtract = [&](uint64_t* used) {
            for (int i = 0; i < slurmctld_tres_cnt; ++i) {
                const size_t k = static_cast<size_t>(i);
                used[i] = unused[k] > used[i] ? 0 : used[i] - unused[k];
            }
        };
        if (job_ptr->qos_ptr != nullptr && job_ptr->qos_ptr->usage != nullptr)
            subtract(job_ptr->qos_ptr->usage->grp_used_tres_run_secs);
        for (slurmdb_assoc_rec_t* a = job_ptr->assoc_ptr; a != nullptr && a->usage != nullptr;
             a = a->usage->parent_assoc_ptr)
            subtract(a->usage->grp_used_tres_run_secs);
    } catch (...) {
    }
}

}  // extern "C"

namespace explsched::compat {

// sprio's answer: the pending jobs' stored factors, as uid may see them.
list_t* priority_factors_list(const FactorsRequest& request, uid_t uid) {
    try {
        if (job_list == nullptr) return nullptr;
        list_t* ret = factors_list_create();
        FactorsListLocks locks;
        list_itr_t* it = list_iterator_create(job_list);
        while (auto* job = static_cast<job_record_t*>(list_next(it))) {
            if (!IS_JOB_PENDING(job) || job->priority == 0 || job->prio_factors == nullptr) continue;
            if (job->part_ptr == nullptr) continue;
            if (!factors_visible(job, uid) || !request.wants(job)) continue;
            append_factors(ret, job);
        }
        list_iterator_destroy(it);
        return ret;
    } catch (...) {
        return nullptr;
    }
}

}  // namespace explsched::compat

EXPLSCHED_PRIORITY_FACTORS_ENTRY_POINT
