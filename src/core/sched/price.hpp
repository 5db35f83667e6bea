// Primal–dual GPU price (online knapsack / OASiS style). A GPU-second is priced by how full the
// cluster is: at low load anything worth at least L runs; as utilisation u -> 1 the price rises
// exponentially to U, so the last GPUs go only to the most valuable trials. With per-GPU-second
// values in [L, U] this threshold rule is (1 + ln(U/L))-competitive (doc/algorithm.md).
#pragma once

#include <vector>

namespace explsched {

class PriceFunction {
public:
    // Requires 0 < lower < upper (the caller's estimator guarantees it).
    PriceFunction(double lower, double upper);

    // p(u) = L for u <= u*, (L/e)·(e·U/L)^u above, u* = 1/(1 + ln(U/L)); u clamped to [0, 1].
    // Continuous, non-decreasing, p(0) = L, p(1) = U.
    double operator()(double utilisation) const;
    double lower() const { return lower_; }
    double upper() const { return upper_; }
    double knee() const { return knee_; }  // u*

private:
    double lower_;
    double upper_;
    double knee_;
    double log_ratio_plus_one_;  // 1 + ln(U/L)
};

// Online estimate of the bounds L and U from the utilities observed each round: robust quantiles
// of the positive utilities, smoothed across rounds (EWMA) so one odd round cannot swing the
// price, and kept at least `min_ratio` apart. Deterministic: depends only on the rounds seen.
class PriceBoundsEstimator {
public:
    PriceBoundsEstimator(double lower_quantile, double upper_quantile, double smoothing, double min_ratio);

    // `utilities` is scratch: reordered in place (nth_element). Non-positive/non-finite values
    // are ignored. With nothing positive observed yet, the bounds stay as they were.
    void observe(std::vector<double>& utilities);
    bool has_estimate() const { return has_estimate_; }
    // Valid only when has_estimate(); before that the engine treats price as 0.
    PriceFunction price() const;
    double lower() const { return lower_; }
    double upper() const { return upper_; }

private:
    double lower_quantile_;
    double upper_quantile_;
    double smoothing_;
    double min_ratio_;
    bool has_estimate_ = false;
    double lower_ = 0.0;
    double upper_ = 0.0;
};

}  // namespace explsched
