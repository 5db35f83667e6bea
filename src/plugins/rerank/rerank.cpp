// The re-ranking driver of priority/explsched and site_factor/explsched (see rerank.hpp). It copies
// each job's Slurm fields into the core's JobView and attaches its reported curve (by job
// instance: id and submit time), asks the engine for the round's assessments, and writes the
// answers back: the priority and the factors sprio prints (priority mode) or the site factor
// (site_factor mode), the SystemComment of trials, and the hopeless trials' requeue-and-hold or
// cancellation that the engine decided. No policy lives here.
//
// slurmctld calls priority_p_set only at submit, requeue and some updates, so a plugin thread
// re-ranks every job each period (as priority/multifactor's decay thread does). slurmctld's locks
// are held only to copy the job list and to write answers back; reading the store, fitting and
// the engine run on that copy without them (see "one round" below). Lock order, to stay
// deadlock-free with priority_p_set and the site factor callbacks (called with the job write lock
// held): slurmctld's locks first, then g_state.mutex, which is only ever held briefly.
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/base/export.hpp"
#include "core/report/report_feed.hpp"
#include "core/report/report_store.hpp"
#include "core/sched/action_ledger.hpp"
#include "core/sched/comment_refresh.hpp"
#include "core/sched/engine.hpp"
#include "core/sched/explore_spec.hpp"
#include "core/sched/gpu_count.hpp"
#include "core/sched/gpu_types.hpp"
#include "core/sched/job_summary.hpp"
#include "core/sched/priority.hpp"
#include "core/sched/settings.hpp"
#include "core/sched/site_pin.hpp"
#include "core/sched/throughput_table.hpp"
#include "core/sched/trial_curves.hpp"

#include "plugins/slurm_compat.hpp"

extern "C" {
// Defined by the plugin this driver is linked into.
extern const char plugin_type[];
}

#include "plugins/report_catchup.hpp"
#include "plugins/rerank/net_place.hpp"
#include "plugins/rerank/rerank.hpp"
#include "plugins/rerank/site_lift.hpp"
#include "plugins/rerank/slurm_gpu_types.hpp"
#include "plugins/slurmctld_shim.hpp"

extern "C" {
// sshare and sprio load priority plugins outside slurmctld, where these do not exist: weak
// references resolve to NULL there instead of failing the load.
extern list_t* job_list __attribute__((weak));
extern time_t last_job_update __attribute__((weak));
extern time_t last_part_update __attribute__((weak));
}

namespace {

using namespace explsched;
using rerank::submit_of;

shim::SlurmctldLogger g_log;

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
    std::vector<double> lr_drops;          // --explore-lr-drops
    std::string model;                     // --explore-model
    GpuTypeId requested_gpu = kNoGpuType;  // the type its GPU request names
    // The request strings it was parsed from: `scontrol update job TresPerNode=` replaces them
    // (a new string, so a new pointer) and the job is parsed again.
    const char* tres_seen[3] = {nullptr, nullptr, nullptr};
};

constexpr time_t kPrunePeriod = 300;

// What the shim keeps about one job between rounds. Touched only under slurmctld's job lock (the
// walk, the write-back, priority_p_set) with g_state.mutex; only the re-ranking thread erases
// entries, so the pointers a round's snapshot holds stay valid until its write-back.
struct JobEntry {
    uint32_t job_id = 0;
    int64_t submit = 0;       // the instance the static part was parsed from
    bool parsed = false;      // `st` filled from the record
    bool unreadable = false;  // its --explore options could not be read (logged once)
    uint64_t seen_round = 0;  // last round whose walk visited the job
    uint32_t priority = 0;    // the last round's answer for this instance (0: none yet)
    // site_factor mode: the site factor last stored into the record, and whether an operator's
    // value is kept instead (core/sched/site_pin.hpp); of what was stored, the placement
    // planner's lift (net_place.hpp), taken off again when the job is requeued or no longer lifted.
    SitePinState site;
    uint32_t site_lift = 0;
    CommentMark mark;
    // GPU types: of the current run (looked up once per run) and of the run before the last
    // requeue (kept across it: the trial's speed was measured there).
    GpuTypeId run_gpu = kNoGpuType;
    time_t run_start = 0;
    GpuTypeId previous_gpu = kNoGpuType;
    // The round's snapshots point at it (the walk copies the raw pointer, no reference count: one
    // cache miss less per job) and build their views from it without slurmctld's locks, while
    // priority_p_set may replace the entry: a replaced one waits in State::retired until the next
    // round's walk.
    std::unique_ptr<const JobStatic> st;
    // Its final curve went to the engine (Engine::record_ended) once the instance ended.
    bool ended_recorded = false;
    bool grace_seen = false;  // ended during its preemption's grace: considered for a requeue once
};

// One job as the locked walk copied it: a compact record of the fields the round reads, so that
// the walk does no allocation per job; the round builds its JobView from it with slurmctld's locks
// released. `entry` is dereferenced only under the locks (write-back).
struct JobSnap {
    uint32_t job_id = 0;
    uint32_t array_task_id = 0;
    int64_t submit = 0;
    uint32_t uid = 0;
    uint32_t restarts = 0;
    bool running = false;
    bool has_comment = false;  // the record had a SystemComment at the walk
    bool pinned = false;       // site_factor mode: an operator's site factor is kept
    bool paused = false;       // held by our pause (the ledger says so, and the hold is still ours)
    uint32_t pauses = 0;       // times we paused it (the ledger)
    // slurmctld would requeue it (_job_requeue_op): a batch job not submitted with --no-requeue
    bool requeueable = true;
    // its job array (0: none), and whether the array runs at its task limit (pending only)
    uint32_t array_job_id = 0;
    bool throttled = false;
    int32_t nice = 0;
    uint64_t nodes = 1;
    uint64_t tasks = 1;
    double eligible = 0.0;
    double start_time = 0.0;
    double partition_factor = 0.0;
    CommentMark mark;               // the entry's, at the walk (only the re-ranking thread changes it)
    const JobStatic* st = nullptr;  // the entry's (kept alive by State::retired; see JobEntry)
    JobEntry* entry = nullptr;
    JobGpuFacts gpu;       // the types it requested / holds / held before (times filled later)
    GpuTypeChoice choice;  // what the round made of them (outside the locks)
};

// Frees an xmalloc'd string (a SystemComment prepared outside the locks, or the one it replaced).
struct XFree {
    void operator()(char* p) const { xfree(p); }
};
using XString = std::unique_ptr<char, XFree>;

// What the write-back stores into one job, all of it computed before the job write lock is taken.
struct JobAnswer {
    uint32_t priority = 0;
    bool paused = false;  // the record stays held: its priority is not written
    uint32_t site = 0;    // prio_factors->priority_site (offset by NICE_OFFSET)
    uint32_t nice = 0;    // prio_factors->nice (offset by NICE_OFFSET)
    double age = 0.0, partition = 0.0;
    bool comment_due = false;
    bool act = false;    // a hopeless decision to carry out (see HopelessAct)
    std::string reason;  // why (when act)
    CommentMark mark;    // the mark once `comment` is written
    XString comment;     // the new SystemComment (when comment_due)
};

// A job instance slurmctld knew at the walk (for pruning, outside the locks).
struct LiveJob {
    uint32_t job_id = 0;
    int64_t submit = 0;
    uint32_t uid = 0;
    bool requeued = false;  // restart count > 0
    friend bool operator<(const LiveJob& a, const LiveJob& b) { return a.job_id < b.job_id; }
};

// site_factor mode: one job's answer as the round published it for site_factor_update().
struct SiteAnswer {
    uint32_t job_id = 0;
    int64_t submit = 0;
    bool running = false;
    uint32_t site = 0;          // offset by NICE_OFFSET
    JobEntry* entry = nullptr;  // entries are erased only by site_factor_update itself in this mode
};

// An operator's site factor kept on a job instance (site_factor mode), as the ledger has it.
struct Pin {
    int64_t submit = 0;
    uint32_t uid = 0;
    uint32_t restarts = 0;
    int64_t when = 0;
};

// Shared with priority_p_set, the site factor callbacks, reconfigure and the factors list
// (g_state.mutex, held briefly).
struct State {
    std::mutex mutex;
    rerank::Mode mode = rerank::Mode::priority;
    Settings settings;
    uint64_t generation = 0;  // bumped whenever `settings` change
    // By job id (an array task has its own job id); the entry knows its instance.
    std::unordered_map<uint32_t, JobEntry> jobs;
    // Reused every round: job_list in order, and last round's walk: position in job_list ->
    // (record, its entry), so the walk finds an entry without hashing when the job sits where it
    // sat last round.
    std::vector<job_record_t*> all;
    std::vector<std::pair<const job_record_t*, JobEntry*>> last_walk, walk;
    // Parsed options of replaced entries, which the current round's snapshots may still point at:
    // freed when the next round starts (before its walk).
    std::vector<std::unique_ptr<const JobStatic>> retired;
    // GPU type names and the node and partition types (read under slurmctld's locks)
    shim::SlurmGpuTypes gpu_types;
    // throughput_table=, loaded with the settings (replaced only by a good one)
    std::shared_ptr<const ThroughputTable> throughputs = std::make_shared<const ThroughputTable>();
    // site_factor mode: the newest round's answers (replaced by each round, taken by
    // site_factor_update), and the operators' pins by job id (the thread saves them in the ledger
    // when `pins_changed`).
    std::vector<SiteAnswer> published;
    std::unordered_map<uint32_t, Pin> pins;
    bool pins_changed = false;
    uint64_t round = 0;  // the newest round's number (the walk's)
    time_t last_prune = 0;
};
State g_state;

