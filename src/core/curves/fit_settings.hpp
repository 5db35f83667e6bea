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
    // The fitted interval's half-width is scaled by this in the engine's forecasts. Default 1 (as
    // fitted): the engine's rules were tuned on that interval, and its forecast audit widens it
    // online per sweep, pooled per application. The scale measured by leave-one-application-out
    // cross-validation (testsuite/bench/bench_calibration, the Pollux curves and contrib/heldout)
    // is kCalibratedInterval; set as the engine's default it kept 26-61 % more GPU-hours in the
    // simulator's scenarios (doc/results.md), so only `explsched predict` reports it by default.
    double interval_calibration = 1.0;
    // ... and the data-free interval of a curve too short to fit (around its last value)
    double fallback_calibration = 1.0;
    // Sibling prior (sibling_prior.hpp): the sweep's siblings' forecast gets weight
    // n_eff / (n_eff + sibling_prior_weight) against the trial's own (0, the default: no sibling
    // prior; 1.5 is the benchmarked value); its kernel's bandwidths in units of the sweep's metric
    // range (recent shape, level); and the mixed forecast's interval scaling (cross-validated like
    // interval_calibration).
    double sibling_prior_weight = 0.0;
    double sibling_shape_bandwidth = 0.05;
    double sibling_level_bandwidth = 0.25;
    double sibling_calibration = 1.0;
};

// The calibration measured by leave-one-application-out cross-validation: the 80 % interval then
// covers 74-79 % of finals on curves never seen (contrib/heldout) at 10-50 % observed. What
// `explsched predict` reports.
inline constexpr double kCalibratedInterval = 1.78;
inline constexpr double kCalibratedFallback = 1.22;
// With siblings (`explsched predict --sibling`): the sibling prior at its benchmarked weight, the
// mixed interval scaled as cross-validated on sweeps whose other trials had all ended
// (bench_calibration's sib-ended: 80 % intervals cover 76-82 % of finals at 10-50 % observed,
// error at 25 % observed 0.48x the last value's, against 0.56x without siblings).
inline constexpr double kSiblingPriorWeight = 1.5;
inline constexpr double kCalibratedSibling = 0.906;
inline FitSettings calibrated_fit_settings() {
    FitSettings s;
    s.interval_calibration = kCalibratedInterval;
    s.fallback_calibration = kCalibratedFallback;
    return s;
}

}  // namespace explsched
