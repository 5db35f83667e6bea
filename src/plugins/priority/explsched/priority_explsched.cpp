// priority/explsched: the slurmctld shim. It copies each job's Slurm fields and its reported curve
// into the core's JobView, asks the engine for the round's assessments, and writes the answers
// back: the priority, the factors sprio prints, the SystemComment of trials, and the hopeless
// trials' requeue-and-hold or cancellation that the engine decided. No policy lives here.
//
// slurmctld calls priority_p_set only at submit, requeue and some updates, so a plugin thread
// re-ranks every job each period (as priority/multifactor's decay thread does). Lock order, to
// stay deadlock-free with priority_p_set (called with the job write lock held): slurmctld's locks
// first, then g_state.mutex.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/base/export.hpp"
#include "core/report/report_feed.hpp"
#include "core/report/report_store.hpp"
#include "core/sched/comment_refresh.hpp"
#include "core/sched/engine.hpp"
#include "core/sched/explore_spec.hpp"
#include "core/sched/gpu_count.hpp"
#include "core/sched/job_summary.hpp"
#include "core/sched/priority.hpp"
#include "core/sched/settings.hpp"

extern "C" {
#include "src/common/assoc_mgr.h"
#include "src/common/node_conf.h"
#include "src/common/slurm_priority.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
}

#include "plugins/slurmctld_shim.hpp"

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

struct HopelessAct {
    uint32_t job_id;
    Decision decision;
    std::string reason;
};

// What never changes in a job's record after submit (its --explore options, its TRES requests),
// parsed once: a round over 10,000 jobs must not re-parse 10,000 environments.
// Fields every round reads come first (one cache line with the entry's head).
struct JobStatic {
    bool exploratory = false;
    Direction direction = Direction::minimize;
    std::optional<HopelessAction> on_hopeless;
    double max_steps = 0.0;
    uint64_t gpus_per_job = 0, gpus_per_node = 0, gpus_per_task = 0;
    std::string group;  // "uid:GROUP"
    std::string trial;  // explore_trial_text
    std::vector<double> milestones;
};

constexpr time_t kPrunePeriod = 300;

// Everything the shim keeps about one job, in one node. A round over 10,000 jobs is bound by
// cache misses, not arithmetic: the walk finds a job's entry without hashing when the job sits
// where it sat last round, and what a round reads is packed at the front.
struct JobEntry {
    uint32_t job_id = 0;
    bool parsed = false;      // `st` filled from the record
    bool unreadable = false;  // its --explore options could not be read (logged once)
    uint64_t seen_round = 0;  // last round whose walk visited the job
    CommentMark mark;
    JobStatic st;
    std::vector<CurvePoint> curve;  // reported points, fed from the report store
};

struct State {
    std::mutex mutex;
    Settings settings;
    std::optional<Engine> engine;
    // By job id (an array task has its own job id).
    std::unordered_map<uint32_t, JobEntry> jobs;
    // Trials whose hopeless action was carried out: never twice (an owner may release a held one).
    std::unordered_set<uint32_t> acted;
    uint64_t round = 0;
    time_t last_prune = 0;
    // Reused every round.
    std::vector<job_record_t*> all;  // job_list in order
    // Last round's walk: position in job_list -> (record, its entry); entries listed here were
    // seen that round, so the prune (which drops only unseen ones) never leaves them dangling.
    std::vector<std::pair<const job_record_t*, JobEntry*>> last_walk, walk;
    std::vector<JobView> views;
    std::vector<job_record_t*> records;
    std::vector<JobEntry*> entries;
    std::vector<const std::string*> trials;
    std::vector<Assessment> out;
};
State g_state;

Result<Settings> read_settings() {
    const char* params = slurm_conf.priority_params;
    auto parsed = parse_settings(params != nullptr ? params : "", ",");
    if (!parsed) return make_error("PriorityParameters: " + parsed.error().message);
    return parsed;
}

// Called with g_state.mutex held.
Status apply_settings(Settings settings) {
    auto engine = Engine::create(settings.engine, {}, &g_log);
    if (!engine) return make_error("PriorityParameters: " + engine.error().message);
    g_state.engine.emplace(std::move(engine).value());
    g_state.settings = std::move(settings);
    return {};
}