// The re-ranking thread's own state: nothing else touches it (init and fini only while the thread
// is not running), so the engine round needs no lock at all.
struct Ranker {
    Settings settings;
    uint64_t generation = ~uint64_t{0};
    std::optional<Engine> engine;
    TrialCurves curves;
    ReportCatchUp feed{&g_log};
    ActionLedger ledger;
    std::string ledger_path;  // empty: not persisted (no StateSaveLocation)
    // Destructive actions wait until the feed has caught up with the store and a round has fitted
    // every curve that changed (no trial left waiting for its refit).
    bool settled = false;
    bool said_settled = false;
    uint64_t round = 0;
    time_t last_prune = 0;
    std::vector<JobSnap> snaps;
    std::vector<JobView> views;
    // exploratory jobs that ended since their last round, for Engine::record_ended
    std::vector<JobSnap> ended;
    std::vector<JobView> ended_views;
    std::vector<JobSnap> in_grace;  // trials that ended during a preemption's grace (requeued)
    std::vector<JobView> in_grace_views;
    std::vector<Assessment> out;
    std::vector<JobAnswer> answers;  // per snap: what the write-back stores
    std::vector<LiveJob> live;       // every job in job_list at the walk, sorted by id
    // paused jobs whose hold someone else released or replaced (the walk's), with their restarts
    std::vector<LiveJob> unpaused;
    std::vector<uint32_t> unpaused_restarts;
    std::shared_ptr<const ThroughputTable> throughputs = std::make_shared<const ThroughputTable>();
    GpuTypeNames gpu_names;  // a copy of State::gpu_types' names, kept in step at each walk
};
Ranker g_ranker;

bool site_mode() { return g_state.mode == rerank::Mode::site_factor; }  // set once, at init

// The slurm.conf key our settings come from.
const char* params_key() { return site_mode() ? "PrioritySiteFactorParameters" : "PriorityParameters"; }

Result<Settings> read_settings() {
    const char* params = site_mode() ? slurm_conf.site_factor_params : slurm_conf.priority_params;
    auto parsed = parse_settings(params != nullptr ? params : "", ",");
    if (!parsed) return make_error(std::string(params_key()) + ": " + parsed.error().message);
    // The engine's own checks, now: a bad line is refused at start (and kept out on reconfigure).
    if (auto engine = Engine::create(parsed->engine); !engine)
        return make_error(std::string(params_key()) + ": " + engine.error().message);
    return parsed;
}

// throughput_table= of `settings` (an empty table when none is named); errors name the key
// and the file.
Result<std::shared_ptr<const ThroughputTable>> read_throughputs(const Settings& settings) {
    if (settings.throughput_table.empty()) return std::make_shared<const ThroughputTable>();
    auto table = ThroughputTable::load_gavel_file(settings.throughput_table);
    if (!table) return make_error(std::string(params_key()) + ": throughput_table=" + table.error().message);
    return std::make_shared<const ThroughputTable>(std::move(table).value());
}

// Called with g_state.mutex held.
void apply_settings(Settings settings, std::shared_ptr<const ThroughputTable> throughputs) {
    g_state.settings = std::move(settings);
    g_state.throughputs = std::move(throughputs);
    g_state.gpu_types.invalidate();  // a reconfigure may have changed nodes and partitions
    ++g_state.generation;
}

// --- Slurm records -> core views -----------------------------------------------------------------

double eligible_since(const job_record_t* job) {
    if (job->details != nullptr && job->details->begin_time > 0)
        return static_cast<double>(job->details->begin_time);
    if (job->details != nullptr) return static_cast<double>(job->details->submit_time);
    return 0.0;
}

int32_t job_nice(const job_record_t* job) {
    return job->details != nullptr ? static_cast<int32_t>(job->details->nice) - NICE_OFFSET : 0;
}

// The job's entry with its static part parsed (on first sight of this instance); null when its
// --explore options cannot be read (logged once). Called with g_state.mutex held.
JobEntry* job_entry(const job_record_t* job, JobEntry* known = nullptr) {
    JobEntry& entry = known != nullptr ? *known : g_state.jobs[job->job_id];
    const int64_t submit = submit_of(job);
    if (entry.job_id != job->job_id || entry.submit != submit) {
        // A new instance (a reused id), or this job requeued (a new submit time): parse again; a
        // requeued job keeps its comment mark and the GPU type its curve was measured on.
        const bool requeued = entry.job_id == job->job_id && job->restart_cnt > 0;
        const CommentMark mark = requeued ? entry.mark : CommentMark{};
        const uint32_t site_written = requeued ? entry.site.written : 0;
        const uint32_t site_lift = requeued ? entry.site_lift : 0;
        const GpuTypeId previous = !requeued                     ? kNoGpuType
                                   : entry.run_gpu != kNoGpuType ? entry.run_gpu
                                                                 : entry.previous_gpu;
        if (entry.st) g_state.retired.push_back(std::move(entry.st));
        entry = JobEntry{};
        entry.job_id = job->job_id;
        entry.submit = submit;
        entry.mark = mark;
        entry.site.written = site_written;
        entry.site_lift = site_lift;
        entry.previous_gpu = previous;
        // an operator's site factor on this job (as the ledger had it at start, or since)
        if (auto p = g_state.pins.find(job->job_id); p != g_state.pins.end()) {
            const Pin& pin = p->second;
            if (pin.uid == job->user_id &&
                (pin.submit == submit || (pin.submit < submit && job->restart_cnt > pin.restarts))) {
                entry.site.pinned = true;
                entry.site.pinned_at = pin.when;
            }
        }
    }
    if (entry.parsed && IS_JOB_PENDING(job) &&
        (entry.st->tres_seen[0] != job->tres_per_node || entry.st->tres_seen[1] != job->tres_per_job ||
         entry.st->tres_seen[2] != job->tres_per_task)) {
        g_state.retired.push_back(std::move(entry.st));  // its request was updated: parse again
        entry.parsed = false;
    }
    if (entry.parsed) return &entry;
    if (entry.unreadable) return nullptr;
    auto spec = shim::job_explore_spec(job);
    if (!spec) {
        g_log.write(LogLevel::error, "job " + std::to_string(job->job_id) + ": " + spec.error().message);
        entry.unreadable = true;
        return nullptr;
    }
    JobStatic st;
    if (spec->exploratory()) {
        st.exploratory = true;
        st.group = shim::job_sweep(job, *spec);
        st.trial = explore_trial_text(*spec);
        st.direction = spec->direction == MetricDirection::max ? Direction::maximize : Direction::minimize;
        st.max_steps = spec->max_steps ? static_cast<double>(*spec->max_steps) : 0.0;
        st.on_hopeless = spec->on_hopeless;
        st.milestones.assign(spec->milestones.begin(), spec->milestones.end());
        st.lr_drops.assign(spec->lr_drops.begin(), spec->lr_drops.end());
        st.model = spec->model;
    }
    st.requested_gpu = g_state.gpu_types.requested_type(job);
    st.tres_seen[0] = job->tres_per_node;
    st.tres_seen[1] = job->tres_per_job;
    st.tres_seen[2] = job->tres_per_task;
    st.gpus_per_job = tres_gpus(job->tres_per_job ? job->tres_per_job : "").count;
    st.gpus_per_node = tres_gpus(job->tres_per_node ? job->tres_per_node : "").count;
    st.gpus_per_task = tres_gpus(job->tres_per_task ? job->tres_per_task : "").count;
    entry.st = std::make_unique<const JobStatic>(std::move(st));
    entry.parsed = true;
    return &entry;
}

// The GPU types of `job` a round needs (the rule is the core's: choose_gpu_types). A running
// job's type is looked up once per run; a pending job without a typed request gets its
// partition's types (cached per partition). Called with slurmctld's locks and g_state.mutex held.
void gpu_facts_of(const job_record_t* job, JobEntry* entry, JobGpuFacts& f) {
    if (!entry->st->exploratory) return;
    f.running = IS_JOB_RUNNING(job);
    f.requested = entry->st->requested_gpu;
    f.previous = entry->previous_gpu;
    if (f.running) {
        if (entry->run_start != job->start_time) {
            entry->run_gpu = g_state.gpu_types.held_type(job);
            entry->run_start = job->start_time;
        }
        f.allocated = entry->run_gpu;
    } else if (f.requested == kNoGpuType) {
        f.offered = g_state.gpu_types.partition_types(job->part_ptr);
    }
}

// A pending task of a job array whose running tasks fill its task limit (sbatch --array=...%N):
// slurmctld will not start it before one of them ends, as job_array_start_test (job_mgr.c) says.
// Called with slurmctld's job lock held.
bool array_throttled(const job_record_t* job) {
    if (IS_JOB_RUNNING(job) || (job->array_task_id == NO_VAL && job->array_recs == nullptr)) return false;
    const job_record_t* base = find_job_record(job->array_job_id);
    return base != nullptr && base->array_recs != nullptr && base->array_recs->max_run_tasks != 0 &&
           base->array_recs->tot_run_tasks >= base->array_recs->max_run_tasks;
}

// The compact record of `job` (its entry parsed). Called with slurmctld's job lock and
// g_state.mutex held; allocates nothing.
JobSnap snap_of(const job_record_t* job, JobEntry* entry) {
    JobSnap s;
    s.job_id = job->job_id;
    s.array_task_id = job->array_task_id;
    s.submit = submit_of(job);
    s.uid = job->user_id;
    s.restarts = job->restart_cnt;
    s.running = IS_JOB_RUNNING(job);
    s.requeueable = job->batch_flag != 0 && job->details != nullptr && job->details->requeue != 0;
    s.array_job_id = job->array_task_id != NO_VAL || job->array_recs != nullptr ? job->array_job_id : 0;
    s.throttled = s.array_job_id != 0 && array_throttled(job);
    s.has_comment = job->system_comment != nullptr;
    s.nice = job_nice(job);
    s.nodes = s.running ? job->node_cnt : job->details != nullptr ? job->details->min_nodes : 1;
    s.tasks = job->details != nullptr ? job->details->num_tasks : 1;
    s.eligible = eligible_since(job);
    s.start_time = s.running ? static_cast<double>(job->start_time) : 0.0;
    s.partition_factor = job->part_ptr != nullptr ? job->part_ptr->norm_priority : 0.0;
    s.pinned = entry->site.pinned;
    s.mark = entry->mark;
    s.st = entry->st.get();
    s.entry = entry;
    gpu_facts_of(job, entry, s.gpu);
    return s;
}

