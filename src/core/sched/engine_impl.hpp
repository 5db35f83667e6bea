// The engine's private state and the phases of a round (engine.hpp has the contract). Included
// only by the engine's own sources: engine.cpp (the public object and the round's outline),
// engine_cache.cpp (per-trial fit caches and sweep statistics) and engine_round.cpp (classify,
// price, decide, prioritise).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/log.hpp"
#include "core/base/result.hpp"
#include "core/curves/curve_ensemble.hpp"
#include "core/curves/sibling_prior.hpp"
#include "core/sched/engine.hpp"
#include "core/sched/policy.hpp"
#include "core/sched/price.hpp"
#include "core/sched/throughput_table.hpp"

namespace explsched {
namespace engine_detail {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kAuditWindow = kMaxCalibrationAudits;

inline bool better(Direction d, double a, double b) { return d == Direction::maximize ? a > b : a < b; }

// The trial's hopeless action: its --explore-on-hopeless, else the site's; requeue_hold of a
// running trial the host cannot requeue (JobView::requeueable) is only marking it (none).
inline HopelessAction hopeless_action_of(const JobView& job, const EngineSettings& s) {
    const HopelessAction a = job.has_hopeless_action ? job.hopeless_action : s.hopeless_action;
    return a == HopelessAction::requeue_hold && !job.requeueable && job.state == JobState::running
               ? HopelessAction::none
               : a;
}

// Per-trial state that survives between rounds: the fitted predictor and what was derived from
// it. Recomputed only when the trial's points or its speed/type/horizon inputs change.
struct TrialCache {
    explicit TrialCache(Direction d, const EngineSettings& s) : predictor(d, s) {}

    CurvePredictor predictor;
    std::size_t raw_count = 0;
    CurvePoint raw_last{};
    bool diverged = false;
    double diverged_at = kNaN;
    std::string error;  // the last rejected report's error ("" when fine)
    // derived
    bool derived_valid = false;
    double speed = kNaN;       // steps/s as measured
    double speed_ratio = 1.0;  // scaling to the GPU type it is valued on
    // how (gpu_value.ratio == speed_ratio), for the inputs below (recomputed when they change)
    GpuValue gpu_value;
    std::string value_job_type, value_gpu_type, value_measured;
    std::uint32_t value_gpus = 0;
    bool value_known = false;
    double max_steps = 0.0;
    double gain = 0.0;  // predicted improvement over the utility horizon, metric units
    Prediction final_metric;
    // observed summary, refreshed when the points change (group statistics read these every
    // round; scanning every curve each round would cost O(points))
    double lo = kNaN, hi = kNaN, best = kNaN, first = kNaN;
    // ASHA rungs derived from the settings and max_steps (jobs without their own milestones)
    std::vector<double> rungs;
    double rungs_for_max_steps = -1.0;
    std::uint64_t version = 0;  // bumped whenever the points change
    // the metric at the last ASHA rung reached, for `asha_version`
    double asha_rung = kNaN, asha_value = kNaN;
    std::uint64_t asha_version = ~std::uint64_t{0};
    std::uint64_t round = 0;
    std::size_t group = kNone;  // index in Engine::Impl::groups
    // Forecast audit: the prediction made for `audit_step` (twice the step it was made at) and
    // its optimistic bound, checked against the curve once it gets there.
    double audit_step = kNaN, audit_value = kNaN, audit_bound = kNaN;
    double audit_floor = kNaN;  // the forecast's pessimistic bound
    std::size_t own_jumps = 0;  // jumps its own curve made so far (sibling_jumps)
    // The run that follows a resume from a pause keeps its grace before a verdict on its forecast
    // (ReasonCode::resumed_grace): the first start seen after each pause, one per pause, so that
    // a user who requeues the trial again gets no new grace.
    std::uint32_t graced_pauses = 0;
    double graced_start = kNaN;
    // The pause count at which it was released as its sweep's last open question (0: never): two
    // paused members of a sweep whose others all ended are both its last open question, and once
    // both are released neither is the last any more (ReasonCode::resumed_pending).
    std::uint32_t released_last = 0;
};

// One owner's (user's) checked forecasts, across all their trials and sweeps: whether each fell
// short of its pessimistic bound. The newest kOwnerAuditWindow count.
constexpr std::size_t kOwnerAuditWindow = 64;
struct OwnerAudit {
    std::array<bool, kOwnerAuditWindow> missed{};
    std::size_t checked = 0;  // ever (the ring's write position)
    std::size_t misses = 0;   // in the window

