// priority/explsched: the slurmctld shim. It copies each job's Slurm fields into the core's plain
// structs, asks the core for the rank, and writes the answer back (priority, sprio factors,
// SystemComment). No policy lives here.
//
// slurmctld calls priority_p_set only at submit, requeue and some updates, so a plugin thread
// re-ranks every job each PriorityCalcPeriod, as priority/multifactor's decay thread does.
#include <atomic>
#include <cmath>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

#include "export.hpp"
#include <thread>

#include "common/config.hpp"
#include "common/explore_spec.hpp"
#include "common/rank_basic.hpp"

extern "C" {
#include "src/common/assoc_mgr.h"
#include "src/common/slurm_priority.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
}

#include "../../slurmctld_shim.hpp"

extern "C" {
EXPLSCHED_EXPORT extern const char plugin_name[] = "ExplSched priority plugin";
EXPLSCHED_EXPORT extern const char plugin_type[] = "priority/explsched";
EXPLSCHED_EXPORT extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;

// sshare and sprio load priority plugins outside slurmctld, where these do not exist: weak
// references resolve to NULL there instead of failing the load.
extern List job_list __attribute__((weak));
extern time_t last_job_update __attribute__((weak));
extern int slurmctld_tres_cnt __attribute__((weak));
}

namespace {

using namespace explsched;

shim::SlurmctldLogger g_log;

// Settings are replaced whole under the mutex (reconfigure), read by copy.
std::mutex g_settings_mutex;
Settings g_settings;

Settings current_settings() {
    std::lock_guard<std::mutex> lock(g_settings_mutex);
    return g_settings;
}

Status load_settings() {
    const char* params = slurm_conf.priority_params;
    auto parsed = parse_settings(params != nullptr ? params : "", ",");
    if (!parsed) return make_error("PriorityParameters: " + parsed.error().message);
    std::lock_guard<std::mutex> lock(g_settings_mutex);
    g_settings = std::move(parsed).value();
    return {};
}

// --- Slurm job record -> core facts --------------------------------------------------------------

JobFacts job_facts(const job_record_t* job, time_t now) {
    JobFacts f;
    if (job->details != nullptr) {
        const time_t begin = job->details->begin_time;
        if (begin > 0 && begin <= now) f.eligible_seconds = difftime(now, begin);
        f.nice = static_cast<int64_t>(job->details->nice) - NICE_OFFSET;
    }
    if (job->part_ptr != nullptr) f.partition_norm = job->part_ptr->norm_priority;
    return f;
}

// Writes the rank back: priority, the factors sprio prints, the SystemComment of trials.
uint32_t rank_job(job_record_t* job, const Settings& settings, time_t now) {
    const JobFacts facts = job_facts(job, now);
    const BasicRank rank = basic_rank(facts, settings);
    if (job->prio_factors == nullptr) job->prio_factors = static_cast<priority_factors_object_t*>(
        xmalloc(sizeof(priority_factors_object_t)));
    job->prio_factors->priority_age = settings.weight_age * rank.age_factor;
    job->prio_factors->priority_part = settings.weight_partition * rank.partition_factor;
    job->prio_factors->nice = static_cast<uint32_t>(facts.nice + NICE_OFFSET);

    auto spec = shim::job_explore_spec(job);
    if (!spec) {
        g_log.write(LogLevel::error, "job " + std::to_string(job->job_id) + ": " + spec.error().message);
    } else if (spec->exploratory()) {
        shim::set_system_comment(job, explore_comment(*spec));
    }
    return to_slurm_priority(rank.weighted, facts.nice);
}

// Held jobs (priority 0) and jobs an admin set by hand keep their priority.
bool keeps_priority(const job_record_t* job) { return job->direct_set_prio || job->priority == 0; }

// --- the re-ranking thread -----------------------------------------------------------------------

std::mutex g_thread_mutex;
std::condition_variable g_thread_cv;
bool g_stop = false;
std::optional<std::thread> g_thread;

void rerank_all() {
    // Write lock on jobs, read lock on nodes and partitions (as multifactor's decay thread).
    slurmctld_lock_t job_write_lock = {NO_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK, NO_LOCK};
    const Settings settings = current_settings();
    lock_slurmctld(job_write_lock);
    const time_t now = time(nullptr);
    bool changed = false;
    ListIterator it = list_iterator_create(job_list);
    while (auto* job = static_cast<job_record_t*>(list_next(it))) {
        if (!IS_JOB_PENDING(job) && !IS_JOB_RUNNING(job)) continue;
        const uint32_t prio = rank_job(job, settings, now);
        if (IS_JOB_PENDING(job) && !keeps_priority(job) && job->priority != prio) {
            job->priority = prio;
            changed = true;
        }
    }
    list_iterator_destroy(it);
    if (changed) last_job_update = now;
    unlock_slurmctld(job_write_lock);
}

void rerank_loop() {
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(g_thread_mutex);
            const uint32_t configured = current_settings().rerank_period;
            const auto period = std::chrono::seconds(
                std::max<uint32_t>(1, configured != 0 ? configured : slurm_conf.priority_calc_period));
            if (g_thread_cv.wait_for(lock, period, [] { return g_stop; })) return;
        }
        try {
            rerank_all();
        } catch (const std::exception& e) {
            g_log.write(LogLevel::error, std::string("re-ranking failed: ") + e.what());
        }
    }
}