// Fills `view` (all but its points) from a job's compact record; needs no lock.
void view_of(const JobSnap& s, JobView& view, const EngineSettings& es) {
    const JobStatic* st = s.st;
    view.key = TrialKey{s.job_id, s.array_task_id};
    view.owner = s.uid;
    if (st->exploratory) {
        view.group = st->group;
        view.direction = st->direction;
        view.max_steps = st->max_steps;
        view.has_hopeless_action = st->on_hopeless.has_value();
        view.hopeless_action = st->on_hopeless.value_or(es.hopeless_action);
        view.milestones = st->milestones;
        view.lr_drops = st->lr_drops;
    }
    const uint64_t gpus = job_gpus(st->gpus_per_job, st->gpus_per_node, st->gpus_per_task, s.nodes, s.tasks);
    view.gpus = static_cast<uint32_t>(std::clamp<uint64_t>(gpus, 1, UINT32_MAX));
    view.state = s.running ? JobState::running : JobState::pending;
    view.paused = s.paused;
    view.pauses = s.pauses;
    view.requeueable = s.requeueable;
    view.array_job_id = s.array_job_id;
    view.throttled = s.throttled;
    view.submit_time = s.eligible;
    view.start_time = s.start_time;
    view.partition_factor = s.partition_factor;
    view.nice = s.nice;
}

uint32_t cluster_gpus() {
    uint64_t total = 0;
    node_record_t* node = nullptr;
    for (int i = 0; (node = next_node(&i)); ++i)
        if (node->gres != nullptr) total += node_gpus(node->gres).count;
    return static_cast<uint32_t>(std::min<uint64_t>(total, UINT32_MAX));
}

// The factors sprio prints, computed outside the locks.
void answer_factors(JobAnswer& ans, const JobView& view, const Assessment& a, double now,
                    const EngineSettings& es) {
    const PriorityTerms t = priority_terms(view, a, now, es);
    ans.priority = a.priority;
    ans.age = t.age;
    ans.partition = t.partition;
    // sprio's SITE column: the utility-versus-price term (ExplSched's own factor). Slurm stores
    // the site factor offset by NICE_OFFSET, as nice, so that it can be negative.
    ans.site = static_cast<uint32_t>(std::max(0.0, std::round(t.value))) + static_cast<uint32_t>(NICE_OFFSET);
    ans.nice = static_cast<uint32_t>(view.nice + NICE_OFFSET);
}

// Under the job write lock: stores precomputed factors (no formatting, one allocation the first
// time only).
void write_factors(job_record_t* job, const JobAnswer& ans) {
    compat::job_factors_t* f = compat::job_factors(job);
    f->priority_age = ans.age;
    f->priority_part = ans.partition;
    f->priority_site = ans.site;
    f->nice = ans.nice;
}

// --- one round ----------------------------------------------------------------------------------
//
// A round never fits a curve or runs the engine under slurmctld's locks:
//   1. read_reports   (no lock)        the store's new rows, in a bounded chunk, into the curves;
//   2. walk_jobs      (read locks)     every pending and running job copied into plain structs;
//   3. evaluate       (no lock)        curves attached by job instance, the engine's round;
//   4. write_back     (job write lock) priorities, factors, comments, each job looked up again
//                                      by id and checked to be the same instance in the same
//                                      state (it may have ended or changed since the walk);
//   5. act            (no lock, then the job write lock) hopeless trials: recorded in the action
//                                      ledger on disk first, then held, requeued or cancelled.

// Brings the parts of a job record the walk reads towards the cache.
inline void prefetch_record(const job_record_t* job) {
    __builtin_prefetch(&job->job_state);
    __builtin_prefetch(&job->priority);
    __builtin_prefetch(&job->details);
    __builtin_prefetch(&job->part_ptr);
    __builtin_prefetch(&job->start_time);
    __builtin_prefetch(&job->job_id);
    __builtin_prefetch(&job->user_id);
    __builtin_prefetch(&job->restart_cnt);
    __builtin_prefetch(&job->node_cnt);
    __builtin_prefetch(&job->system_comment);
}

// CPU time of the calling thread: with the wall time it tells the round's own cost from time the
// thread spent descheduled.
double thread_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// A test hook: with EXPLSCHED_TEST_THROW_IN_ROUND=N in slurmctld's environment (the admin's, no
// user's), round N throws std::bad_alloc inside the locked write-back, as an allocation failure
// there would. testsuite/hostile/hostile_rank_throw_under_lock.sh shows that slurmctld's locks are
// released and the next round runs. 0 (unset): never.
uint64_t g_throw_in_round = 0;

// Takes the settings reconfigure published (a new engine: every fit starts afresh).
void sync_settings(Ranker& r) {
    std::lock_guard<std::mutex> lock(g_state.mutex);
    if (r.generation == g_state.generation && r.engine) return;
    auto engine = Engine::create(g_state.settings.engine, *g_state.throughputs, &g_log);
    if (!engine) {  // read_settings checked them: not expected
        g_log.write(LogLevel::error, std::string(params_key()) + ": " + engine.error().message);
        return;
    }
    r.engine.emplace(std::move(engine).value());
    r.settings = g_state.settings;
    r.throughputs = g_state.throughputs;
    r.generation = g_state.generation;
    r.curves.set_max_points(r.settings.max_curve_points);
}

// Adds the store's reports committed since the last round (a bounded chunk) to their instances'
// curves, on explschedd's clock (a client cannot pick it). Answers the rows read.
std::size_t read_reports(Ranker& r) {
    ReportCatchUp::Batch batch = r.feed.poll(r.settings.report_db, r.settings.feed_chunk);
    if (batch.reset) {
        r.curves.clear();
        r.settled = false;
    }
    for (const StoredReport& rep : batch.rows)
        r.curves.add(rep.job_id, rep.job_submit, rep.uid, curve_point(rep, ReportClock::server));
    if (!r.feed.caught_up()) r.settled = false;
    return batch.rows.size();
}

// Requeue-and-hold leaves this reason and text; `scontrol hold` by an operator sets WAIT_HELD, and
// a user's hold after a release clears the text: then the hold is no longer ours to release.
bool hold_is_ours(const job_record_t* job) {
    return job->priority == 0 && job->state_reason == WAIT_HELD_USER &&
           (job->state_desc == nullptr || std::strcmp(job->state_desc, "job requeued in held state") == 0);
}

// A pending job the ledger says we paused: `paused` when the hold is still ours. Released by
// someone else (or re-held by an operator): the pause is over, noted for the ledger (r.unpaused),
// and the job is ranked as any other. Returns true when the walk should skip the job (held, not by
// us). Called under slurmctld's read locks.
bool pause_state(Ranker& r, const job_record_t* job, bool& paused) {
    const LedgerEntry* e =
        r.ledger.latest(JobInstance{job->job_id, submit_of(job)}, job->user_id, job->restart_cnt);
    if (e == nullptr || e->action != LedgerAction::paused) return job->priority == 0;
    if (hold_is_ours(job)) {
        paused = true;
        return false;
    }
    r.unpaused.push_back(LiveJob{job->job_id, submit_of(job), job->user_id, job->restart_cnt > 0});
    r.unpaused_restarts.push_back(job->restart_cnt);
    return job->priority == 0;
}

// Step 2, under slurmctld's read locks: a view of every pending (not held) and running job, with
// its instance and entry, in job_list order; and the list of every job instance slurmctld knows
// (sorted by the caller once the locks are released).
// The list first (its nodes only), then the records with software prefetching: each job costs
// several dependent cache misses (record, details, entry) that would otherwise be taken one after
// another.
// slurmctld's locks, held for at most kLockChunk jobs at a time: the walk and the write-back each
// take them again for every chunk, so an RPC or the main scheduler waiting on the job lock waits
// at most one chunk (about 0.5 ms at 10,000 jobs), not the whole walk. Slurm's list iterators are
// kept valid across the gaps (list.c moves an iterator off a node it removes; job_list is never
// sorted), and whatever changes in a gap is checked at write-back, as anything that changes
// between the walk and the write-back is.
constexpr std::size_t kLockChunk = 1024;

// The holds of one round: their total, the longest one, their CPU time and the time spent waiting
// for the locks.
struct Holds {
    double total_ms = 0.0, longest_ms = 0.0, cpu_ms = 0.0, wait_ms = 0.0;
    unsigned count = 0;
};

// Runs `body` under slurmctld's `locks`, counting the hold into `h` (from the moment the locks
// are granted; the wait for them is counted apart).
template <typename Body>
void hold_locks(slurmctld_lock_t locks, Holds& h, Body&& body) {
    const auto asked = std::chrono::steady_clock::now();
    shim::SlurmctldLocks held(locks);
    const auto granted = std::chrono::steady_clock::now();
    const double cpu0 = thread_cpu_ms();
    struct Count {  // counted on the way out, an exception's included
        Holds& h;
        std::chrono::steady_clock::time_point asked, granted;
        double cpu0;
        ~Count() {
            const double ms = ms_between(granted, std::chrono::steady_clock::now());
            h.wait_ms += ms_between(asked, granted);
            h.total_ms += ms;
            h.longest_ms = std::max(h.longest_ms, ms);
            h.cpu_ms += thread_cpu_ms() - cpu0;
            ++h.count;
        }
    } count{h, asked, granted, cpu0};
    body();
}