// --- Slurm records -> core views -----------------------------------------------------------------

TrialKey trial_key(const job_record_t* job) { return TrialKey{job->job_id, job->array_task_id}; }

double eligible_since(const job_record_t* job) {
    if (job->details != nullptr && job->details->begin_time > 0)
        return static_cast<double>(job->details->begin_time);
    if (job->details != nullptr) return static_cast<double>(job->details->submit_time);
    return 0.0;
}

int32_t job_nice(const job_record_t* job) {
    return job->details != nullptr ? static_cast<int32_t>(job->details->nice) - NICE_OFFSET : 0;
}

// The job's entry with its static part parsed (on first sight); null when its --explore options
// cannot be read (logged once).
JobEntry* job_entry(const job_record_t* job, JobEntry* known = nullptr) {
    JobEntry& entry = known != nullptr ? *known : g_state.jobs[job->job_id];
    entry.job_id = job->job_id;
    if (entry.parsed) return &entry;
    if (entry.unreadable) return nullptr;
    auto spec = shim::job_explore_spec(job);
    if (!spec) {
        g_log.write(LogLevel::error, "job " + std::to_string(job->job_id) + ": " + spec.error().message);
        entry.unreadable = true;
        return nullptr;
    }
    JobStatic& st = entry.st;
    if (spec->exploratory()) {
        st.exploratory = true;
        // Groups are per user: two users' "lr" sweeps are different sweeps.
        st.group = std::to_string(job->user_id) + ":" + spec->group;
        st.trial = explore_trial_text(*spec);
        st.direction = spec->direction == MetricDirection::max ? Direction::maximize : Direction::minimize;
        st.max_steps = spec->max_steps ? static_cast<double>(*spec->max_steps) : 0.0;
        st.on_hopeless = spec->on_hopeless;
        st.milestones.assign(spec->milestones.begin(), spec->milestones.end());
    }
    st.gpus_per_job = tres_gpus(job->tres_per_job ? job->tres_per_job : "").count;
    st.gpus_per_node = tres_gpus(job->tres_per_node ? job->tres_per_node : "").count;
    st.gpus_per_task = tres_gpus(job->tres_per_task ? job->tres_per_task : "").count;
    entry.parsed = true;
    return &entry;
}

// Fills `view` (and `trial`, the text that describes a trial) from the record and answers the
// job's entry; null when the job's --explore options cannot be read (logged once).
JobEntry* job_view(const job_record_t* job, JobView& view, const std::string** trial = nullptr,
                   JobEntry* known = nullptr) {
    JobEntry* entry = job_entry(job, known);
    if (entry == nullptr) return nullptr;
    const JobStatic* st = &entry->st;
    view.key = trial_key(job);
    if (st->exploratory) {
        view.group = st->group;
        if (trial != nullptr) *trial = &st->trial;
        view.direction = st->direction;
        view.max_steps = st->max_steps;
        view.has_hopeless_action = st->on_hopeless.has_value();
        view.hopeless_action = st->on_hopeless.value_or(g_state.settings.engine.hopeless_action);
        view.milestones = st->milestones;
        if (!entry->curve.empty()) view.points = PointSpan(entry->curve);
    }
    const uint64_t nodes = IS_JOB_RUNNING(job)       ? job->node_cnt
                           : job->details != nullptr ? job->details->min_nodes
                                                     : 1;
    const uint64_t tasks = job->details != nullptr ? job->details->num_tasks : 1;
    const uint64_t gpus = job_gpus(st->gpus_per_job, st->gpus_per_node, st->gpus_per_task, nodes, tasks);
    view.gpus = static_cast<uint32_t>(std::clamp<uint64_t>(gpus, 1, UINT32_MAX));
    view.state = IS_JOB_RUNNING(job) ? JobState::running : JobState::pending;
    view.submit_time = eligible_since(job);
    view.start_time = IS_JOB_RUNNING(job) ? static_cast<double>(job->start_time) : 0.0;
    view.partition_factor = job->part_ptr != nullptr ? job->part_ptr->norm_priority : 0.0;
    view.nice = job_nice(job);
    return entry;
}

