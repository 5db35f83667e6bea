// Every tunable of the core engine, with its default, in one place. The config table
// (config.cpp) maps PriorityParameters/explsched.conf keys onto these fields; the simulator and
// tests construct the struct directly.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/result.hpp"
#include "core/curves/fit_settings.hpp"

namespace explsched {

// What to do with a hopeless trial: cancel it, requeue it held (its owner may release it), or
// only mark it (it keeps running but anyone may preempt it).
enum class HopelessAction { terminate, requeue_hold, none };
const char* to_string(HopelessAction action);

// The forecast audit keeps a sweep's newest this many checked forecasts.
constexpr std::size_t kMaxCalibrationAudits = 256;

struct EngineSettings : FitSettings {
    // --- learning-curve prediction: FitSettings (curves/fit_settings.hpp), inherited ---
    // At most this many trials are (re)fitted per round (0: no limit); the rest keep their old
    // fit until a later round, so a controller restart with thousands of curves does not hold
    // the job lock for seconds. About 2 ms per fresh curve, 30 us per new point.
    std::size_t max_refits_per_round = 500;

    // --- utility ---
    double utility_horizon_s = 900.0;  // Δ: the wall time whose predicted gain is valued
    // A client's reported throughput counts up to this many times the speed measured from its
    // reports' arrival (0: ignored): a hint for a job whose reports come in bursts, never a way
    // to claim a speed it does not show.
    double throughput_hint_factor = 1.5;
    // Forecast audit per user: a user whose checked forecasts fell short of their pessimistic
    // bound more often than this fraction (honest curves: about (1 - interval_level) / 2) has
    // the utility of all their trials scaled down by the excess, to 0 when every forecast failed.
    // Reported curves are the user's word; this is what it costs to give a false one. 1: off.
    double forecast_miss_allowance = 0.25;
    // weight of a trial whose optimistic bound cannot beat its group's best (it still learns
    // something, so not zero)
    double dominated_weight = 0.05;

    // --- primal–dual price ---
    double price_lower_quantile = 0.10;  // L: this quantile of observed positive utilities
    double price_upper_quantile = 0.95;  // U: this quantile
    double price_smoothing = 0.2;        // EWMA weight of the newest round's L and U
    double price_min_ratio = 4.0;        // U/L kept at least this wide so the price can rise