// job_list's iterator for one walk, destroyed however the walk ends (list_iterator_destroy takes
// only the list's own mutex).
struct JobListIterator {
    list_itr_t* it = nullptr;
    JobListIterator() = default;
    JobListIterator(const JobListIterator&) = delete;
    JobListIterator& operator=(const JobListIterator&) = delete;
    ~JobListIterator() {
        if (it != nullptr) list_iterator_destroy(it);
    }
};

// An exploratory job that ended (completed, cancelled, failed, timed out) and whose final curve
// has not gone to the engine yet: its snapshot, once per instance. Waits for a round whose feed
// has caught up with the store, so that every point it reported is in. Called under the walk's
// locks and g_state.mutex.
void note_ended(Ranker& r, const job_record_t* job) {
    auto it = g_state.jobs.find(job->job_id);
    if (it != g_state.jobs.end() && it->second.job_id == job->job_id && it->second.submit == submit_of(job) &&
        (it->second.ended_recorded || it->second.unreadable ||
         (it->second.parsed && !it->second.st->exploratory)))
        return;
    JobEntry* entry = job_entry(job);
    if (entry == nullptr || !entry->st->exploratory) return;
    entry->ended_recorded = true;
    r.ended.push_back(snap_of(job, entry));
}

// A batch job that ended by itself (completed, or failed) after its preemption had begun but
// before the grace expired: slurmctld sent its steps SIGTERM at once, and a trial that checkpoints
// and exits on it ends its job, which PreemptMode=REQUEUE does not requeue (a job still running
// when the grace expires is requeued). preempt_time is set when the preemption begins and cleared
// when the job is requeued; a job cancelled by its owner or an operator is not one.
bool ended_in_grace(const job_record_t* job) {
    if (job->preempt_time == 0 || job->batch_flag == 0 || job->details == nullptr ||
        job->details->requeue == 0)
        return false;
    const uint32_t base = job->job_state & JOB_STATE_BASE;
    if (base != JOB_COMPLETE && base != JOB_FAILED) return false;
    const part_record_t* part = job->part_ptr;
    const uint16_t mode =
        part != nullptr && part->preempt_mode != NO_VAL16 ? part->preempt_mode : slurm_conf.preempt_mode;
    return (mode & ~PREEMPT_MODE_GANG & ~PREEMPT_MODE_WITHIN) == PREEMPT_MODE_REQUEUE;
}

// Such a job, if it is a trial: its snapshot, once per instance, for the requeue (step 5). True
// when taken (its curve is not final, so it does not go to the engine as ended).
bool note_in_grace(Ranker& r, const job_record_t* job) {
    JobEntry* entry = job_entry(job);
    if (entry == nullptr || !entry->st->exploratory || entry->grace_seen) return false;
    entry->grace_seen = true;
    r.in_grace.push_back(snap_of(job, entry));
    return true;
}

// One chunk of the walk (slurmctld's read locks held): up to kLockChunk more jobs of job_list
// copied into the round's snapshots. `index` is the position in job_list so far. True when the
// list is done.
bool walk_chunk(Ranker& r, JobListIterator& iter, std::size_t& index) {
    std::lock_guard<std::mutex> guard(g_state.mutex);
    if (iter.it == nullptr) {
        g_state.round = r.round;
        g_state.gpu_types.refresh(&last_part_update != nullptr ? last_part_update : 0);
        g_state.walk.clear();
        if (job_list == nullptr) return true;  // 24.11 makes it after loading the plugins
        iter.it = list_iterator_create(job_list);
    }
    std::vector<job_record_t*>& all = g_state.all;
    all.clear();
    while (all.size() < kLockChunk)
        if (auto* job = static_cast<job_record_t*>(list_next(iter.it)))
            all.push_back(job);
        else
            break;
    const bool done = all.size() < kLockChunk;
    std::vector<std::pair<const job_record_t*, JobEntry*>>& last = g_state.last_walk;
    constexpr std::size_t kAhead = 8;
    for (std::size_t i = 0; i < all.size(); ++i, ++index) {
        if (i + 2 * kAhead < all.size()) prefetch_record(all[i + 2 * kAhead]);
        if (i + kAhead < all.size()) {
            const job_record_t* ahead = all[i + kAhead];
            if (ahead->details != nullptr) __builtin_prefetch(ahead->details);
            if (index + kAhead < last.size() && last[index + kAhead].first == ahead)
                __builtin_prefetch(last[index + kAhead].second);
        }
        job_record_t* job = all[i];
        g_state.walk.emplace_back(nullptr, nullptr);
        r.live.push_back(LiveJob{job->job_id, submit_of(job), job->user_id, job->restart_cnt > 0});
        const bool pending = IS_JOB_PENDING(job) && job->priority != 0;  // 0: held, not competing
        bool paused = false;
        if (IS_JOB_PENDING(job) && !r.ledger.entries().empty() && pause_state(r, job, paused)) continue;
        if (!pending && !paused && !IS_JOB_RUNNING(job)) {
            if (IS_JOB_FINISHED(job) && ended_in_grace(job) && note_in_grace(r, job)) continue;
            if (IS_JOB_FINISHED(job) && r.feed.caught_up()) note_ended(r, job);
            continue;
        }
        // Where it sat last round (the list keeps its order): the same record with the same id.
        JobEntry* known =
            index < last.size() && last[index].first == job && last[index].second->job_id == job->job_id
                ? last[index].second
                : nullptr;
        JobEntry* entry = job_entry(job, known);
        if (entry == nullptr || entry->seen_round == r.round) continue;  // unreadable, or seen already
        entry->seen_round = r.round;
        g_state.walk.back() = {job, entry};
        r.snaps.push_back(snap_of(job, entry));
        JobSnap& snap = r.snaps.back();
        snap.paused = paused;
        if (!r.ledger.entries().empty())
            snap.pauses = r.ledger.pauses(JobInstance{snap.job_id, snap.submit}, snap.uid, snap.restarts);
    }
    if (done) {
        g_state.last_walk.swap(g_state.walk);
        r.gpu_names.catch_up(g_state.gpu_types.names());  // new names only (rare)
    }
    return done;
}

// Step 2: every pending and running job copied, a chunk at a time under read locks (the job
// list, node GPUs, partitions); the cluster's GPUs counted in the last chunk.
void walk_jobs(Ranker& r, ClusterView& cluster, Holds& h) {
    JobListIterator iter;
    std::size_t index = 0;
    for (bool done = false; !done;)
        hold_locks(slurmctld_lock_t{READ_LOCK, READ_LOCK, READ_LOCK, READ_LOCK, NO_LOCK}, h, [&] {
            done = walk_chunk(r, iter, index);
            if (done) cluster.total_gpus = cluster_gpus();
        });
}

const LiveJob* find_live(const Ranker& r, uint32_t job_id) {
    auto it = std::lower_bound(r.live.begin(), r.live.end(), LiveJob{job_id, 0, 0, false});
    return it != r.live.end() && it->job_id == job_id ? &*it : nullptr;
}

// Forgets the curves and ledger entries of job instances slurmctld no longer knows (as of the
// walk), outside the locks. Every kPrunePeriod, or when curves outnumber the walk's jobs.
void prune(Ranker& r, time_t now) {
    const bool crowded = r.curves.instances() > 2 * r.snaps.size() + 1024;
    if (!crowded && now - r.last_prune < kPrunePeriod) return;
    r.last_prune = now;
    r.curves.retain([&](uint32_t job_id, int64_t submit) {
        const LiveJob* j = find_live(r, job_id);
        // legacy rows (0), this instance, or one before a requeue of it
        return j != nullptr && (submit == 0 || submit == j->submit || (j->requeued && submit < j->submit));
    });
    const bool dropped = r.ledger.retain([&](const JobInstance& job, const LedgerEntry& e) {
        const LiveJob* j = find_live(r, job.job_id);
        return j != nullptr && j->uid == e.uid && j->submit >= job.submit;
    });
    if (dropped && !r.ledger_path.empty()) {
        if (Status st = r.ledger.save(r.ledger_path); !st) g_log.write(LogLevel::error, st.error().message);
    }
}

// The GPU type a trial is valued on and the one its speed was measured on (the core's rule), and
// its throughput-table row; without locks.
void gpu_types_of(Ranker& r, JobSnap& s, JobView& view) {
    JobGpuFacts& f = s.gpu;
    f.start_time = s.start_time;
    f.last_point_time = view.points.size > 0 && std::isfinite(view.points[view.points.size - 1].wall_time)
                            ? view.points[view.points.size - 1].wall_time
                            : -1.0;
    s.choice = choose_gpu_types(f, s.st->model, view.gpus, *r.throughputs, r.gpu_names);
    view.gpu_type = r.gpu_names.name(s.choice.valued_on);
    view.measured_gpu_type = r.gpu_names.name(s.choice.measured_on);
    view.job_type = s.st->model;
}