uint32_t cluster_gpus() {
    uint64_t total = 0;
    node_record_t* node = nullptr;
    for (int i = 0; (node = next_node(&i)); ++i)
        if (node->gres != nullptr) total += node_gpus(node->gres).count;
    return static_cast<uint32_t>(std::min<uint64_t>(total, UINT32_MAX));
}

void write_factors(job_record_t* job, const JobView& view, const Assessment& a, double now) {
    if (job->prio_factors == nullptr)
        job->prio_factors =
            static_cast<priority_factors_object_t*>(xmalloc(sizeof(priority_factors_object_t)));
    const PriorityTerms t = priority_terms(view, a, now, g_state.settings.engine);
    job->prio_factors->priority_age = t.age;
    job->prio_factors->priority_part = t.partition;
    // sprio's SITE column: the utility-versus-price term (ExplSched's own factor). Slurm stores
    // the site factor offset by NICE_OFFSET, as nice, so that it can be negative.
    job->prio_factors->priority_site =
        static_cast<uint32_t>(std::max(0.0, std::round(t.value))) + static_cast<uint32_t>(NICE_OFFSET);
    job->prio_factors->nice = static_cast<uint32_t>(view.nice + NICE_OFFSET);
}

// --- one round ----------------------------------------------------------------------------------

// Reads reports committed since the last round; runs without slurmctld's locks.
ReportFeed g_feed(&g_log);

// Brings the parts of a job record a round reads towards the cache.
inline void prefetch_record(const job_record_t* job) {
    __builtin_prefetch(&job->job_state);
    __builtin_prefetch(&job->priority);
    __builtin_prefetch(&job->details);
    __builtin_prefetch(&job->part_ptr);
    __builtin_prefetch(&job->prio_factors);
    __builtin_prefetch(&job->start_time);
    __builtin_prefetch(&job->system_comment);
}

// CPU time of the calling thread: with the wall time it tells the round's own cost from time the
// thread spent descheduled.
double thread_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// A test hook: with EXPLSCHED_TEST_THROW_IN_ROUND=N in slurmctld's environment (the admin's, no
// user's), round N throws std::bad_alloc inside the locked section, as an allocation failure in
// the walk or the engine would. testsuite/integration/test_rerank_throw.sh shows that slurmctld's
// locks are released and the next round runs. 0 (unset): never.
uint64_t g_throw_in_round = 0;

// Adds the reports committed since the last round to their jobs' curves (on explschedd's clock:
// a client cannot pick it).
void add_reports(const std::vector<StoredReport>& fresh) {
    for (const StoredReport& r : fresh)
        g_state.jobs[r.job_id].curve.push_back(curve_point(r, ReportClock::server));
}

// The round's inputs: a view of every pending (not held) and running job, with its record, its
// entry and its trial text, in job_list order. The list first (its nodes only), then the records
// with software prefetching: each job costs several dependent cache misses (record, details,
// entry) that would otherwise be taken one after another.
void walk_jobs(uint64_t round) {
    g_state.views.clear();
    g_state.records.clear();
    g_state.entries.clear();
    g_state.trials.clear();
    g_state.all.clear();
    ListIterator it = list_iterator_create(job_list);
    while (auto* job = static_cast<job_record_t*>(list_next(it))) g_state.all.push_back(job);
    list_iterator_destroy(it);
    const std::vector<job_record_t*>& all = g_state.all;
    std::vector<std::pair<const job_record_t*, JobEntry*>>& last = g_state.last_walk;
    g_state.walk.assign(all.size(), {nullptr, nullptr});
    constexpr std::size_t kAhead = 8;
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (i + 2 * kAhead < all.size()) prefetch_record(all[i + 2 * kAhead]);
        if (i + kAhead < all.size()) {
            const job_record_t* ahead = all[i + kAhead];
            if (ahead->details != nullptr) __builtin_prefetch(ahead->details);
            if (i + kAhead < last.size() && last[i + kAhead].first == ahead)
                __builtin_prefetch(last[i + kAhead].second);
        }
        job_record_t* job = all[i];
        const bool pending = IS_JOB_PENDING(job) && job->priority != 0;  // 0: held, not competing
        if (!pending && !IS_JOB_RUNNING(job)) continue;
        // Where it sat last round (the list keeps its order): the same record with the same id.
        JobEntry* known = i < last.size() && last[i].first == job && last[i].second->job_id == job->job_id
                              ? last[i].second
                              : nullptr;
        g_state.views.emplace_back();
        const std::string* trial = nullptr;
        JobEntry* entry = job_view(job, g_state.views.back(), &trial, known);
        if (entry == nullptr) {
            g_state.views.pop_back();
            continue;
        }
        entry->seen_round = round;
        g_state.walk[i] = {job, entry};
        g_state.records.push_back(job);
        g_state.entries.push_back(entry);
        g_state.trials.push_back(trial);
    }
    g_state.last_walk.swap(g_state.walk);
}