bool in_slurmctld() { return &job_list != nullptr && job_list != nullptr; }

}  // namespace

extern "C" {

EXPLSCHED_EXPORT int init(void) {
    try {
        if (Status st = load_settings(); !st) {
            error("%s: %s", plugin_type, st.error().message.c_str());
            return SLURM_ERROR;
        }
        if (in_slurmctld()) {
            std::lock_guard<std::mutex> lock(g_thread_mutex);
            g_stop = false;
            g_thread.emplace(rerank_loop);
        }
        verbose("%s loaded", plugin_name);
        return SLURM_SUCCESS;
    } catch (const std::exception& e) {
        error("%s: init: %s", plugin_type, e.what());
        return SLURM_ERROR;
    }
}

EXPLSCHED_EXPORT int fini(void) {
    try {
        {
            std::lock_guard<std::mutex> lock(g_thread_mutex);
            g_stop = true;
        }
        g_thread_cv.notify_all();
        if (g_thread && g_thread->joinable()) g_thread->join();
        g_thread.reset();
        return SLURM_SUCCESS;
    } catch (...) {
        return SLURM_ERROR;
    }
}

EXPLSCHED_EXPORT uint32_t priority_p_set(uint32_t last_prio, job_record_t* job_ptr) {
    (void)last_prio;
    try {
        if (job_ptr->direct_set_prio && job_ptr->priority > 1) return job_ptr->priority;
        return rank_job(job_ptr, current_settings(), time(nullptr));
    } catch (...) {
        return 1;  // lowest non-held priority: the job still runs, never blocks the queue
    }
}

EXPLSCHED_EXPORT void priority_p_reconfig(bool assoc_clear) {
    (void)assoc_clear;
    try {
        if (Status st = load_settings(); !st)
            error("%s: %s (keeping the previous settings)", plugin_type, st.error().message.c_str());
    } catch (...) {
    }
}

EXPLSCHED_EXPORT void priority_p_set_assoc_usage(slurmdb_assoc_rec_t* assoc) { (void)assoc; }

EXPLSCHED_EXPORT double priority_p_calc_fs_factor(long double usage_efctv, long double shares_norm) {
    // Fair-share is not ours to compute; the same answer priority/basic gives (used by sshare).
    if (shares_norm <= 0.0L) return 0.0;
    return static_cast<double>(std::pow(2.0L, -(usage_efctv / shares_norm)));
}

EXPLSCHED_EXPORT List priority_p_get_priority_factors_list(priority_factors_request_msg_t* req_msg, uid_t uid) {
    (void)uid;
    try {
        slurmctld_lock_t job_read_lock = {NO_LOCK, READ_LOCK, READ_LOCK, READ_LOCK, NO_LOCK};
        List ret = list_create(slurm_destroy_priority_factors_object);
        lock_slurmctld(job_read_lock);
        ListIterator it = list_iterator_create(job_list);
        while (auto* job = static_cast<job_record_t*>(list_next(it))) {
            if (!IS_JOB_PENDING(job) || job->priority == 0 || job->prio_factors == nullptr) continue;
            if (job->part_ptr == nullptr) continue;
            if (req_msg != nullptr && req_msg->job_id_list != nullptr &&
                !list_find_first(req_msg->job_id_list,
                                 [](void* x, void* key) -> int {
                                     return *static_cast<uint32_t*>(x) == *static_cast<uint32_t*>(key);
                                 },
                                 &job->job_id))
                continue;
            if (req_msg != nullptr && req_msg->uid_list != nullptr &&
                !list_find_first(req_msg->uid_list,
                                 [](void* x, void* key) -> int {
                                     return *static_cast<uint32_t*>(x) == *static_cast<uint32_t*>(key);
                                 },
                                 &job->user_id))
                continue;
            auto* obj = static_cast<priority_factors_object_t*>(xmalloc(sizeof(priority_factors_object_t)));
            slurm_copy_priority_factors_object(obj, job->prio_factors);
            if (job->direct_set_prio) obj->direct_prio = job->priority;
            obj->job_id = job->job_id;
            obj->partition = job->part_ptr->name;
            obj->user_id = job->user_id;
            list_append(ret, obj);
        }
        list_iterator_destroy(it);
        unlock_slurmctld(job_read_lock);
        return ret;
    } catch (...) {
        return nullptr;
    }
}

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
        assoc_mgr_lock_t locks = {NO_LOCK, WRITE_LOCK, NO_LOCK, WRITE_LOCK, NO_LOCK, NO_LOCK, NO_LOCK};
        assoc_mgr_lock(&locks);
        auto subtract = [&](uint64_t* used) {
            for (int i = 0; i < slurmctld_tres_cnt; ++i) {
                const size_t k = static_cast<size_t>(i);
                used[i] = unused[k] > used[i] ? 0 : used[i] - unused[k];
            }
        };
        if (job_ptr->qos_ptr != nullptr && job_ptr->qos_ptr->usage != nullptr)
            subtract(job_ptr->qos_ptr->usage->grp_used_tres_run_secs);
        for (slurmdb_assoc_rec_t* a = job_ptr->assoc_ptr; a != nullptr; a = a->usage->parent_assoc_ptr) {
            if (a->usage == nullptr) break;
            subtract(a->usage->grp_used_tres_run_secs);
        }
        assoc_mgr_unlock(&locks);
    } catch (...) {
    }
}

}  // extern "C"
