// What a sweep already knows about a trial's future: its siblings' curves. Trials of one sweep
// share a data set, a model and a schedule, so a sibling that has already run past the point a
// trial has reached (it ended, or it started earlier) shows how such curves go on from there. The
// sibling prior reads that as a nearest-neighbour forecast, in fractions of each run (so siblings
// with other step counts, such as other batch sizes, line up by epoch), and mixes it with the
// trial's own ensemble forecast by how many similar siblings there are. Then every interval is
// scaled by a calibration factor measured by leave-one-application-out cross-validation on real
// sweeps (testsuite/bench/bench_calibration), because intervals fitted to one curve are
// overconfident on curves whose future the past does not show.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "core/curves/fit_settings.hpp"
#include "core/curves/prediction.hpp"
#include "core/curves/trial.hpp"

namespace explsched {

// A jump in a curve: at `fraction` of its run its metric moved the right way by `gain` (metric
// units) within a few points, far beyond its point-to-point noise before: a learning-rate drop, a
// plateau that ended (curve_jumps).
struct CurveJump {
    double fraction = 0.0;
    double gain = 0.0;
};

// One sibling's curve, as the sweep keeps it (at most kSiblingCurvePoints points, see
// thin_curve): `length` is the step its run ends at (max_steps; for an ended sibling its last
// step); `ended` when it will not go further.
struct SiblingCurve {
    std::vector<double> steps;
    std::vector<double> metrics;
    double length = 0.0;
    bool ended = false;
    std::vector<CurveJump> jumps;  // curve_jumps of the kept points
};

// Points a sibling curve is thinned to before it is kept (bounded memory and cost per forecast).
constexpr std::size_t kSiblingCurvePoints = 48;

// The curve's points thinned to at most `max_points` (evenly by index, first and last kept).
void thin_curve(const std::vector<double>& steps, const std::vector<double>& metrics, std::size_t max_points,
                std::vector<double>& out_steps, std::vector<double>& out_metrics);

// The jumps of a curve whose run ends at `length` (its points thinned as kept, so that noise is
// judged at one scale), oriented by `direction`. A jump at point k: the worst of points k..k+2
// beats the best of the four before by more than kJumpNoise times the median point-to-point move
// of the eight intervals before it and by more than kJumpMinShare of the curve's own range. A dip
// and its recovery is no jump (the recovery does not beat the level before the dip); a steady
// steep climb is none either (its moves are its noise). At most kMaxJumps, the largest kept.
constexpr double kJumpNoise = 3.0;
constexpr double kJumpMinShare = 0.05;
constexpr std::size_t kMaxJumps = 8;
void curve_jumps(const std::vector<double>& steps, const std::vector<double>& metrics, Direction direction,
                 double length, std::vector<CurveJump>& out);

// What one sibling gained in the jumps a trial that made `own_jumps` jumps of its own so far, at
// `fraction` of its run, has yet to meet: its jumps after its first `own_jumps` (the trial passed
// those) whose fraction of the sibling's run, times kJumpStretch, the trial has not passed yet.
// Trials line up by their jumps, not by the fraction of their runs: a slower learner (a smaller
// learning rate) meets the same drop later in its run; kJumpStretch bounds how much later (a trial
// that never jumps is judged on its own curve from then on). A trial's optimistic bound allows
// for the most any sibling gains so (SiblingStore::jump_allowance; sibling_jumps).
constexpr double kJumpStretch = 1.5;
double jump_gain_beyond(const SiblingCurve& sibling, double fraction, std::size_t own_jumps);

// The sibling-based forecast alone (diagnostics and tests): in oriented units (larger is better;
// -ln m for a positive minimised metric when `log_space`), the predicted final level `mean`, its
// spread `sd`, the effective number of siblings `n_eff` it rests on (0: none usable) and their
// summed similarity `weight`, which sets how far it is trusted against the trial's own forecast.
struct SiblingForecast {
    double mean = 0.0;
    double sd = 0.0;
    double n_eff = 0.0;
    double weight = 0.0;  // the siblings' summed similarity (each at most 1)
};

// `steps`/`metrics`: the trial's curve (cleaned); `length`: the step its run ends at (max_steps;
// the forecast horizon). Siblings that have not run past the trial's fraction of its run, or
// whose curves cannot be read in the same orientation, are skipped.
SiblingForecast sibling_forecast(const std::vector<double>& steps, const std::vector<double>& metrics,
                                 Direction direction, double length, bool log_space,
                                 const std::vector<const SiblingCurve*>& siblings,
                                 const FitSettings& settings = FitSettings{});

// The trial's forecast of its metric at `length` (its `own` ensemble prediction for that step)
// with what its siblings know mixed in, the interval scaled by settings.sibling_calibration.
// Without usable siblings, or when `own` is not extrapolated (too few points): `own`.
Prediction prior_forecast(const Prediction& own, const std::vector<double>& steps,
                          const std::vector<double>& metrics, Direction direction, double length,
                          const std::vector<const SiblingCurve*>& siblings, const FitSettings& settings);

// How far a trial runs ahead of the path its sweep's best took (the best track). Trials of one
// sweep run one schedule: a trial whose metric, at the same fractions of its run, is better than
// the metric of the sibling that went on from there to the sweep's best is on course to beat that
// best, whatever a smooth extrapolation of its own plateau says (an ImageNet trial before its
// learning-rate drop). `reference` is the kept sibling whose best from the trial's fraction on is
// the highest, if that is within `tolerance` of `best` (the sweep's best metric; metric units);
// the trial's points over the last kTrackWindow of its run (at least kTrackMinPoints, the newest
// kTrackMaxPoints) are compared with it, interpolated at their fractions. `lead`: the mean
// oriented difference (> 0: ahead), `sd` their spread, `points` how many (0: no reference or too
// few points; then lead is NaN).
constexpr double kTrackWindow = 0.1;
constexpr std::size_t kTrackMinPoints = 3;
constexpr std::size_t kTrackMaxPoints = 32;
struct TrackLead {
    double lead = std::numeric_limits<double>::quiet_NaN();
    double sd = 0.0;
    std::size_t points = 0;
    double fraction = 0.0;  // of the trial's run, where the compared window ends
    double slope = 0.0;     // of the difference per unit fraction of the run, over the same points
    const SiblingCurve* reference = nullptr;
};
TrackLead best_track_lead(const std::vector<double>& steps, const std::vector<double>& metrics,
                          Direction direction, double length,
                          const std::vector<const SiblingCurve*>& siblings, double best, double tolerance);

// How far a trial runs behind the path of the sibling that reached its sweep's best (the behind
// track, behind_track_margin). `reference` is the kept sibling whose best metric is the highest,
// if that is within `tolerance` of `best`. The window ends where the shorter of the two runs is
// now (as a fraction of each run) and must reach to within kTrackWindow of the trial's own
// fraction: a reference that lags further says nothing about where the trial is now. A
// reference that has made more jumps (curve_jumps: learning-rate drops, plateaus that ended) by
// the window's end than the trial's `own_jumps` is no reference: the gap may be a drop the trial
// has still to make. `lead` (< 0: behind), `sd`, `points` as best_track_lead; `slope` tells
// whether the gap is closing (> 0) over the window.
TrackLead behind_track_gap(const std::vector<double>& steps, const std::vector<double>& metrics,
                           Direction direction, double length,
                           const std::vector<const SiblingCurve*>& siblings, double best, double tolerance,
                           std::size_t own_jumps);

}  // namespace explsched