// Writes the engine's answers into the records: sprio's factors, trials' SystemComment, pending
// jobs' priority; collects the hopeless decisions not yet carried out. True when a priority changed.
bool write_back(time_t now, std::vector<HopelessAct>& acts) {
    const double load = g_state.engine->last_round().utilisation;
    bool changed = false;
    for (size_t i = 0; i < g_state.records.size(); ++i) {
        if (i + 16 < g_state.records.size()) __builtin_prefetch(&g_state.records[i + 16]->prio_factors);
        if (i + 8 < g_state.records.size()) {
            __builtin_prefetch(g_state.entries[i + 8]);
            if (g_state.records[i + 8]->prio_factors != nullptr)
                __builtin_prefetch(g_state.records[i + 8]->prio_factors, 1);
        }
        job_record_t* job = g_state.records[i];
        const JobView& view = g_state.views[i];
        const Assessment& a = g_state.out[i];
        write_factors(job, view, a, static_cast<double>(now));
        if (a.exploratory) {
            CommentMark& mark = g_state.entries[i]->mark;
            if (comment_due(mark, a.state, a.decision, view.points.size, now, job->job_id,
                            job->system_comment != nullptr)) {
                shim::set_system_comment(job, summary_line(a, load, *g_state.trials[i]));
                mark = CommentMark{now, a.state, a.decision, view.points.size};
            }
        }
        if (IS_JOB_PENDING(job) && !job->direct_set_prio && job->priority != a.priority) {
            job->priority = a.priority;
            changed = true;
        }
        if ((a.decision == Decision::terminate || a.decision == Decision::requeue_hold) &&
            g_state.acted.insert(job->job_id).second)
            acts.push_back({job->job_id, a.decision, explain(a)});
    }
    return changed;
}

// Carries out the engine's hopeless decisions, as scontrol cancel/requeue would. True when a job
// was acted on.
bool act_on_hopeless(const std::vector<HopelessAct>& acts) {
    bool changed = false;
    for (const HopelessAct& act : acts) {
        job_record_t* job = find_job_record(act.job_id);
        if (job == nullptr) continue;
        int rc = SLURM_SUCCESS;
        if (act.decision == Decision::terminate) {
            info("%s: cancelling hopeless job %u: %s", plugin_type, act.job_id, act.reason.c_str());
            rc = job_signal(job, SIGKILL, 0, 0, false);
        } else if (IS_JOB_RUNNING(job)) {
            info("%s: requeueing and holding hopeless job %u: %s", plugin_type, act.job_id,
                 act.reason.c_str());
            rc = job_requeue(0, act.job_id, nullptr, false, JOB_REQUEUE_HOLD);
        } else {
            info("%s: holding hopeless job %u: %s", plugin_type, act.job_id, act.reason.c_str());
            job->priority = 0;
            job->state_reason = WAIT_HELD;
            xfree(job->state_desc);
        }
        if (rc != SLURM_SUCCESS)
            error("%s: acting on hopeless job %u failed: %s", plugin_type, act.job_id, slurm_strerror(rc));
        changed = true;
    }
    return changed;
}

// Forgets the entries and actions of jobs slurmctld no longer knows. A job this round's walk
// visited is known; only the others (held, finished, reported but not queued) are looked up.
// Walking every entry costs a cache miss each, so stale entries are let to accumulate: the walk
// runs when they outnumber the visited ones (plus some slack), or every kPrunePeriod.
void prune_entries(time_t now, uint64_t round) {
    const bool crowded = g_state.jobs.size() > 2 * g_state.entries.size() + 1024;
    if (g_state.jobs.size() <= g_state.entries.size() ||
        (!crowded && now - g_state.last_prune < kPrunePeriod))
        return;
    g_state.last_prune = now;
    for (auto e = g_state.jobs.begin(); e != g_state.jobs.end();)
        e = e->second.seen_round != round && find_job_record(e->first) == nullptr ? g_state.jobs.erase(e)
                                                                                  : std::next(e);
    for (auto a = g_state.acted.begin(); a != g_state.acted.end();)
        a = find_job_record(*a) == nullptr ? g_state.acted.erase(a) : std::next(a);
}

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