    void add(bool miss);
    // The factor the owner's utilities are scaled by (1: their forecasts come true often enough).
    double factor(const EngineSettings& s) const;
};

// The curves of a sweep's trials that its members' forecasts read as a prior (the sibling prior,
// curves/sibling_prior.hpp; engine_siblings.cpp): at most kMaxSiblingCurves, each thinned to
// kSiblingCurvePoints, the ones that reached furthest into their runs kept. A running member's
// copy is refreshed when it moved on by 1/kSiblingCurvePoints of its run, so a round costs
// O(changed trials x kMaxSiblingCurves) here, whatever the sweep's size.
constexpr std::size_t kMaxSiblingCurves = 16;
struct SiblingStore {
    std::vector<TrialKey> keys;
    std::vector<SiblingCurve> curves;
    bool find_jumps = false;  // curve_jumps of each kept curve (sibling_jumps; set every round)

    // Offers a member's curve: `length` the step its run ends at (max_steps; 0: unknown, not
    // kept), `ended` when it left the queue.
    void offer(const TrialKey& key, const CurvePredictor& p, double length, bool ended);
    // Every kept curve but `self`'s, into `out`.
    void others(const TrialKey& self, std::vector<const SiblingCurve*>& out) const;
    // The most one kept curve other than `self`'s gained in jumps after `fraction` of its run.
    double jump_allowance(const TrialKey& self, double fraction, std::size_t own_jumps) const;
};

// A group (sweep) persists across rounds so that what only changes when a member's curve
// changes (the ASHA rung values) is not recomputed every round.
struct GroupStats {
    Direction direction = Direction::maximize;
    double lo = kInf, hi = -kInf;       // observed metric range
    double best = kNaN, second = kNaN;  // best and second-best observed metric
    TrialKey best_key;
    double furthest_step = 0.0;  // the last step of its most advanced trial
    std::size_t trials = 0;
    std::uint64_t seen_round = 0;
    bool changed = false;                             // a member's curve changed this round
    std::uint64_t signature = 0, last_signature = 0;  // of the member set
    std::vector<std::size_t> members;                 // this round's jobs
    // per rung reached: the sorted metrics of the members that reached it
    std::vector<std::pair<double, std::vector<double>>> rung_values;
    // What the sweep's trials that have left the queue (finished, stopped, held) achieved: a
    // sweep's best often finishes first, and later siblings must still be measured against it.
    double ended_lo = kInf, ended_hi = -kInf, ended_best = kNaN, ended_furthest = 0.0;
    TrialKey ended_best_key;
    // ... and their metric at each milestone they reached: (milestone step, metric)
    std::vector<std::pair<double, double>> ended_rung_values;
    // Forecast audits of its members (kept when they end): for every forecast that came due,
    // how far the curve beat it in units of the interval's optimistic half-width (1: exactly at
    // the bound). A sweep whose curves keep beating their bounds (plateaus that end, learning
    // rate drops) gets its intervals widened until they would have held (`widen`).
    // The newest kAuditWindow of them (a ring): the widening follows what the sweep's curves do
    // now, and a sweep of thousands of trials costs a bounded selection per checked forecast.
    std::vector<double> audit_ratios;
    std::size_t audits = 0;  // checked forecasts ever (the ring's write position)
    double widen = 1.0;
    bool held = false;  // the audits have held (audits_held, policy.hpp): audited_min_progress
    // The application it belongs to (owner and --explore-model, engine_pooled_audit.cpp): a sweep
    // with fewer than calibration_min_audits checked forecasts of its own reads its application's
    // pooled audit instead.
    std::string application;
    SiblingStore siblings;