// Step 3: the views from the walk's records, each with its instance's curve (a requeued job's
// earlier runs included).
void attach_curves(Ranker& r) {
    r.views.resize(r.snaps.size());
    r.ended_views.resize(r.ended.size());
    r.in_grace_views.resize(r.in_grace.size());
    for (std::size_t i = 0; i < r.snaps.size(); ++i) view_of(r.snaps[i], r.views[i], r.settings.engine);
    // the trials that ended: their final curves (earlier runs included), nothing else needed
    for (std::size_t i = 0; i < r.ended.size(); ++i) view_of(r.ended[i], r.ended_views[i], r.settings.engine);
    for (std::size_t i = 0; i < r.in_grace.size(); ++i)
        view_of(r.in_grace[i], r.in_grace_views[i], r.settings.engine);
    // Every requeued trial's earlier runs first, live and ended alike: a curve handed out is valid
    // only until the next adopt_earlier (TrialCurves), so none is read before the last.
    const auto each_trial = [](std::vector<JobSnap>& snaps, std::vector<JobView>& views, auto&& f) {
        for (std::size_t i = 0; i < snaps.size(); ++i)
            if (!views[i].group.empty()) f(snaps[i], views[i]);
    };
    const auto adopt = [&r](const JobSnap& s, JobView&) {
        if (s.restarts > 0) r.curves.adopt_earlier(s.job_id, s.submit, s.uid);
    };
    const auto attach = [&r](const JobSnap& s, JobView& v) { v.points = r.curves.curve(s.job_id, s.submit); };
    each_trial(r.snaps, r.views, adopt);
    each_trial(r.ended, r.ended_views, adopt);
    each_trial(r.in_grace, r.in_grace_views, adopt);
    each_trial(r.snaps, r.views, [&](JobSnap& s, JobView& v) {
        attach(s, v);
        gpu_types_of(r, s, v);
    });
    each_trial(r.ended, r.ended_views, attach);
    each_trial(r.in_grace, r.in_grace_views, attach);
    // They go to the engine as pending trials (after the snapshots' views, which the answers
    // index): absent, it would retire them as ended, and the requeued trial would lead its sweep
    // against its own first run (protect_leader).
    r.views.insert(r.views.end(), r.in_grace_views.begin(), r.in_grace_views.end());
}

// What the act step does to one job: a hopeless trial's stop, a pause (requeue and hold, the
// hold recorded as ours), or the release of a paused trial's hold.
enum class ActKind { stop, pause, resume };

struct HopelessAct {
    JobSnap job;
    Decision decision;
    std::string reason;
    ActKind kind = ActKind::stop;
};

ActKind act_kind(const JobSnap& s, Decision d) {
    if (s.paused) return d == Decision::run ? ActKind::resume : ActKind::stop;
    return d == Decision::pause ? ActKind::pause : ActKind::stop;
}

// Whether the round's decision for `s` is one the act step carries out (the rule is the core's;
// this is only which decisions change a job record): stops and pauses of jobs not acted on yet,
// and the resume or stop of a job we paused.
bool wants_act(const Ranker& r, const JobSnap& s, Decision d) {
    if (!r.settled) return false;
    if (s.paused) return d == Decision::run || d == Decision::terminate || d == Decision::requeue_hold;
    const bool stop = d == Decision::terminate || d == Decision::requeue_hold;
    const bool pause = d == Decision::pause && s.running;
    return (stop || pause) && !r.ledger.acted(JobInstance{s.job_id, s.submit}, s.uid, s.restarts);
}

// Step 3 (end), without locks: everything the write-back stores, computed and formatted now so
// that the write-back only compares and swaps: the factors, the SystemComment of each trial whose
// line is due (an xmalloc'd string the record will own), and the hopeless decisions to act on.
void prepare_answers(Ranker& r, time_t now) {
    const double load = r.engine->last_round().utilisation;
    r.answers.resize(r.snaps.size());
    for (std::size_t i = 0; i < r.snaps.size(); ++i) {
        const JobSnap& s = r.snaps[i];
        const JobView& view = r.views[i];
        const Assessment& a = r.out[i];
        JobAnswer& ans = r.answers[i];
        answer_factors(ans, view, a, static_cast<double>(now), r.settings.engine);
        // what the line says of GPU types: the two types and how the speed was scaled
        const uint32_t gpu = s.choice.valued_on | static_cast<uint32_t>(s.choice.measured_on) << 8 |
                             static_cast<uint32_t>(a.gpu_value.how) << 16;
        // the rule the line names, which preempt/explsched decides on; not for a paused trial (it
        // neither preempts nor is preempted): its line keeps the verdict that paused it, which
        // `explsched why` quotes, until the periodic refresh
        const ReasonCode rule = a.decision == Decision::pause ? ReasonCode::nonexploratory : a.reason.code;
        ans.comment_due = a.exploratory && comment_due(s.mark, a.state, a.decision, view.points.size, now,
                                                       s.job_id, s.has_comment, gpu, rule);
        if (ans.comment_due) {
            std::string line = summary_line(a, load, s.st->trial);
            // the reason runs to the end of the line: the note becomes part of it
            if (s.pinned) line += "; site factor: an operator's, kept (site_factor_hold)";
            // a trial we paused and that runs again says so as long as it lives (`explsched why`)
            if (s.pauses > 0 && !s.paused)
                line += "; resumed from pause (paused " + std::to_string(s.pauses) +
                        "x, restarted from its checkpoint)";
            // a multi-node trial's placement (net_place.cpp keeps it; last, so it can be replaced)
            if (const std::string note = rerank::placement_note(s.job_id); !note.empty()) line += "; " + note;
            ans.comment.reset(xstrdup(line.c_str()));
            ans.mark = CommentMark{now, a.state, a.decision, view.points.size, gpu, rule};
        }
        ans.paused = s.paused;
        ans.act = wants_act(r, s, a.decision);
        if (ans.act) ans.reason = explain(a);
    }
}

// Under the job write lock: the prepared SystemComment into the record, by pointer, unless it
// already says the same; the replaced one stays in `ans.comment`, freed after the locks.
void swap_in_comment(job_record_t* job, JobAnswer& ans) {
    if (job->system_comment != nullptr && std::strcmp(job->system_comment, ans.comment.get()) == 0) return;
    char* old = job->system_comment;
    job->system_comment = ans.comment.release();
    ans.comment.reset(old);
}

// Step 4, under the job write lock: the prepared answers into the records that are still the
// instance the walk saw, in the state it saw; collects the hopeless decisions to carry out. A
// SystemComment is swapped in by pointer (the replaced one stays in `ans.comment`, freed after the
// locks are released) and not written when the record already says the same.
// Answers whether a priority changed, and counts the jobs skipped. Stores snapshots [from, to):
// one chunk (kLockChunk) per hold of the job write lock.
bool write_back(Ranker& r, std::size_t from, std::size_t to, std::vector<HopelessAct>& acts,
                std::size_t& skipped) {
    std::lock_guard<std::mutex> guard(g_state.mutex);
    bool changed = false;
    for (std::size_t i = from; i < to; ++i) {
        const JobSnap& s = r.snaps[i];
        job_record_t* job = find_job_record(s.job_id);
        if (job == nullptr || submit_of(job) != s.submit || IS_JOB_RUNNING(job) != s.running ||
            (!IS_JOB_RUNNING(job) && (!IS_JOB_PENDING(job) || (job->priority == 0) != s.paused))) {
            ++skipped;  // ended, requeued, held, released, started or replaced since the walk
            continue;
        }
        JobAnswer& ans = r.answers[i];
        write_factors(job, ans);
        s.entry->priority = ans.priority;
        if (ans.comment_due) {
            swap_in_comment(job, ans);
            s.entry->mark = ans.mark;
        }
        // a job the last placement round placed before a higher one keeps its raised priority
        const uint32_t want = std::max(ans.priority, rerank::placement_lift(s.job_id));
        if (IS_JOB_PENDING(job) && !ans.paused && !job->direct_set_prio && job->priority != want) {
            job->priority = want;
            changed = true;
        }
        if (ans.act)
            acts.push_back({s, r.out[i].decision, std::move(ans.reason), act_kind(s, r.out[i].decision)});
    }
    return changed;
}

// Step 5: every act is first recorded in the ledger on disk (a crash after it leaves the job
// un-acted-on, never acted on twice, and a paused job's hold known as ours), then carried out as
// scontrol cancel/requeue/hold/release would, on the record looked up again by id and instance.
// True when a job was acted on.
LedgerAction ledger_action(const HopelessAct& act) {
    switch (act.kind) {
        case ActKind::pause:
            return LedgerAction::paused;
        case ActKind::resume:
            return LedgerAction::resumed;
        case ActKind::stop:
            break;
    }
    if (act.decision == Decision::terminate) return LedgerAction::cancelled;
    return act.job.running ? LedgerAction::requeued_held : LedgerAction::held;
}

void record_acts(Ranker& r, const std::vector<HopelessAct>& acts, time_t now) {
    for (const HopelessAct& act : acts) {
        const JobInstance job{act.job.job_id, act.job.submit};
        const LedgerAction what = ledger_action(act);
        if (act.job.paused) {
            // a paused job's entry changes (resumed, cancelled, held for good)
            r.ledger.update(job, act.job.uid, act.job.restarts, what, static_cast<int64_t>(now));
        } else {
            r.ledger.record(job, LedgerEntry{what, static_cast<int64_t>(now), act.job.uid, act.job.restarts});
        }
    }
}

// As `scontrol release` does (_release_job_rec in slurmctld), under the job write lock.
void release_hold(job_record_t* job, time_t now) {
    if (job->details != nullptr && job->details->begin_time < now) job->details->begin_time = 0;
    job->direct_set_prio = 0;
    set_job_prio(job);
    job->state_reason = WAIT_NO_REASON;
    job->job_state &= ~static_cast<uint32_t>(JOB_SPECIAL_EXIT);
    xfree(job->state_desc);
    job->exit_code = 0;
}

// One act on a record that is still the instance, in the state, the round saw.
int carry_out(const HopelessAct& act, job_record_t* job, time_t now) {
    const uint32_t id = act.job.job_id;
    if (act.kind == ActKind::pause) {
        info("%s: pausing job %u (requeue and hold with its checkpoint): %s", plugin_type, id,
             act.reason.c_str());
        return job_requeue(0, id, nullptr, false, JOB_REQUEUE_HOLD);
    }
    if (act.kind == ActKind::resume) {
        info("%s: resuming paused job %u (releasing our hold): %s", plugin_type, id, act.reason.c_str());
        release_hold(job, now);
        return SLURM_SUCCESS;
    }
    if (act.decision == Decision::terminate) {
        info("%s: cancelling %s job %u: %s", plugin_type, act.job.paused ? "paused" : "hopeless", id,
             act.reason.c_str());
        return job_signal(job, SIGKILL, 0, 0, false);
    }
    if (act.job.paused) {
        info("%s: paused job %u stays held for good (its owner may release it): %s", plugin_type, id,
             act.reason.c_str());
        return SLURM_SUCCESS;
    }
    if (IS_JOB_RUNNING(job)) {
        info("%s: requeueing and holding hopeless job %u: %s", plugin_type, id, act.reason.c_str());
        return job_requeue(0, id, nullptr, false, JOB_REQUEUE_HOLD);
    }
    info("%s: holding hopeless job %u: %s", plugin_type, id, act.reason.c_str());
    job->priority = 0;
    job->state_reason = WAIT_HELD;
    xfree(job->state_desc);
    return SLURM_SUCCESS;
}