void rerank_all() {
    std::string db;
    {
        std::lock_guard<std::mutex> lock(g_state.mutex);
        db = g_state.settings.report_db;
    }
    std::vector<StoredReport> fresh = g_feed.poll(db);

    // As scontrol requeue/cancel take them: they are what the hopeless actions need.
    shim::SlurmctldLocks locks(slurmctld_lock_t{READ_LOCK, WRITE_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK});
    // Time spent holding slurmctld's locks: what the rest of slurmctld waits for.
    const auto started = std::chrono::steady_clock::now();
    const double cpu_started = thread_cpu_ms();
    std::lock_guard<std::mutex> guard(g_state.mutex);
    add_reports(fresh);
    const uint64_t round = ++g_state.round;
    if (round == g_throw_in_round) throw std::bad_alloc();
    const time_t now = time(nullptr);
    walk_jobs(round);

    const auto walked = std::chrono::steady_clock::now();
    ClusterView cluster;
    cluster.now = static_cast<double>(now);
    cluster.total_gpus = cluster_gpus();
    if (Status st = g_state.engine->evaluate(g_state.views, cluster, g_state.out); !st) {
        g_log.write(LogLevel::error, "ranking round failed: " + st.error().message);
        return;
    }
    const auto evaluated = std::chrono::steady_clock::now();
    std::vector<HopelessAct> acts;
    bool changed = write_back(now, acts);
    changed = act_on_hopeless(acts) || changed;
    prune_entries(now, round);
    if (changed) last_job_update = now;
    const double ms = ms_between(started, std::chrono::steady_clock::now());
    const double cpu_ms = thread_cpu_ms() - cpu_started;
    const RoundSummary& summary = g_state.engine->last_round();
    locks.unlock();
    verbose(
        "%s: ranked %zu jobs (%zu trials, %zu refitted) in %.2f ms under the job lock (%.2f ms CPU; "
        "walk %.2f, engine %.2f, write-back %.2f); "
        "%zu new reports; load %.2f, price %.3g",
        plugin_type, g_state.views.size(), summary.trials, summary.fitted, ms, cpu_ms,
        ms_between(started, walked), ms_between(walked, evaluated), ms - ms_between(started, evaluated),
        fresh.size(), summary.utilisation, summary.price_now);
}

// --- the re-ranking thread -----------------------------------------------------------------------

std::mutex g_thread_mutex;
std::condition_variable g_thread_cv;
bool g_stop = false;
std::optional<std::thread> g_thread;

std::chrono::seconds rerank_period() {
    std::lock_guard<std::mutex> lock(g_state.mutex);
    const uint32_t configured = g_state.settings.rerank_period;
    return std::chrono::seconds(
        std::max<uint32_t>(1, configured != 0 ? configured : slurm_conf.priority_calc_period));
}

// One wait and one round; true when the plugin is stopping.
bool rerank_once() {
    const auto period = rerank_period();
    {
        std::unique_lock<std::mutex> lock(g_thread_mutex);
        if (g_thread_cv.wait_for(lock, period, [] { return g_stop; })) return true;
    }
    rerank_all();
    return false;
}

// The thread body. Nothing may leave it (an escaped exception terminates slurmctld); the round's
// locks are scoped, so a throw inside the round has released them and the next round runs.
void rerank_loop() {
    for (;;) {
        try {
            if (rerank_once()) return;
        } catch (const std::exception& e) {
            g_log.write(LogLevel::error, std::string("re-ranking failed: ") + e.what());
        } catch (...) {
            g_log.write(LogLevel::error, "re-ranking failed: unknown exception");
        }
    }
}

bool in_slurmctld() { return &job_list != nullptr && job_list != nullptr; }

