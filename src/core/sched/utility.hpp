// Utility: the training profit the next stretch of GPU time buys a trial, per GPU-second.
//
//   utility = (gain over the next horizon_s at the trial's speed on its GPU type / group scale)
//             x weight(chance to beat the group's best)  /  (horizon_s x GPUs)
//
// The gain is normalised by the group's metric range so that trials with different metrics (an
// accuracy, a loss) compare on one scale: "fraction of the sweep's spread gained per GPU-second".
#pragma once

#include <cstddef>
#include <limits>

#include "core/curves/prediction.hpp"
#include "core/curves/trial.hpp"

namespace explsched {

// Steps per second as measured: the steps made over the wall time they took, across the last
// `window` intervals between points with a wall time (in slurmctld the wall time is explschedd's
// clock when it accepted the report: the client cannot pick it). Steps over time, not a median of
// per-interval rates: a client that sends its reports in bursts (1 ms apart, then a long pause)
// would make most intervals look 1000 times faster than the training is, while the sum is what
// the trial really achieved per second. (Inflating the steps themselves buys nothing: the curve
// stretches by the same factor, so the gain per second stays.) The interval that straddles
// `run_start` (when the current run began; NaN or <= 0: unknown) is the wait of a requeue, not
// training, and is left out. A client's own reported throughput is only a hint: it is taken when
// lower than the measured speed x `hint_factor`, else that bound is; with no measured speed, or
// hint_factor 0, it is ignored. NaN when nothing was measured.
double observed_speed(PointSpan points, std::size_t window = 8, double hint_factor = 1.5,
                      double run_start = std::numeric_limits<double>::quiet_NaN());

// Standard normal CDF.
double normal_cdf(double z);

// Probability that the trial's final metric beats `best_other` (direction-aware), reading the
// prediction interval as a normal with half-width z_interval standard deviations.
double win_probability(const Prediction& final_metric, Direction direction, double best_other,
                       double z_interval);

// The same chance with heavy tails: the interval read as a Student t with 3 degrees of freedom
// whose central `interval_level` covers it. Extrapolation errors are heavy-tailed (a plateau that
// ends, a learning-rate drop): a trial 2 half-widths short of the best keeps a chance of 2.3 %
// where the normal reading gives 0.5 %. What the hopeless rules use.
double win_probability_heavy(const Prediction& final_metric, Direction direction, double best_other,
                             double interval_level);
// Student t (3 degrees of freedom) CDF, closed form.
double student_t3_cdf(double t);

// Expected improvement of the trial's final metric on `best_other`, E[max(0, final - best)]
// (direction-aware, in metric units), with the same normal reading of the interval: what
// finishing the trial is expected to add to its sweep's best. Infinite when nobody is ahead.
double expected_improvement(const Prediction& final_metric, Direction direction, double best_other,
                            double z_interval);

// The same with the heavy-tailed (t3) reading of the interval, as win_probability_heavy.
double expected_improvement_heavy(const Prediction& final_metric, Direction direction, double best_other,
                                  double interval_level);

struct UtilityInputs {
    double gain = 0.0;             // predicted improvement in metric units, direction-aware
    double group_scale = 1.0;      // the group's metric spread (> 0)
    double win_probability = 1.0;  // chance to beat the group's best, [0, 1]
    double dominated_weight = 0.05;
    double gpus = 1.0;
    double horizon_s = 900.0;
};

// 0 for a non-positive gain; never negative or NaN.
double utility_per_gpu_second(const UtilityInputs& in);

}  // namespace explsched
