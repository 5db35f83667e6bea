// The one place where the Slurm releases ExplSched supports differ: 22.05 (Debian 12) and 24.11
// (Debian 13). Every slurmctld shim includes Slurm's internal headers through this file and calls
// what it defines instead of testing SLURM_VERSION_NUMBER itself. The boundaries below are the
// releases that made each change (23.02 for all of them); only 22.05 and 24.11 are built and tested.
//
//   headers      22.05: src/common/slurm_priority.h, site_factor.h; src/slurmctld/preempt.h
//                23.02+: src/interfaces/priority.h, site_factor.h, preempt.h
//   lists        22.05: List, ListIterator (pointer typedefs); 23.02+: list_t, list_itr_t (structs).
//                Shims write list_t* and list_itr_t*.
//   job factors  job_record_t::prio_factors: 22.05 priority_factors_object_t*, 23.02+
//                priority_factors_t* (the object sprio receives wraps it): compat::job_factors.
//   sprio        22.05: priority_p_get_priority_factors_list(request, uid), the plugin takes the
//                locks and applies the request's job and user filters; 23.02+: (uid), called
//                with the job read lock and the QOS read lock held, sprio filters itself:
//                EXPLSCHED_PRIORITY_FACTORS_ENTRY_POINT, compat::FactorsListLocks,
//                compat::append_factors.
//   coordinator  assoc_mgr_is_user_acct_coord: 23.02+ takes whether the user lock is held.
//   array split  job_array_split(job): 24.11 adds whether the new record joins job_list
//                (compat::split_array_task).
// Slurm 23.02+ also looks up priority_p_recover and priority_p_thread_start; priority/explsched
// exports both on every release (22.05 never calls them).
#pragma once

#include <type_traits>

#include "core/base/export.hpp"

extern "C" {
#include <slurm/slurm_version.h>

#if __has_include("src/common/extra_constraints.h")
// 24.11's extra_constraints.h (read through slurmctld.h) names a struct field "operator", a C++
// keyword: renamed while that one header is read (same layout; no shim uses the field).
#include "src/common/data.h"  // its only include, read without the rename
#define operator operator_
#include "src/common/extra_constraints.h"
#undef operator
#endif

#include "src/common/assoc_mgr.h"
#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#include "src/interfaces/preempt.h"
#include "src/interfaces/priority.h"
#include "src/interfaces/site_factor.h"
#else
#include "src/common/site_factor.h"
#include "src/common/slurm_priority.h"
#include "src/slurmctld/preempt.h"
typedef struct xlist list_t;
typedef struct listIterator list_itr_t;
#endif
}

namespace explsched::compat {

inline constexpr bool kSlurm2302 = SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0);

// What a job record's prio_factors points to.
using job_factors_t = std::remove_pointer_t<decltype(job_record_t::prio_factors)>;

// The job's stored factors (sprio's columns), allocated zeroed the first time.
inline job_factors_t* job_factors(job_record_t* job) {
    if (job->prio_factors == nullptr)
        job->prio_factors = static_cast<job_factors_t*>(xmalloc(sizeof(job_factors_t)));
    return job->prio_factors;
}

// Whether uid coordinates the account (the caller holds no association manager user lock).
inline bool is_user_acct_coord(void* db_conn, uid_t uid, char* account) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
    return assoc_mgr_is_user_acct_coord(db_conn, uid, account, false);
#else
    return assoc_mgr_is_user_acct_coord(db_conn, uid, account);
#endif
}

// The job and user filters of an sprio request (none since 23.02: sprio filters itself).
struct FactorsRequest {
    list_t* job_ids = nullptr;  // of uint32_t; nullptr: every job
    list_t* uids = nullptr;     // of uint32_t; nullptr: every user

    bool wants(const job_record_t* job) const { return has(job_ids, job->job_id) && has(uids, job->user_id); }

private:
    static bool has(list_t* wanted, uint32_t id) {
        return wanted == nullptr || list_find_first(
                                        wanted,
                                        [](void* x, void* key) -> int {
                                            return *static_cast<uint32_t*>(x) == *static_cast<uint32_t*>(key);
                                        },
                                        &id) != nullptr;
    }
};

