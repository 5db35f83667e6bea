// Trial decisions: what the stopping rules (hopeless, negligible expected gain, behind at a
// milestone), the price rule, the ASHA fallback and the decision ladder that orders them conclude
// for one trial, and whether one job may preempt another. Pure functions of their inputs; the
// engine gathers the inputs each round.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include "core/sched/decision.hpp"
#include "core/sched/engine_settings.hpp"
#include "core/sched/engine_types.hpp"

namespace explsched {

// The decision for a hopeless (or diverged) trial under its hopeless action.
Decision hopeless_decision(HopelessAction action, JobState state);

// The price rule: a pending trial runs when its utility is at least the price at the load it
// would create; a running one keeps its GPUs when its utility is at least the price at the
// current load, and below it becomes preemptable, unless it (re)started less than min_run_s ago
// (preempting a trial that has not yet amortised its start-up and checkpoint cost is waste).
void decide_by_price(JobState state, double utility, double price, double load, double running_s,
                     const EngineSettings& settings, Assessment& out);

// ASHA milestones (successive halving rungs) for a trial: its own milestones if it gave any,
// else asha_min_step * eta^k, else max_steps / eta^(rungs - k); empty if none can be derived.
std::vector<double> asha_rungs(const std::vector<double>& milestones, double max_steps,
                               const EngineSettings& settings);

// The metric a curve had at `step`: the value of its last point at or before it (NaN if none).
double metric_at(const std::vector<double>& steps, const std::vector<double>& metrics, double step);

struct AshaRank {
    std::size_t rank = 0;   // 1 = best
    std::size_t of = 0;     // trials of the group that reached the rung
    bool promoted = false;  // within the top ceil(of / eta)
};

// Rank of `value` among `values_at_rung` (which includes it), direction-aware; ties rank best.
AshaRank asha_rank(double value, const std::vector<double>& values_at_rung, Direction direction, double eta);

// The same over values sorted ascending, in O(log n) (the engine ranks whole sweeps each round).
AshaRank asha_rank_sorted(double value, const std::vector<double>& sorted_values, Direction direction,
                          double eta);

// Where a trial stands at the highest milestone (ASHA rung) it reached: `reached` is NaN when it
// reached none, and `rank` is then meaningless.
struct MilestoneStanding {
    double reached = std::numeric_limits<double>::quiet_NaN();
    AshaRank rank;
};

// --- stopping rules ------------------------------------------------------------------------------
// What the rules that stop a predicted trial read: the trial's fit and where its sweep stands.
// Filled only for a trial with a usable fit (fitted, report valid).
struct StopEvidence {
    Direction direction = Direction::maximize;
    std::size_t points = 0;       // points the fit holds
    double last_step = 0.0;       // the trial's last reported step
    double max_steps = 0.0;       // step it stops at; 0 = unknown
    double sweep_furthest = 0.0;  // the last step of its sweep's most advanced trial
    // predicted final metric, interval widened by the forecast audit and its optimistic bound
    // moved for its siblings' later jumps (sibling_jumps)
    Prediction final_metric;
    // the best metric another trial of the sweep reached (NaN: none)
    double best_other = std::numeric_limits<double>::quiet_NaN();
    double win_probability = 1.0;  // chance to beat best_other
    // ... before its optimistic bound was moved for its siblings' jumps (what its utility and the
    // pause rule read: the allowance keeps a trial from being stopped, it neither raises its
    // priority nor keeps it from being paused)
    double own_win_probability = 1.0;
    double sweep_scale = 1.0;  // the sweep's observed metric range (> 0)
    bool leader = false;       // the trial holds its sweep's best metric
    // its sweep's (else its application's) checked forecasts have held: the hopeless rules may
    // judge it from audited_min_progress of its run, not hopeless_min_progress
    bool forecasts_held = false;
    // GPU-hours its run still needs (GPUs x steps left / measured speed; NaN: unknown)
    double remaining_gpu_hours = std::numeric_limits<double>::quiet_NaN();
    // its own best metric (NaN: none) and the step of the point that last improved it by more
    // than kStaleBestMargin of the sweep's metric range (stale_best_step)
    double own_best = std::numeric_limits<double>::quiet_NaN();
    double own_best_step = 0.0;
    // the first step at which its learning rate drops (--explore-lr-drops); 0: none declared
    double first_drop = 0.0;
    // behind_track_margin: its mean gap to the path of the sibling that reached the sweep's best
    // (< 0; NaN: not behind by the margin) and the chance that gap leaves it (1: none)
    double behind_lead = std::numeric_limits<double>::quiet_NaN();
    double behind_chance = 1.0;
};

// The spread of a trial's gap to its sweep's best path at the end of its run is read as at least
// this fraction of the gap now (behind_track_margin): a steady gap that does not close leaves a
// chance of at most Φ(-1/0.35) ≈ 0.002, one that closes over the window more.
constexpr double kBehindTrackSpread = 0.35;

// A declared learning-rate drop is a step change no extrapolation foresees: a trial is not judged
// (far_enough, final_stop_allowed, decisively_hopeless) before it has run this fraction of its run
// past its first declared drop, so that its curve shows what the drop did.
constexpr double kDropSettle = 0.05;

// Whether the trial has not yet run kDropSettle of its run past its first declared drop.
bool before_first_drop(const StopEvidence& evidence);

// How much a trial's own best must improve, as a fraction of its sweep's metric range, to count
// as progress for stale_best_fraction (noise on a plateau does not).
constexpr double kStaleBestMargin = 0.01;

// The trial's own best (oriented back to metric units) and the step of the point that last beat
// the best before it by more than `margin` (metric units); NaN metrics are skipped. Empty: NaN, 0.
struct OwnBest {
    double best = std::numeric_limits<double>::quiet_NaN();
    double step = 0.0;
};
OwnBest stale_best_step(const std::vector<double>& steps, const std::vector<double>& metrics,
                        Direction direction, double margin);

// The length of the trial's run: max_steps, else the steps its sweep's furthest trial has done.
double run_length(const StopEvidence& evidence);

// Whether a sweep's forecasts have held: at least min_checks checked by the forecast audit (each
// ratio: how far the curve beat the forecast, in units of its interval's optimistic half-width),
// beaten past the bound no more often than the interval level allows, i.e. the (1 + level) / 2
// quantile of the ratios is at most 1 (under 10 checks at the 80 % level: every one of them).
bool audits_held(std::vector<double> ratios, std::size_t min_checks, double level);

// The fraction of its run from which the hopeless rules judge the trial: hopeless_min_progress,
// or audited_min_progress (if lower) when its forecasts have held.
double judged_from(const StopEvidence& evidence, const EngineSettings& settings);

// Far enough to judge: the trial has covered judged_from of its run (max_steps, else the sweep's
// furthest step), and is not before_first_drop.
bool far_enough(const StopEvidence& evidence, const EngineSettings& settings);

// Whether a stopping rule's verdict may be final (terminate or hold) by progress: from
// hopeless_min_progress of its run, or earlier on decisive evidence. Held forecasts let the rules
// judge a trial from audited_min_progress, but before hopeless_min_progress such a verdict only
// pauses the trial (or, its pauses spent, makes it give way): a late bloomer on its plateau is
// never cancelled on an earned trust alone.
bool final_stop_allowed(const StopEvidence& evidence, const EngineSettings& settings);

// Decisively hopeless before it is far enough: from early_stop_progress of its run, enough points,
// a real extrapolation, and a chance to beat the sweep's best below early_stop_probability (at
// most hopeless_probability). Such a stop is final (stop_is_final), pausing or not.
bool decisively_hopeless(const StopEvidence& evidence, const EngineSettings& settings);

// behind_track_margin: whether the trial's chance from its gap to its sweep's best path is below
// hopeless_probability, past hopeless_min_progress of its run (not its sweep's leader), and the
// reason that says so (ReasonCode::behind_track).
bool behind_track_hopeless(const StopEvidence& evidence, const EngineSettings& settings);
Reason behind_track_reason(const StopEvidence& evidence);

// Hopeless: not its sweep's leader (the trial holding the sweep's best metric never is, nor
// decisively so), enough points and progress, a real extrapolation, and even the interval's optimistic
// side is unlikely (win probability < hopeless_probability) to beat the sweep's best. The reason
// (ReasonCode::hopeless) names the prediction, its interval, the best and the probability.
// With chance_worth_gpu_hours set, also hopeless when the chance is below
// costly_chance_threshold (ReasonCode::costly_chance): its remaining GPU-hours buy too little
// chance. The other conditions are the same. Also hopeless when stale_best_rule says so.
std::optional<Reason> hopeless_rule(const StopEvidence& evidence, const EngineSettings& settings);

// Stale (stale_best_fraction > 0; hopeless_rule asks it after the chance): not its sweep's
// leader, not finished, extrapolated, its own best behind the sweep's best by more than
// kStaleBestMargin of the sweep's metric range, not improved by that margin over the last
// stale_best_fraction of its run (own_best_step), and its forecast final no better than its own
// best: it has moved sideways or away for that long. ReasonCode::stale_best.
std::optional<Reason> stale_best_rule(const StopEvidence& evidence, const EngineSettings& settings);

// remaining_gpu_hours / chance_worth_gpu_hours, at most pause_probability; 0 when the setting is
// off or the remaining GPU-hours are unknown.
double costly_chance_threshold(const StopEvidence& evidence, const EngineSettings& settings);

// Negligible gain: a trial that is not its sweep's leader nor done, judged as the hopeless rule
// does, whose expected improvement over the sweep's best (in units of the sweep's range) is below
// min_expected_gain (0: rule off), and whose predicted final is within near_tie_range of that
// range of the sweep's best (a near tie; 0: any). Reason ReasonCode::negligible_gain.
std::optional<Reason> expected_gain_rule(const StopEvidence& evidence, const EngineSettings& settings);

// Whether the milestone rule can stop the trial at all, before its standing at a milestone is
// looked up (ranking a sweep at a rung is the costly part): milestone_stop_probability > 0, not
// done, far enough, a best to beat, and a win probability under milestone_stop_probability.
bool milestone_rule_applies(const StopEvidence& evidence, const EngineSettings& settings);

// Behind at a milestone: the rule applies, the trial reached a milestone and is outside the top
// 1/asha_reduction there. Reason ReasonCode::behind_at_milestone.
std::optional<Reason> milestone_rule(const StopEvidence& evidence, const MilestoneStanding& standing,
                                     const EngineSettings& settings);

// --- the decision ladder -------------------------------------------------------------------------
// Everything the ladder reads about one job this round.
struct LadderInputs {
    JobState job_state = JobState::pending;
    bool exploratory = false;     // the job belongs to a sweep (it has a trial)
    bool invalid_report = false;  // its last report was rejected
    bool diverged = false;        // its metric became non-finite at diverged_at
    double diverged_at = std::numeric_limits<double>::quiet_NaN();
    TrialState state = TrialState::unknown;  // what the stopping rules concluded
    Reason reason;                           // their reason when `state` is hopeless
    std::size_t points = 0;                  // points its fit holds
    double last_step = 0.0;                  // its last reported step (0 without points)
    double max_steps = 0.0;                  // 0 = unknown
    // steps/s as measured; NaN = unknown
    double speed = std::numeric_limits<double>::quiet_NaN();
    double utility = 0.0;
    double price = 0.0;        // at load_after
    double load_after = 0.0;   // load it would create (pending) or holds (running)
    double price_ratio = 1.0;  // U/L of the price function
    // seconds since it (re)started; infinite when pending or unknown
    double running_s = std::numeric_limits<double>::infinity();
    // the job's --explore-on-hopeless, else the site's
    HopelessAction hopeless_action = HopelessAction::requeue_hold;
    MilestoneStanding standing;  // read on the milestones rung only (see ladder_rung)
    // its sweep's best observed metric is its own (ReasonCode::leads_sweep), ahead of sweep_next
    // (the best of its sweep's other members that reported; NaN = none, then it leads nobody)
    bool holds_sweep_best = false;
    double sweep_best = std::numeric_limits<double>::quiet_NaN();
    double sweep_next = std::numeric_limits<double>::quiet_NaN();
};

// The ladder's rungs, in precedence order: the first that applies decides.
enum class LadderRung {
    nonexploratory,  // not a trial: runs / keeps, ranked by age, partition and nice
    invalid_report,  // report rejected: runs / keeps, at the unknown value
    diverged,        // hopeless by divergence: the hopeless action
    hopeless,        // a stopping rule fired: the hopeless action
    finished,        // reached max_steps: runs / keeps
    price,           // promising with a known speed: the price rule
    milestones,      // no usable prediction: successive halving on the sweep's milestones
};
LadderRung ladder_rung(const LadderInputs& in);

// What the ladder concludes: the trial's final state, decision and reason, and the value factor
// its priority is composed from (before the starvation floor).
struct TrialVerdict {
    TrialState state = TrialState::unknown;
    Decision decision = Decision::wait;
    Reason reason;
    double value = 0.0;
};
TrialVerdict decide_trial(const LadderInputs& in, const EngineSettings& settings);

// Preemption between two assessed jobs (see Engine::can_preempt). `preemptee_running_s`: how
// long the preemptee's current run has lasted (NaN: unknown). A preemptable verdict is written at
// a re-ranking; a job preempted, requeued and started again before the next one still carries
// it, so the grace (min_run_s) is checked here against its current run, as Slurm checks
// PreemptExemptTime against the job's start time. A preemptee to be cancelled, held or paused
// gives way at once; a hopeless one that is not stopped (preemptable) after its grace; a hopeless
// preemptor never preempts.
PreemptVerdict preempt_verdict(const Assessment& preemptor, const Assessment& preemptee,
                               const EngineSettings& settings, double preemptee_running_s = NAN);

}  // namespace explsched