    void start_round(std::uint64_t round, Direction d);
    // Adds a member's observed curve (it has points) to this round's range, best and furthest.
    void observe(const TrialCache& c, const TrialKey& key);
    // Keeps what a member that left the queue achieved (see ended_*).
    void record_ended(const TrialCache& gone, const TrialKey& key);
};

// The forecast audits of every sweep of one application (one owner's trials of one
// --explore-model), pooled: the newest kAuditWindow checked forecasts, and the widening they call
// for (engine_pooled_audit.cpp).
struct PooledAudit {
    std::vector<double> ratios;
    std::size_t audits = 0;
    double widen = 1.0;
    bool held = false;

    void add(double ratio, const EngineSettings& s);
};

// The key pooling a job's sweep's audits with its application's other sweeps ("" for none: a
// job without --explore-model is pooled with nothing).
std::string application_key(const JobView& job);

// The interval widening a sweep's forecast audits call for: the factor by which the optimistic
// half-width must grow for the audited forecasts to have been beaten no more often than the
// interval level says ((1 - level) / 2), never below 1; 1 until calibration_min_audits are in.
double audit_widening(std::vector<double> ratios, const EngineSettings& s);

Prediction widen_interval(Prediction p, double widen);

// The cluster's load this round.
struct RoundLoad {
    double total = 1.0;  // GPUs, at least 1
    double load = 0.0;   // busy / total, clamped to [0, 1]
};

struct RoundCounts {
    std::size_t trials = 0, fitted = 0, invalid = 0;
};

// The GPU price this round (`function` valid only when priced).
struct RoundPrice {
    bool priced = false;
    PriceFunction function;
    double ratio = 1.0;  // U/L
    double now = 0.0;    // at the current load (0 unpriced)
};

}  // namespace engine_detail

struct Engine::Impl {
    using TrialCache = engine_detail::TrialCache;
    using GroupStats = engine_detail::GroupStats;
    using RoundLoad = engine_detail::RoundLoad;
    using RoundCounts = engine_detail::RoundCounts;
    using RoundPrice = engine_detail::RoundPrice;
    using OwnerAudit = engine_detail::OwnerAudit;

    Impl(const EngineSettings& s, ThroughputTable t, Logger* l);

    EngineSettings settings;
    ThroughputTable throughputs;
    Logger* logger;
    PriceBoundsEstimator bounds;
    double z;
    std::uint64_t round = 0;
    std::unordered_map<TrialKey, TrialCache, TrialKeyHash> cache;
    std::unordered_map<TrialKey, std::size_t, TrialKeyHash> index;  // key -> position in last
    std::vector<Assessment> last;
    RoundSummary summary;
    // scratch reused across rounds
    std::unordered_map<std::string, std::size_t> group_index;
    std::vector<GroupStats> groups;
    std::size_t active_groups = 0;
    std::vector<TrialKey> keys;         // last round's jobs, in order
    std::vector<TrialCache*> trial_of;  // per job: its cache entry (null if none)
    std::vector<std::size_t> group_of;  // per job: its group (kNone if none)
    std::vector<double> scratch;
    std::unordered_map<std::uint32_t, OwnerAudit> owners;  // forecast audits per owner (uid)
    // forecast audits pooled per application (application_key), at most kMaxPooledApplications
    std::unordered_map<std::string, engine_detail::PooledAudit> applications;
    std::size_t discounted = 0;  // this round's trials with trust < 1
    // scratch of apply_sibling_prior
    std::vector<const SiblingCurve*> sibling_scratch;
    mutable std::vector<const SiblingCurve*> track_scratch;  // of stop_evidence
    std::vector<CurveJump> jump_scratch;
    std::vector<double> thin_steps, thin_metrics;

    void log(LogLevel level, const std::string& message) {
        if (logger != nullptr && logger->enabled(level)) logger->write(level, message);
    }

    // --- whole-round input checks (engine_round.cpp) ---
    // Indexes the round's keys; `same_keys` when they equal last round's, in order.
    Status index_jobs(const std::vector<JobView>& jobs, bool& same_keys);
    Status measure_load(const std::vector<JobView>& jobs, const ClusterView& cluster, RoundLoad& out);