    // --- decisions ---
    double preempt_margin = 0.25;  // preemptor needs utility > (1 + margin) x preemptee's
    // A trial without a forecast yet (no utility to compare) preempts a trial that has one only
    // with a Slurm priority above (1 + this) x the running trial's: under overload every running
    // trial sits below the price, and rank alone let each new trial preempt the sweeps' leaders
    // (Philly: 11,526 preemptions, time to best 40 h; with 1: 6,436 and 31 h).
    double preempt_rank_margin = 1.0;
    bool preempt_nonexploratory = false;  // may exploratory jobs preempt non-exploratory ones
    // May a job preempt another user's job at all? Utilities come from curves each user reports
    // about their own jobs; a site that does not want one user's reports to cost another user
    // GPUs switches this off (preemption then only happens between one user's own jobs).
    bool preempt_cross_user = true;
    double min_run_s = 600.0;  // a (re)started trial is not preempted before this
    // Turns among trials without a forecast (too few reports, no milestone reached: the engine
    // cannot judge them). Once such a trial has run this long since its (re)start (and min_run),
    // a waiting trial without a forecast may preempt it, and nothing else may; the one preempted
    // waits for its next turn. 0: it keeps its GPUs until it ends or reports enough. In
    // explsched-sim's philly (reports hours apart, so trials ran for hours unjudged while new ones
    // waited) 7200 cut the mean time to each sweep's best 32.8 -> 25.9 h (seeds 0-2) and
    // 34.8 -> 30.5 h (seeds 3-5) at +1.4 % / -1.9 % GPU-hours, with as many sweeps at their best
    // (99.7 %; seeds 3-5 99.5 -> 99.7 %); the other scenarios were unchanged. 3600 and 1800 lost a
    // best in pollux-heterogeneous (slow K80 trials report rarely).
    double unpredicted_turn_s = 7200.0;
    // A running trial below the price that holds its sweep's best metric (another member has
    // reported) is preempted only by a trial whose utility is at least its own price (and beats
    // the leader's by preempt_margin), or by a plain job by rank: not by another sweep's trials
    // that are below the price themselves, nor by ones without a forecast. A leader near the end
    // of its run improves little per GPU-second, so its utility is near zero, yet its sweep's
    // best model is the one it delivers at its end. explsched-sim, off -> on: philly mean time to
    // best seeds 0-2 26.4 -> 24.6 h, 6-11 30.9 -> 29.1 h (3-5 30.3 -> 30.6 h), GPU-hours within
    // 1.2 %, no sweep's best lost. Its own sweep's trials without a forecast preempt it as any
    // trial, by rank (they are the sweep's exploration: shielded from them, a new sibling that
    // would be the sweep's best waited, and on a mixed cluster started on K80s); its own sweep's
    // trials with a forecast only if worth their GPUs as well (2026-12-07: by utility alone, a
    // sibling with a chance near zero took a leader's GPUs whose utility was zero on its plateau;
    // philly mean time to best seeds 0-2 24.1 -> 21.3 h, 3-5 30.7 -> 28.4 h, GPU-hours +2.6 %
    // and -0.5 %). doc/results.md.
    bool protect_leader = true;
    double hopeless_probability = 0.02;  // P(final beats group best) below this: hopeless
    // Never call hopeless on fewer points. 6 (min_points): as soon as a curve is extrapolated
    // (8 until 2026-11-28; 6 brings the demo sweep's decisive early stops from 27-30 % of a run
    // to 20 %, and keeps every best the same; the late bloomer is kept in every replay).
    std::size_t hopeless_min_points = 6;
    // ... nor before this fraction of its run (of max_steps, else of the steps the group's
    // furthest trial has done): curves with learning-rate drops look flat early, and no
    // smooth model foresees a drop, so early judgements only make a trial preemptable
    // 0.35 since the forecast audit: the demo sweep's replay keeps its best trial at every time
    // scale tried down to 0.3 with the audit (0.35 without it lost it at 1.5 s per step).
    double hopeless_min_progress = 0.35;
    // ... or from audited_min_progress (at most hopeless_min_progress) once the forecasts of its
    // sweep (else, pooled, of its owner's sweeps of its application) have held: at least
    // audited_min_checks checked by the forecast audit below, and no more of them beaten past
    // their optimistic bound than the interval level allows (all of them under 10 checks at the
    // 80 % level). Such an early verdict is not final (final_stop_allowed, policy.hpp): the trial
    // is paused (costs nothing), or, its pause spent, gives way; it is cancelled or held only from
    // hopeless_min_progress on, or on decisive evidence. A sweep whose plateaus end or whose
    // learning rate drops beats its forecasts and keeps the late start. Added 2026-11-28 at 0.15
    // and 4 (doc/results.md): `pollux-heterogeneous` 10 % fewer GPU-hours (8 % on seeds 3-5),
    // the other scenarios within 1 %, the same sweeps at their best; the demo's late bloomer kept
    // in every replay and in the live two-user demo. 1: off.
    double audited_min_progress = 0.15;
    std::size_t audited_min_checks = 4;
    // ... except on decisive evidence: from early_stop_progress of its run on, a trial whose
    // chance to beat its sweep's best is below early_stop_probability (at most
    // hopeless_probability; 0: off) is hopeless, and its stop is final even with pausing on. A
    // chance 20x smaller than the hopeless rule asks (with the interval's heavy tails and the
    // forecast audit's widening, the predicted final must sit 6.2 optimistic half-widths of its 80 %
    // interval short of the best, against 2.1 for the hopeless rule): a
    // flat curve far behind, not a late bloomer on a plateau. The demo sweep's late bloomer never
    // fell below a chance of 0.024 at any replay speed or size tried; 0.01 lost it once
    // (doc/results.md).
    double early_stop_progress = 0.1;
    double early_stop_probability = 0.001;
    // What a sure chance of beating its sweep's best is worth, in GPU-hours (0: off, the
    // default). From hopeless_min_progress on, a trial is also hopeless when its chance p is
    // below (GPU-hours its run still needs) / chance_worth_gpu_hours, capped at
    // pause_probability: 10 % of a chance bought for more than a tenth of this. A site's trade of
    // late bloomers for GPU-hours, not a default: it cancelled the demo sweep's late bloomer
    // once its trials cost 8-16 GPUs for a day (doc/results.md).
    double chance_worth_gpu_hours = 0.0;
    // Sibling jumps: a trial at fraction f of its run whose sweep-mates' curves jumped later in
    // theirs (a learning-rate drop, a plateau that ended; curve_jumps in curves/sibling_prior.hpp)
    // has its optimistic bound moved by the most one sibling gained in jumps after f, for every
    // stopping rule that reads the chance to beat the sweep's best (hopeless, milestone, expected
    // gain, and whether a paused trial is stopped for good); its utility (its priority) and the
    // pause rule still read its own forecast: an unlikely trial is paused, not stopped. No smooth
    // curve model foresees a step; the sweep's own curves show where they are.
    bool sibling_jumps = false;
    // Forecast audit: the engine checks every forecast it makes (of the metric at twice the step
    // a curve has reached) when the curve gets there. Once a sweep has this many checked
    // forecasts, the intervals its hopeless rules read are widened (up to calibration_max_widen
    // times) until the sweep's curves would have beaten them no more often than the interval
    // level says: sweeps whose plateaus end (the demo's) get wide intervals, smooth ones keep
    // theirs. 0: no audit.
    std::size_t calibration_min_audits = 8;
    double calibration_max_widen = 5.0;
    // At a milestone (ASHA rung), a trial outside the top 1/η of its sweep's values there whose
    // chance to beat the sweep's best is below this is hopeless, however early: two signals
    // agree (the ranking at equal steps, robust to curve shape, and the extrapolation).
    // 0 (the default): milestones never stop a trial. Off by default since the replay of the
    // demo's sweep (contrib/demo/replay.py): with intervals widened by the forecast audit the
    // sweep's best still ranked 8th at its milestone with a chance near 0.05, and 0.2 stopped it
    // in 3 of 4 time scalings. The aggressive profile sets 1 (ASHA's rule).
    double milestone_stop_probability = 0.0;
    // Also stop a trial behind at a milestone while its curve is too short to extrapolate, on
    // the ranking alone (ASHA's rule). Off by default: slow starters (a small learning rate) are
    // often a sweep's best, and the ranking at 1/27 of a run cannot tell them from poor trials.
    bool milestone_stop_unpredicted = false;
    // A trial (other than its sweep's leader) whose expected improvement on the sweep's best,
    // E[max(0, final - best)], is below this fraction of the sweep's metric range is hopeless:
    // finishing it would add nothing worth its GPUs. 0: off. 0.005 since 2026-11-28: the demo
    // sweep's plateau-shaped late bloomer is kept in every replay up to 0.01 and lost from 0.015
    // (0.02, the aggressive profile's, cancels it). With hopeless_min_points 6, GPU-hours: the
    // held-out sweeps 1.01x -> 0.84x asha's, philly -11 %, every best kept (doc/results.md).
    double min_expected_gain = 0.005;
    // ... and whose predicted final is within this fraction of the sweep's metric range of the
    // sweep's best: a near tie. A trial predicted far behind with a small chance has a small
    // expected gain too, but that is the hopeless and pause rules' to judge (with their chance
    // thresholds, and a pause that can be undone): a plateau-shaped late bloomer's forecast is far
    // behind until its plateau ends. 0: no such gate. 0.2 since 2026-11-29: `philly` seeds 0-2,
    // sweeps at their best 98.9 -> 99.7 % for +4 % GPU-hours; other scenarios +0-3 % GPU-hours, bests
    // unchanged (contrib/bench_analysis.md).
    double near_tie_range = 0.2;
    // A trial (other than its sweep's leader) whose own best metric has not improved by
    // kStaleBestMargin of its sweep's metric range over this fraction of its run, that is behind
    // the sweep's best by more than that margin, and whose forecast final does not come back past
    // its own best, is hopeless (ReasonCode::stale_best): for a third of its run it has moved
    // sideways or away (a run that overfits, a rate too high), whatever chance an interval widened
    // by its sweep's forecast audit still gives it. From hopeless_min_progress on, as the other
    // rules. 0 (the default): off. Measured 2026-12-07 (contrib/bench_analysis.md): at 0.3 it saves
    // 2-8 % of GPU-hours on the held-out, fresh and Philly sweeps with every best kept, 0.15 loses
    // Pollux ImageNet bests, and the margin is thin: the Pollux ImageNet best went 0.28 of its run
    // without improving by that margin before its learning-rate drop, a step sweep with its drop
    // at half the run 0.38 (contrib/heldout/steps_late).
    double stale_best_fraction = 0.0;
    // The best track (best_track_lead, curves/sibling_prior.hpp): a trial whose metric over the
    // last tenth of its run is better, at the same fractions of their runs, than that of the
    // sibling that went on from there to the sweep's best, by more than this fraction of the
    // sweep's metric range (and twice the standard error of the difference), is on course to
    // beat that best: its chance to beat it is read as at least what its lead says (a normal
    // reading of the lead over its spread), and the near-tie rule does not judge it. 0: off.
    // 0.03 since 2026-12-02: `pollux` seeds 0-2 keeps the ImageNet best it lost (sweeps at their
    // best 98.4 -> 100 %) for +3.7 % GPU-hours (contrib/bench_analysis.md).
    double best_track_margin = 0.03;
    // The behind track (behind_track_gap, curves/sibling_prior.hpp): a trial whose metric over the
    // last tenth of the runs compared is worse, at the same fractions of their runs, than the path
    // of the sibling that reached the sweep's best, by more than this fraction of the sweep's
    // metric range (and twice the standard error of the difference), and that does not close the
    // gap fast enough to catch up by its end, is hopeless (ReasonCode::behind_track) from
    // hopeless_min_progress on, whatever chance its widened forecast interval leaves: the sibling
    // shows where the sweep's schedule goes, jumps included. Only a sibling that has made no more
    // jumps (learning-rate drops) by then than the trial, and that has got to within a tenth of
    // the trial's fraction of its run, is read. Paused (while its optimistic bound can still beat
    // the best), such a trial waits while its sweep's other members run. 0: off. 0.1 since
    // 2026-12-08 (contrib/bench_analysis.md): `philly` -7 to -11 % GPU-hours over seeds 0-8 with
    // as many sweeps at their best or more and time to best 1.24x the oracle's on seeds 0-2, `pollux`
    // 0 to -2 %, `pollux-heterogeneous` +4 % on seeds 0-2 (a trial placed on slower GPUs), -6 % on 3-5.
    double behind_track_margin = 0.1;
    // Pause and resume (freeze-thaw, core/sched/pause.hpp). A running trial past its grace
    // (min_run_s), past pause_min_progress of its run, below the GPU price while pending trials
    // want GPUs, whose chance to beat its sweep's best is below this, is paused: requeued and
    // held with its checkpoint, holding no GPU. A trial a stopping rule calls hopeless is paused
    // instead of stopped while its optimistic bound can still beat the sweep's best. A paused trial
    // is resumed (in order of its optimistic bound) when its optimistic utility is at least the
    // GPU price and GPUs are free for it; it is stopped (its hopeless action) once even its
    // optimistic bound cannot beat the sweep's best. 0: no pause (the hopeless rules act alone).
    double pause_probability = 0.2;
    double pause_min_progress = 0.1;
    // Pause without waiters: a trial the pause rule picks is paused only as far as pending trials
    // need its GPUs, unless it is past hopeless_min_progress of its run, its utility is at most
    // this fraction of the GPU price and even its optimistic utility is below the price (the
    // resume rule would not resume it): then it is paused although nobody waits, since it buys
    // next to nothing with the GPU-hours it holds. Before hopeless_min_progress it is left alone
    // (a late bloomer's plateau). 0: off.
    double pause_idle_utility = 0.0;
    // Explore first (0: off, the default): from this fraction of its run, a running trial that
    // does not lead its sweep is paused, as far as pending trials need GPUs, while members of its
    // sweep that have not reported yet wait; they get a first look before it goes on. Uses a
    // pause (pause_max). Measured in doc/results.md.
    double explore_first_progress = 0.0;
    std::uint32_t pause_max = 1;  // pauses per trial: then the hopeless action as without pause

    HopelessAction hopeless_action = HopelessAction::requeue_hold;  // site default
    double asha_reduction = 3.0;                                    // η: keep the top 1/η at each milestone
    double asha_min_step = 0.0;  // first milestone; 0: max_steps / η^asha_rungs
    std::size_t asha_rungs = 3;

    // --- Slurm priority ---
    std::uint32_t weight_value = 100000;  // utility against price
    std::uint32_t weight_age = 10000;
    std::uint32_t weight_partition = 10000;
    double max_age_s = 7 * 86400.0;     // age factor saturates here
    double nonexploratory_value = 0.5;  // value factor of jobs with no curve (0.5 = at price)
    double unknown_value = 0.5;         // value factor of trials with no prediction yet
};

// Errors name the offending field and value ("engine settings: interval_level: 1.5 not in (0,1)").
Status validate(const EngineSettings& settings);

}  // namespace explsched
