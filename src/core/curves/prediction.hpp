// The answer of the learning-curve extrapolator: a predicted metric at a step, with an interval.
#pragma once

#include <cstddef>
#include <limits>

namespace explsched {

struct Prediction {
    static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

    double value = kNaN;  // predicted metric at `horizon`
    double lower = kNaN;  // interval bounds (lower <= value <= upper), in metric units
    double upper = kNaN;
    double horizon = kNaN;     // step the prediction is for
    std::size_t observed = 0;  // points the prediction rests on
    // false when too few points (or no family fitted): value is then the last observed metric
    // and the interval a wide, data-free guess; policy must not trust it.
    bool extrapolated = false;
    // How many times the fitted interval was widened (around `value`) because the trial's sweep
    // kept beating the engine's forecasts (the forecast audit); 1: as fitted.
    double widened = 1.0;
    // How far its optimistic bound was moved (metric units) for the jumps its sweep's other
    // trials made later in their runs (sibling_jumps); 0: none.
    double jump_allowance = 0.0;
    // How far the trial runs ahead of the path its sweep's best took, at the same fractions of
    // their runs (best_track_margin; metric units, 0: not ahead by the margin), and the chance to
    // beat the sweep's best that lead gives it (its chance is read as at least that).
    double track_lead = 0.0;
    double track_chance = 0.0;
};

}  // namespace explsched
