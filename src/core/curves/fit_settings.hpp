// The tunables of learning-curve fitting and prediction, with their defaults. The engine's
// settings (sched/engine_settings.hpp) extend this struct, so the keys of PriorityParameters map
// onto these fields there, and the curve predictor sees only what it needs.
#pragma once

#include <cstddef>

namespace explsched {

struct FitSettings {
    double interval_level = 0.8;        // central probability of the prediction interval
    std::size_t min_points_to_fit = 6;  // fewer: no extrapolation, ASHA fallback decides
    std::size_t max_fit_points = 40;    // longer curves are binned to this many points
    // a full multi-start refit when the point count grew by this fraction since the last one;
    // in between, fits are warm-started from the previous parameters (cheap update)
    double refit_growth = 0.25;
    double fit_recency_power = 1.0;    // point weight ~ (step / last step)^power
    double backtest_split = 0.7;       // mixing weights: fit up to this fraction of the last
                                       // step, score the forecast of the rest
    double agreement_shrinkage = 1.0;  // kappa: gain kept = gain^2 / (gain^2 + kappa var)
};

}  // namespace explsched