// An act on a running job that was requeued between the round's walk and the act: a preemption
// took it (preempt/explsched lets a trial to be paused, or a hopeless one, be preempted: the
// round's SystemComment says so before the act), and with no grace (grace_for) the requeue came
// first. It is the same trial, pending once more with one restart more and not held: the act is
// carried out on it as it would have been on the running job - a pause or a stop's
// requeue-and-hold holds it as _job_requeue_op in slurmctld would have left it (so a pause's hold
// is ours to release, hold_is_ours), a cancel cancels it (job_signal stops a requeue in progress)
// - and the ledger entry just recorded is true. Without this a pause was lost, and a hopeless
// trial the ledger says was stopped would run again.
bool requeued_since_walk(const HopelessAct& act, const job_record_t* job) {
    return act.kind != ActKind::resume && act.job.running && job->user_id == act.job.uid &&
           job->array_task_id == act.job.array_task_id && IS_JOB_PENDING(job) && job->priority != 0 &&
           job->restart_cnt == act.job.restarts + 1 && submit_of(job) >= act.job.submit;
}

void hold_as_requeue_hold(job_record_t* job) {
    job->state_reason = WAIT_HELD_USER;
    xfree(job->state_desc);
    job->state_desc = xstrdup("job requeued in held state");
    job->priority = 0;
}

int carry_out_requeued(const HopelessAct& act, job_record_t* job) {
    const uint32_t id = act.job.job_id;
    const char* const since = "a preemption requeued it since the round";
    if (act.kind == ActKind::pause) {
        info("%s: pausing job %u (requeue and hold with its checkpoint; %s: held now): %s", plugin_type, id,
             since, act.reason.c_str());
    } else if (act.decision == Decision::terminate) {
        info("%s: cancelling hopeless job %u (%s): %s", plugin_type, id, since, act.reason.c_str());
        return job_signal(job, SIGKILL, 0, 0, false);
    } else {
        info("%s: requeueing and holding hopeless job %u (%s: held now): %s", plugin_type, id, since,
             act.reason.c_str());
    }
    hold_as_requeue_hold(job);
    return SLURM_SUCCESS;
}

bool act_on_hopeless(Ranker& r, const std::vector<HopelessAct>& acts, time_t now) {
    const ActionLedger before = r.ledger;  // what an act not carried out is rolled back to
    record_acts(r, acts, now);
    if (!r.ledger_path.empty()) {
        if (Status st = r.ledger.save(r.ledger_path); !st) {
            // Without the record a restart could act again on a job whose owner undid it.
            g_log.write(LogLevel::error, st.error().message + " (no trial acted on this round)");
            r.ledger = before;
            return false;
        }
    }
    // Acts skipped (the job changed since the walk) or refused by slurmctld: their entries are
    // rolled back, or a pause never carried out would count against pause_max and keep the job
    // from being acted on again.
    std::vector<uint32_t> undone;
    bool changed = false;
    {
        shim::SlurmctldLocks locks(slurmctld_lock_t{READ_LOCK, WRITE_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK});
        for (const HopelessAct& act : acts) {
            job_record_t* job = find_job_record(act.job.job_id);
            const bool requeued = job != nullptr && requeued_since_walk(act, job);
            if (!requeued) {
                if (job == nullptr || submit_of(job) != act.job.submit ||
                    IS_JOB_RUNNING(job) != act.job.running ||
                    (!IS_JOB_RUNNING(job) &&
                     (!IS_JOB_PENDING(job) || (act.job.paused ? !hold_is_ours(job) : job->priority == 0)))) {
                    undone.push_back(act.job.job_id);
                    continue;
                }
            }
            const int rc = requeued ? carry_out_requeued(act, job) : carry_out(act, job, now);
            if (rc != SLURM_SUCCESS) {
                error("%s: acting on job %u failed: %s (not recorded as acted on)", plugin_type,
                      act.job.job_id, slurm_strerror(rc));
                undone.push_back(act.job.job_id);
            }
            changed = true;
        }
        if (changed) last_job_update = now;
    }
    if (!undone.empty()) {
        for (uint32_t id : undone) r.ledger.restore_job(before, id);
        if (!r.ledger_path.empty())
            if (Status st = r.ledger.save(r.ledger_path); !st)
                g_log.write(LogLevel::error, st.error().message);
    }
    return changed;
}

// Step 5 too: the trials that ended during their preemption's grace (ended_in_grace) are
// requeued, as they would have been had they run until it expired, and resume later from their
// checkpoint; but not one whose curve reached its --explore-max-steps (it finished its training).
// As `scontrol requeue` does for a finished batch job, under the job write lock, on the record
// looked up again by id and instance.
void requeue_ended_in_grace(Ranker& r, time_t now) {
    std::vector<const JobSnap*> due;
    for (std::size_t i = 0; i < r.in_grace.size(); ++i) {
        const JobSnap& s = r.in_grace[i];
        const PointSpan points = r.in_grace_views[i].points;  // the same spans as the views the engine read
        const double last = points.empty() ? 0.0 : points[points.size - 1].step;
        if (s.st->max_steps > 0 && last >= s.st->max_steps) {
            info("%s: job %u ended during its preemption's grace at step %g of %g: finished, not requeued",
                 plugin_type, s.job_id, last, s.st->max_steps);
            continue;
        }
        due.push_back(&s);
    }
    if (due.empty()) return;
    shim::SlurmctldLocks locks(slurmctld_lock_t{READ_LOCK, WRITE_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK});
    for (const JobSnap* s : due) {
        job_record_t* job = find_job_record(s->job_id);
        if (job == nullptr || submit_of(job) != s->submit || !IS_JOB_FINISHED(job) || !ended_in_grace(job))
            continue;
        info(
            "%s: requeueing job %u: it ended (%s, exit %d) %lld s into its preemption's grace of %u s, as if "
            "it had "
            "run until the grace expired",
            plugin_type, s->job_id, job_state_string(job->job_state),
            WIFEXITED(job->exit_code) ? WEXITSTATUS(job->exit_code) : -1,
            static_cast<long long>(job->end_time - job->preempt_time), r.settings.grace_time);
        const int rc = job_requeue(0, s->job_id, nullptr, true, 0);
        if (rc != SLURM_SUCCESS)
            error("%s: requeueing job %u failed: %s", plugin_type, s->job_id, slurm_strerror(rc));
        else
            last_job_update = now;
    }
}

// The pauses someone else ended (released the hold, or replaced it): the ledger says resumed, so
// the job is never released by us, and may be acted on again. Outside slurmctld's locks.
void note_unpaused(Ranker& r, time_t now) {
    if (r.unpaused.empty()) return;
    for (std::size_t i = 0; i < r.unpaused.size(); ++i) {
        const LiveJob& j = r.unpaused[i];
        info(
            "%s: job %u: the hold of its pause was released or replaced by its owner or an operator; "
            "no longer ours",
            plugin_type, j.job_id);
        r.ledger.update(JobInstance{j.job_id, j.submit}, j.uid, r.unpaused_restarts[i], LedgerAction::resumed,
                        static_cast<int64_t>(now));
    }
    r.unpaused.clear();
    r.unpaused_restarts.clear();
    if (r.ledger_path.empty()) return;
    if (Status st = r.ledger.save(r.ledger_path); !st) g_log.write(LogLevel::error, st.error().message);
}

// Forgets the entries of jobs slurmctld no longer knows (as of the walk). Under slurmctld's
// locks at write-back (priority_p_set uses the entries), only every kPrunePeriod or when stale
// entries outnumber the walked ones.
void prune_entries(Ranker& r, time_t now) {
    std::lock_guard<std::mutex> guard(g_state.mutex);
    static time_t last = 0;
    const bool crowded = g_state.jobs.size() > 2 * r.snaps.size() + 1024;
    if (g_state.jobs.size() <= r.snaps.size() || (!crowded && now - last < kPrunePeriod)) return;
    last = now;
    for (auto e = g_state.jobs.begin(); e != g_state.jobs.end();) {
        const bool known = e->second.seen_round == r.round || find_live(r, e->first) != nullptr;
        e = known ? std::next(e) : g_state.jobs.erase(e);
    }
    // the walk hints may point at erased entries
    g_state.last_walk.clear();
}

// --- site_factor mode ----------------------------------------------------------------------------
//
// The round publishes its answers; site_factor_update() (priority/multifactor's decay thread,
// under the job write lock) stores them. An operator's `scontrol update job SiteFactor=` is kept:
// a job whose site factor differs from the one we last stored has been set by hand, and is
// "pinned" (logged, shown in its SystemComment, recorded in the action ledger so that a restart
// keeps it) for site_factor_hold seconds, or for the rest of the job's life when that is 0.

