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
#include <vector>

#include "core/curves/fit_settings.hpp"
#include "core/curves/prediction.hpp"
#include "core/curves/trial.hpp"

namespace explsched {

// One sibling's curve, as the sweep keeps it (at most kSiblingCurvePoints points, see
// thin_curve): `length` is the step its run ends at (max_steps; for an ended sibling its last
// step); `ended` when it will not go further.
struct SiblingCurve {
    std::vector<double> steps;
    std::vector<double> metrics;
    double length = 0.0;
    bool ended = false;
};

// Points a sibling curve is thinned to before it is kept (bounded memory and cost per forecast).
constexpr std::size_t kSiblingCurvePoints = 48;

// The curve's points thinned to at most `max_points` (evenly by index, first and last kept).
void thin_curve(const std::vector<double>& steps, const std::vector<double>& metrics, std::size_t max_points,
                std::vector<double>& out_steps, std::vector<double>& out_metrics);

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

}  // namespace explsched