    // --- the fit cache and sweep statistics (engine_cache.cpp) ---
    // Trials that left the queue: their fits go, what they achieved stays with their sweep.
    void retire_departed();
    // Engine::record_ended; `ended_refits` counts its refits against the next round's budget.
    void record_ended(const std::vector<JobView>& ended);
    std::size_t ended_refits = 0;
    // Brings every listed trial's cache up to its report and builds this round's sweep
    // statistics; forgets trials no longer listed as exploratory.
    RoundCounts sync_fit_cache(const std::vector<JobView>& jobs, bool same_keys);
    void reset_groups(std::size_t n, bool same_keys);
    TrialCache& cache_entry(const JobView& job, std::size_t j);
    // The cache entry of a trial's key, made afresh when missing or of another direction.
    TrialCache& cache_of(const JobView& job);
    // The index of the job's group in `groups`, made when new (its direction and application set).
    std::size_t group_index_of(const JobView& job);
    void join_group(const JobView& job, std::size_t j, TrialCache& c, bool changed, bool is_new);
    void end_sync(std::size_t trials);
    bool sync(const JobView& job, TrialCache& c, std::size_t& budget);
    void derive(const JobView& job, TrialCache& c);
    // Mixes the sweep's siblings' curves into the trial's forecast of its final metric
    // (engine_siblings.cpp); called by derive when the trial's forecast is recomputed.
    void apply_sibling_prior(const JobView& job, TrialCache& c);
    void audit(const JobView& job, TrialCache& c, GroupStats& gs);
    double owner_factor(std::uint32_t owner) const;
    // Adds a checked forecast to the sweep's application's pooled audit (engine_pooled_audit.cpp).
    void pool_audit(const GroupStats& gs, double ratio);
    // The widening a sweep's intervals get: its own audits' once it has calibration_min_audits,
    // else its application's pooled audits'.
    double group_widen(const GroupStats& gs) const;
    // Whether the sweep's checked forecasts (else, while it has fewer than audited_min_checks,
    // its application's pooled ones) have held (forecasts_held in engine_pooled_audit.cpp).
    bool forecasts_held(const GroupStats& gs) const;
    const std::vector<double>& rungs_of(const JobView& job, TrialCache& c) const;
    // The trial's standing at the highest milestone it reached (`reached` NaN when none).
    MilestoneStanding milestone_rank(const JobView& job, std::size_t j);
    const std::vector<double>& values_at(std::size_t group, double rung);

    // --- classify, price, decide, prioritise (engine_round.cpp) ---
    // Utilities and the stopping rules for every trial with a usable fit; `out` is reset.
    void classify(const std::vector<JobView>& jobs, std::vector<Assessment>& out);
    bool classify_trial(const JobView& job, std::size_t j, const TrialCache& c, Assessment& a);
    RoundPrice update_price(const RoundLoad& load);
    void decide(const std::vector<JobView>& jobs, const ClusterView& cluster, const RoundLoad& load,
                const RoundPrice& price, std::vector<Assessment>& out);
    // The evidence the stopping rules read for one trial with a usable fit.
    StopEvidence stop_evidence(const JobView& job, std::size_t j, const TrialCache& c) const;
    // Pause and resume (engine_pause.cpp): after decide, turns stops whose optimistic bound can
    // still matter and unlikely trials below the price into pauses (as far as pending demand
    // needs the GPUs), and decides which paused trials resume, stay paused or stop for good.
    void pause_and_resume(const std::vector<JobView>& jobs, const ClusterView& cluster, const RoundLoad& load,
                          std::vector<Assessment>& out);
    LadderInputs ladder_inputs(const JobView& job, std::size_t j, const TrialCache* c, const Assessment& a,
                               double load_after, double running_s, const RoundPrice& price) const;
    void finish_round(const std::vector<Assessment>& out, const ClusterView& cluster, const RoundLoad& load,
                      const RoundPrice& price, const RoundCounts& counts);
};

}  // namespace explsched