// Step 4 in site_factor mode, without slurmctld's locks: the site factors for
// site_factor_update() (replacing any it has not taken yet), and the hopeless decisions to act
// on now. Answers how many SystemComments are due.
std::size_t publish_site_answers(Ranker& r, std::vector<HopelessAct>& acts) {
    std::vector<SiteAnswer> out;
    out.reserve(r.snaps.size());
    std::size_t comments = 0;
    for (std::size_t i = 0; i < r.snaps.size(); ++i) {
        const JobSnap& s = r.snaps[i];
        JobAnswer& ans = r.answers[i];
        out.push_back(SiteAnswer{s.job_id, s.submit, s.running, ans.site, s.entry});
        comments += ans.comment_due ? 1 : 0;
        if (ans.act)
            acts.push_back({s, r.out[i].decision, std::move(ans.reason), act_kind(s, r.out[i].decision)});
    }
    std::lock_guard<std::mutex> guard(g_state.mutex);
    g_state.published.swap(out);
    return comments;
}

// Step 4 in site_factor mode, under the job write lock, only when some are due: the trials'
// SystemComments (`explsched why` and preempt/explsched read them; they must not wait for
// multifactor's next cycle).
void write_comments(Ranker& r) {
    std::lock_guard<std::mutex> guard(g_state.mutex);
    for (std::size_t i = 0; i < r.snaps.size(); ++i) {
        JobAnswer& ans = r.answers[i];
        if (!ans.comment_due) continue;
        const JobSnap& s = r.snaps[i];
        job_record_t* job = find_job_record(s.job_id);
        if (job == nullptr || submit_of(job) != s.submit) continue;
        swap_in_comment(job, ans);
        s.entry->mark = ans.mark;
    }
}

// The pins site_factor_update() noticed, into the ledger on disk (outside slurmctld's locks).
void save_pins(Ranker& r) {
    std::unordered_map<uint32_t, Pin> pins;
    {
        std::lock_guard<std::mutex> guard(g_state.mutex);
        if (!g_state.pins_changed) return;
        g_state.pins_changed = false;
        pins = g_state.pins;
    }
    std::vector<JobInstance> gone;
    for (const auto& [job, e] : r.ledger.pins())
        if (auto p = pins.find(job.job_id); p == pins.end() || p->second.submit != job.submit)
            gone.push_back(job);
    for (const JobInstance& job : gone) r.ledger.unpin(job);
    for (const auto& [id, p] : pins) r.ledger.pin(JobInstance{id, p.submit}, p.uid, p.restarts, p.when);
    if (r.ledger_path.empty()) return;
    if (Status st = r.ledger.save(r.ledger_path); !st) g_log.write(LogLevel::error, st.error().message);
}

// Whether the job's site factor is an operator's, now (called with g_state.mutex held, under the
// job write lock): the rule of core/sched/site_pin.hpp, with its pins kept for the ledger.
bool operator_site_factor(job_record_t* job, JobEntry& e, time_t now) {
    const uint32_t hold = g_state.settings.site_factor_hold;
    switch (site_pin_step(e.site, job->site_factor, hold, static_cast<int64_t>(now))) {
        case SitePinEvent::pinned:
            g_state.pins[job->job_id] = Pin{e.submit, job->user_id, job->restart_cnt, e.site.pinned_at};
            g_state.pins_changed = true;
            info("%s: job %u: site factor %lld was set by an operator; kept %s", plugin_type, job->job_id,
                 static_cast<long long>(job->site_factor) - NICE_OFFSET,
                 hold == 0 ? "for the job's life"
                           : ("for " + std::to_string(hold) + " s (site_factor_hold)").c_str());
            break;
        case SitePinEvent::released:
            e.site_lift = 0;  // `written` is the operator's value now, with no lift of ours in it
            g_state.pins.erase(job->job_id);
            g_state.pins_changed = true;
            info(
                "%s: job %u: the operator's site factor was kept %u s (site_factor_hold); ExplSched sets it "
                "again",
                plugin_type, job->job_id, hold);
            break;
        case SitePinEvent::none:
            break;
    }
    return e.site.pinned;
}

// Under the job write lock (site_factor_update), every kPrunePeriod: forgets the entries (and
// pins) of job instances slurmctld no longer has. The published answers were taken before.
void prune_site_entries(time_t now) {
    if (now - g_state.last_prune < kPrunePeriod) return;
    g_state.last_prune = now;
    for (auto e = g_state.jobs.begin(); e != g_state.jobs.end();) {
        bool keep = e->second.seen_round + 2 >= g_state.round;
        if (!keep) {
            const job_record_t* job = find_job_record(e->first);
            keep = job != nullptr && submit_of(job) == e->second.submit;
        }
        if (keep) {
            ++e;
            continue;
        }
        if (g_state.pins.erase(e->first) != 0) g_state.pins_changed = true;
        e = g_state.jobs.erase(e);
    }
    g_state.last_walk.clear();  // the walk hints may point at erased entries
}

// Stores the ranking's site factor `site` into the record, with the placement planner's lift for
// this job added while it passes a higher one (net_place.hpp); remembers the whole as written (an
// operator's change is told from it) and the lift in it. Called with g_state.mutex held, under the
// job write lock.
void store_site_factor(job_record_t* job, JobEntry& e, uint32_t site) {
    const uint32_t lift = rerank::placement_site_lift(job);
    job->site_factor = rerank::lifted_site_factor(site, lift);
    e.site.written = job->site_factor;
    e.site_lift = lift;
}

// The entry of this instance of the job, or null (g_state.mutex held).
const JobEntry* entry_of_instance(const job_record_t* job) {
    const auto e = g_state.jobs.find(job->job_id);
    return e != g_state.jobs.end() && e->second.submit == submit_of(job) ? &e->second : nullptr;
}

// Whether an operator's site factor is kept on `job` (the placement planner does not lift such a
// job). Job write lock held.
bool site_factor_kept(const job_record_t* job) {
    std::lock_guard<std::mutex> guard(g_state.mutex);
    const JobEntry* e = entry_of_instance(job);
    return e != nullptr && e->site.pinned;
}

// The ranking's last answer for this instance of the job (0: none), without a placement raise
// (the write-back stores the larger of the two in the record). Job write lock held.
uint32_t ranked_priority(const job_record_t* job) {
    std::lock_guard<std::mutex> guard(g_state.mutex);
    const JobEntry* e = entry_of_instance(job);
    return e != nullptr ? e->priority : 0;
}

void site_factor_update_locked() {
    std::vector<SiteAnswer> taken;
    std::lock_guard<std::mutex> guard(g_state.mutex);
    taken.swap(g_state.published);
    const time_t now = time(nullptr);
    for (SiteAnswer& a : taken) {
        job_record_t* job = find_job_record(a.job_id);
        if (job == nullptr || submit_of(job) != a.submit || IS_JOB_RUNNING(job) != a.running ||
            (!IS_JOB_RUNNING(job) && (!IS_JOB_PENDING(job) || job->priority == 0)))
            continue;  // ended, requeued, held, started or replaced since the walk
        JobEntry& e = *a.entry;
        if (e.job_id != a.job_id || e.submit != a.submit) continue;
        if (!operator_site_factor(job, e, now)) store_site_factor(job, e, a.site);
    }
    prune_site_entries(now);
}

// At submit, requeue and priority recomputes (job write lock held; the placement round's
// set_job_prio too): the site factor of a job no round has seen yet, or the last one stored for
// this instance, with the placement planner's lift as it is now (none after a requeue: lifts are
// per instance); an operator's value is left alone.
void site_factor_at_submit_locked(job_record_t* job) {
    std::lock_guard<std::mutex> guard(g_state.mutex);
    JobEntry* entry = job_entry(job);
    if (entry == nullptr || operator_site_factor(job, *entry, time(nullptr))) return;
    if (entry->site.written != 0) {
        store_site_factor(job, *entry, rerank::unlifted(entry->site.written, entry->site_lift));
        return;
    }
    JobView view;
    const EngineSettings& es = g_state.settings.engine;
    view_of(snap_of(job, entry), view, es);
    const double value = view.group.empty() ? es.nonexploratory_value : es.unknown_value;
    const Assessment a = provisional_assessment(view, value, es);
    JobAnswer ans;
    answer_factors(ans, view, a, static_cast<double>(time(nullptr)), es);
    store_site_factor(job, *entry, ans.site);
    if (!view.group.empty()) shim::set_system_comment(job, summary_line(a, 0.0, entry->st->trial));
}