// At submit or requeue, before any round has seen the job: the engine's last answer if it has one,
// else the rank of a job with no curve yet.
uint32_t provisional_priority(job_record_t* job) {
    JobView view;
    const std::string* trial = nullptr;
    if (!job_view(job, view, &trial)) return 1;
    if (g_state.engine) {
        if (const Assessment* a = g_state.engine->find(view.key)) return a->priority;
    }
    const EngineSettings& es = g_state.settings.engine;
    const double value = view.group.empty() ? es.nonexploratory_value : es.unknown_value;
    Assessment a = provisional_assessment(view, value, es);
    if (!view.group.empty() && trial != nullptr) shim::set_system_comment(job, summary_line(a, 0.0, *trial));
    return a.priority;
}

}  // namespace

extern "C" {

EXPLSCHED_EXPORT int init(void) {
    try {
        auto settings = read_settings();
        if (!settings) {
            error("%s: %s", plugin_type, settings.error().message.c_str());
            return SLURM_ERROR;
        }
        {
            std::lock_guard<std::mutex> lock(g_state.mutex);
            if (Status st = apply_settings(std::move(settings).value()); !st) {
                error("%s: %s", plugin_type, st.error().message.c_str());
                return SLURM_ERROR;
            }
        }
        if (const char* n = std::getenv("EXPLSCHED_TEST_THROW_IN_ROUND"); n != nullptr)
            g_throw_in_round = std::strtoull(n, nullptr, 10);
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
        std::lock_guard<std::mutex> lock(g_state.mutex);
        return provisional_priority(job_ptr);
    } catch (...) {
        return 1;  // lowest non-held priority: the job still runs, never blocks the queue
    }
}

EXPLSCHED_EXPORT void priority_p_reconfig(bool assoc_clear) {
    (void)assoc_clear;
    try {
        auto settings = read_settings();
        std::lock_guard<std::mutex> lock(g_state.mutex);
        Status st = settings ? apply_settings(std::move(settings).value()) : Status(settings.error());
        if (!st) error("%s: %s (keeping the previous settings)", plugin_type, st.error().message.c_str());
    } catch (...) {
    }
}

EXPLSCHED_EXPORT void priority_p_set_assoc_usage(slurmdb_assoc_rec_t* assoc) { (void)assoc; }

EXPLSCHED_EXPORT double priority_p_calc_fs_factor(long double usage_efctv, long double shares_norm) {
    // Fair-share is not ours to compute; the same answer priority/basic gives (used by sshare).
    if (shares_norm <= 0.0L) return 0.0;
    return static_cast<double>(std::pow(2.0L, -(usage_efctv / shares_norm)));
}

EXPLSCHED_EXPORT List priority_p_get_priority_factors_list(priority_factors_request_msg_t* req_msg,
                                                           uid_t uid) {
    (void)uid;
    try {
        List ret = list_create(slurm_destroy_priority_factors_object);
        auto matches = [](List wanted, uint32_t id) {
            return wanted == nullptr ||
                   list_find_first(
                       wanted,
                       [](void* x, void* key) -> int {
                           return *static_cast<uint32_t*>(x) == *static_cast<uint32_t*>(key);
                       },
                       &id) != nullptr;
        };
        shim::SlurmctldLocks locks(slurmctld_lock_t{NO_LOCK, READ_LOCK, READ_LOCK, READ_LOCK, NO_LOCK});
        ListIterator it = list_iterator_create(job_list);
        while (auto* job = static_cast<job_record_t*>(list_next(it))) {
            if (!IS_JOB_PENDING(job) || job->priority == 0 || job->prio_factors == nullptr) continue;
            if (job->part_ptr == nullptr) continue;
            if (req_msg != nullptr && !matches(req_msg->job_id_list, job->job_id)) continue;
            if (req_msg != nullptr && !matches(req_msg->uid_list, job->user_id)) continue;
            auto* obj = static_cast<priority_factors_object_t*>(xmalloc(sizeof(priority_factors_object_t)));
            slurm_copy_priority_factors_object(obj, job->prio_factors);
            if (job->direct_set_prio) obj->direct_prio = job->priority;
            obj->job_id = job->job_id;
            obj->partition = job->part_ptr->name;
            obj->user_id = job->user_id;
            list_append(ret, obj);
        }
        list_iterator_destroy(it);
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