// The locks sprio's answer is built under: taken here on 22.05, already held by slurmctld since
// 23.02 (taking them again could deadlock behind a waiting writer).
class FactorsListLocks {
public:
    FactorsListLocks() {
        if (!kSlurm2302) lock_slurmctld(kLevels);
    }
    ~FactorsListLocks() {
        if (!kSlurm2302) unlock_slurmctld(kLevels);
    }
    FactorsListLocks(const FactorsListLocks&) = delete;
    FactorsListLocks& operator=(const FactorsListLocks&) = delete;

private:
    static constexpr slurmctld_lock_t kLevels{NO_LOCK, READ_LOCK, READ_LOCK, READ_LOCK, NO_LOCK};
};

// An empty list of sprio answers, with the destructor matching append_factors.
inline list_t* factors_list_create() { return list_create(slurm_destroy_priority_factors_object); }

// Appends the job's answer for sprio (the job has prio_factors and a partition).
inline void append_factors(list_t* list, job_record_t* job) {
    auto* obj = static_cast<priority_factors_object_t*>(xmalloc(sizeof(priority_factors_object_t)));
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
    obj->account = xstrdup(job->account);
    obj->partition = xstrdup(job->part_ptr->name);
    obj->qos = job->qos_ptr != nullptr ? xstrdup(job->qos_ptr->name) : nullptr;
    if (job->direct_set_prio) {
        obj->direct_prio = job->priority;  // and no factors, as sprio expects
    } else {
        obj->prio_factors = static_cast<priority_factors_t*>(xmalloc(sizeof(priority_factors_t)));
        slurm_copy_priority_factors(obj->prio_factors, job->prio_factors);
    }
#else
    slurm_copy_priority_factors_object(obj, job->prio_factors);
    if (job->direct_set_prio) obj->direct_prio = job->priority;
    obj->partition = job->part_ptr->name;  // not freed by 22.05's destructor
#endif
    obj->job_id = job->job_id;
    obj->user_id = job->user_id;
    list_append(list, obj);
}

// Defined by priority/explsched: sprio's answer (a list from factors_list_create) for uid.
list_t* priority_factors_list(const FactorsRequest& request, uid_t uid);

// node_name2bitmap(names, best_effort, &bitmap) gained a fourth argument (the names it could
// not resolve, may be null) after 22.05; chosen by the function's own type, not the version.
template <typename R, typename... A>
int node_names_bitmap_of(R (*f)(A...), char* names, bitstr_t** bitmap) {
    if constexpr (sizeof...(A) == 4)
        return f(names, false, bitmap, nullptr);
    else
        return f(names, false, bitmap);
}
inline int node_names_bitmap(char* names, bitstr_t** bitmap) {
    return node_names_bitmap_of(&node_name2bitmap, names, bitmap);
}

// Splits the job array's pending task `task` off its meta record `meta` as `scontrol update
// JobId=<array>_<task>` does (update_job_str): `meta` becomes that task, with a job id of its own
// and no accounting record yet (db_index 0: the next accounting pass sends its start); the answer
// is the new meta record, with the array's job id, the rest of its pending tasks, and a copy of
// everything else (job_list holds it). Where one task is left, the answer is that task, a plain
// task record. Needs the job write lock and the configuration, partition and federation read
// locks. Chosen by the function's own type: 24.11's takes whether the copy joins job_list.
template <typename R, typename... A>
job_record_t* split_array_task_of(R (*f)(A...), job_record_t* meta) {
    if constexpr (sizeof...(A) == 2)
        return f(meta, true);
    else
        return f(meta);
}
inline job_record_t* split_array_task(job_record_t* meta, uint32_t task) {
    meta->array_task_id = task;
    return split_array_task_of(&job_array_split, meta);
}

}  // namespace explsched::compat

// Expanded once, at file scope, by priority/explsched: sprio's entry point with the parameters of
// this release, forwarding to compat::priority_factors_list.
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#define EXPLSCHED_PRIORITY_FACTORS_ENTRY_POINT                                                         \
    extern "C" EXPLSCHED_EXPORT list_t* priority_p_get_priority_factors_list(uid_t uid) {              \
        return ::explsched::compat::priority_factors_list(::explsched::compat::FactorsRequest{}, uid); \
    }
#else
#define EXPLSCHED_PRIORITY_FACTORS_ENTRY_POINT                                \
    extern "C" EXPLSCHED_EXPORT list_t* priority_p_get_priority_factors_list( \
        priority_factors_request_msg_t* req, uid_t uid) {                     \
        ::explsched::compat::FactorsRequest request;                          \
        if (req != nullptr) request = {req->job_id_list, req->uid_list};      \
        return ::explsched::compat::priority_factors_list(request, uid);      \
    }
#endif