void rerank_all() {
    Ranker& r = g_ranker;
    sync_settings(r);
    if (!r.engine) return;
    const std::size_t fresh = read_reports(r);
    // after a restart: our placement pins and trials' notes, from the SystemComments, before
    // this round's ranking lines replace them (once; net_place.hpp)
    if (r.settings.placement) rerank::recover_placement();
    const uint64_t round = ++r.round;
    const time_t now = time(nullptr);
    // last round's copies go before the locks are taken (their frees are not the walk's)
    r.snaps.clear();
    r.views.clear();
    r.ended.clear();
    r.ended_views.clear();
    r.in_grace.clear();
    r.in_grace_views.clear();
    r.live.clear();
    r.answers.clear();
    std::vector<std::unique_ptr<const JobStatic>> retired;
    {
        std::lock_guard<std::mutex> guard(g_state.mutex);
        retired.swap(g_state.retired);
    }
    retired.clear();  // no snapshot points at them any more

    // 2. the walk, a chunk at a time under read locks (the job list, node GPUs, partitions)
    ClusterView cluster;
    cluster.now = static_cast<double>(now);
    Holds walk, back;
    walk_jobs(r, cluster, walk);

    // 3. the engine, on the snapshot, without slurmctld's locks
    const auto t1 = std::chrono::steady_clock::now();
    std::sort(r.live.begin(), r.live.end());
    note_unpaused(r, now);
    prune(r, now);
    attach_curves(r);
    if (!r.ended_views.empty()) {
        r.engine->record_ended(r.ended_views);
        g_log.write(LogLevel::debug, "recorded the final curves of " + std::to_string(r.ended_views.size()) +
                                         " trial(s) that ended since the last round");
    }
    if (Status st = r.engine->evaluate(r.views, cluster, r.out); !st) {
        g_log.write(LogLevel::error, "ranking round failed: " + st.error().message);
        return;
    }
    const RoundSummary& summary = r.engine->last_round();
    const bool was_settled = r.settled;
    // settled: caught up with the store, and no changed curve left waiting for its refit
    r.settled = r.feed.caught_up() && (r.settings.engine.max_refits_per_round == 0 ||
                                       summary.fitted < r.settings.engine.max_refits_per_round);
    r.settled = r.settled || (was_settled && r.feed.caught_up());
    if (r.settled && !r.said_settled)
        info(
            "%s: caught up with the report store (%lld reports, %zu trial curves); hopeless trials may now "
            "be "
            "acted on",
            plugin_type, static_cast<long long>(r.feed.cursor()), r.curves.instances());
    r.said_settled = r.said_settled || r.settled;
    prepare_answers(r, now);
    const double engine_ms = ms_between(t1, std::chrono::steady_clock::now());

    // 4. the answers, a chunk at a time under the job write lock (site_factor mode: published
    // for site_factor_update, which stores them under the lock multifactor holds)
    std::vector<HopelessAct> acts;
    std::size_t skipped = 0;
    if (site_mode()) {
        save_pins(r);
        if (publish_site_answers(r, acts) != 0)
            hold_locks(slurmctld_lock_t{NO_LOCK, WRITE_LOCK, NO_LOCK, NO_LOCK, NO_LOCK}, back,
                       [&r] { write_comments(r); });
    } else {
        bool changed = false;
        std::size_t from = 0;
        do {
            const std::size_t to = std::min(r.snaps.size(), from + kLockChunk);
            hold_locks(slurmctld_lock_t{READ_LOCK, WRITE_LOCK, NO_LOCK, READ_LOCK, NO_LOCK}, back, [&] {
                if (round == g_throw_in_round) throw std::bad_alloc();
                changed = write_back(r, from, to, acts, skipped) || changed;
                if (to == r.snaps.size()) {
                    if (changed) last_job_update = now;
                    prune_entries(r, now);
                }
            });
            from = to;
        } while (from < r.snaps.size());
    }
    r.answers.clear();  // the SystemComments replaced (or not used), freed without the locks

    // 5. hopeless trials (rare): recorded on disk, then acted on under the job write lock
    if (!acts.empty()) act_on_hopeless(r, acts, now);
    if (!r.in_grace.empty()) requeue_ended_in_grace(r, now);

    // 6. network-contention-aware placement of pending multi-node jobs (placement=yes; net_place.hpp)
    {
        std::unordered_map<uint32_t, std::size_t> trial_at;  // job id -> its view (placement_learn)
        if (r.settings.placement && r.settings.placement_learn)
            for (std::size_t i = 0; i < r.snaps.size() && i < r.views.size(); ++i)
                if (!r.views[i].group.empty()) trial_at[r.snaps[i].job_id] = i;
        const rerank::RankFacts facts{site_factor_kept, ranked_priority};
        rerank::place_multinode_jobs(r.settings, g_state.mode, facts, [&](uint32_t id) {
            const auto it = trial_at.find(id);
            return it == trial_at.end() ? PointSpan() : r.views[it->second].points;
        });
    }

    verbose(
        "%s: ranked %zu jobs (%zu trials, %zu refitted) in %.2f ms under the job lock (%.2f ms CPU; "
        "walk %.2f, write-back %.2f; engine %.2f without locks); "
        "%zu new reports%s; %zu skipped at write-back; load %.2f, price %.3g; %.2f ms waiting for the locks; "
        "longest hold %.2f ms of %u",
        plugin_type, r.views.size(), summary.trials, summary.fitted, walk.total_ms + back.total_ms,
        walk.cpu_ms + back.cpu_ms, walk.total_ms, back.total_ms, engine_ms, fresh,
        r.feed.caught_up() ? "" : " (catching up with the store)", skipped, summary.utilisation,
        summary.price_now, walk.wait_ms + back.wait_ms, std::max(walk.longest_ms, back.longest_ms),
        walk.count + back.count);
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

// In slurmctld, not in sprio or sshare (which load the plugin too): slurmctld defines job_list. It
// may not have made the list yet (24.11 loads the plugins first); the walk waits for it.
bool in_slurmctld() { return &job_list != nullptr; }

// At submit or requeue: the last round's answer for this instance if it had one, else the rank of
// a job with no curve yet. Never waits for a round (the engine runs without our mutex).
uint32_t provisional_priority(job_record_t* job) {
    JobView view;
    const EngineSettings& es = g_state.settings.engine;
    JobEntry* entry = job_entry(job);
    if (entry == nullptr) return 1;
    view_of(snap_of(job, entry), view, es);
    if (entry->priority != 0) return entry->priority;
    const double value = view.group.empty() ? es.nonexploratory_value : es.unknown_value;
    Assessment a = provisional_assessment(view, value, es);
    if (!view.group.empty()) shim::set_system_comment(job, summary_line(a, 0.0, entry->st->trial));
    return a.priority;
}

// The action ledger's file under StateSaveLocation; empty when slurmctld has none.
std::string ledger_path() {
    const char* dir = slurm_conf.state_save_location;
    if (dir == nullptr || *dir == '\0') return {};
    return std::string(dir) + "/explsched_actions";
}

}  // namespace

namespace explsched::rerank {

int init(Mode mode) {
    try {
        g_state.mode = mode;  // before anything reads it; constant afterwards
        auto settings = read_settings();
        if (!settings) {
            error("%s: %s", plugin_type, settings.error().message.c_str());
            return SLURM_ERROR;
        }
        auto throughputs = read_throughputs(*settings);
        if (!throughputs) {
            error("%s: %s", plugin_type, throughputs.error().message.c_str());
            return SLURM_ERROR;
        }
        if (!settings->throughput_table.empty())
            verbose("%s: throughput table %s: %zu job types", plugin_type, settings->throughput_table.c_str(),
                    (*throughputs)->size());
        {
            std::lock_guard<std::mutex> lock(g_state.mutex);
            apply_settings(std::move(settings).value(), std::move(throughputs).value());
        }
        if (in_slurmctld()) {
            // The thread is not running yet: the ranker is ours here.
            g_ranker.ledger_path = ledger_path();
            if (!g_ranker.ledger_path.empty()) {
                auto ledger = ActionLedger::load(g_ranker.ledger_path);
                if (!ledger) {
                    // Acting without it could hold again a job its owner released: refuse to start.
                    error("%s: action ledger: %s", plugin_type, ledger.error().message.c_str());
                    return SLURM_ERROR;
                }
                g_ranker.ledger = std::move(ledger).value();
                verbose("%s: action ledger %s: %zu job instances acted on or pinned", plugin_type,
                        g_ranker.ledger_path.c_str(), g_ranker.ledger.size());
                std::lock_guard<std::mutex> lock(g_state.mutex);
                for (const auto& [job, e] : g_ranker.ledger.pins())
                    g_state.pins[job.job_id] = Pin{job.submit, e.uid, e.restarts, e.when};
            }
        }
        if (const char* n = std::getenv("EXPLSCHED_TEST_THROW_IN_ROUND"); n != nullptr)
            g_throw_in_round = std::strtoull(n, nullptr, 10);
        if (in_slurmctld()) {
            std::lock_guard<std::mutex> lock(g_thread_mutex);
            g_stop = false;
            g_thread.emplace(rerank_loop);
        }
        return SLURM_SUCCESS;
    } catch (const std::exception& e) {
        error("%s: init: %s", plugin_type, e.what());
        return SLURM_ERROR;
    }
}

int fini() {
    try {
        {
            std::lock_guard<std::mutex> lock(g_thread_mutex);
            g_stop = true;
        }
        g_thread_cv.notify_all();
        if (g_thread && g_thread->joinable()) g_thread->join();
        g_thread.reset();
        rerank::save_learned_placement();  // the thread's state, now ours
        return SLURM_SUCCESS;
    } catch (...) {
        return SLURM_ERROR;
    }
}

void reconfig() {
    try {
        auto settings = read_settings();
        if (!settings) {
            error("%s: %s (keeping the previous settings)", plugin_type, settings.error().message.c_str());
            return;
        }
        auto throughputs = read_throughputs(*settings);
        if (!throughputs) {
            error("%s: %s (keeping the previous settings and throughput table)", plugin_type,
                  throughputs.error().message.c_str());
            return;
        }
        std::lock_guard<std::mutex> lock(g_state.mutex);
        apply_settings(std::move(settings).value(), std::move(throughputs).value());
    } catch (...) {
    }
}

uint32_t priority_at_submit(job_record_t* job) {
    try {
        if (job->direct_set_prio && job->priority > 1) return job->priority;
        std::lock_guard<std::mutex> lock(g_state.mutex);
        return provisional_priority(job);
    } catch (...) {
        return 1;  // lowest non-held priority: the job still runs, never blocks the queue
    }
}

void site_factor_at_submit(job_record_t* job) {
    try {
        site_factor_at_submit_locked(job);
    } catch (...) {
        // the job keeps the site factor it has: it still runs, ranked by multifactor's factors
    }
}

void site_factor_update() {
    try {
        const auto t0 = std::chrono::steady_clock::now();
        const double cpu0 = thread_cpu_ms();
        std::size_t n = 0;
        {
            std::lock_guard<std::mutex> lock(g_state.mutex);
            n = g_state.published.size();
        }
        site_factor_update_locked();
        verbose("%s: stored %zu site factors in %.2f ms (%.2f ms CPU) under multifactor's job lock",
                plugin_type, n, ms_between(t0, std::chrono::steady_clock::now()), thread_cpu_ms() - cpu0);
    } catch (...) {
        error("%s: storing the site factors failed", plugin_type);
    }
}

}  // namespace explsched::rerank
