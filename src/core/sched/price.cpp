#include "core/sched/price.hpp"

#include <algorithm>
#include <cmath>

namespace explsched {

PriceFunction::PriceFunction(double lower, double upper) : lower_(lower), upper_(std::max(upper, lower)) {
    log_ratio_plus_one_ = 1.0 + std::log(upper_ / lower_);
    knee_ = 1.0 / log_ratio_plus_one_;
}

double PriceFunction::operator()(double utilisation) const {
    const double u = std::clamp(utilisation, 0.0, 1.0);
    if (u <= knee_) return lower_;
    // (L/e) (eU/L)^u = L exp(u (1 + ln(U/L)) - 1): equals L at the knee and U at u = 1.
    return std::min(upper_, lower_ * std::exp(u * log_ratio_plus_one_ - 1.0));
}

PriceBoundsEstimator::PriceBoundsEstimator(double lower_quantile, double upper_quantile, double smoothing,
                                           double min_ratio)
    : lower_quantile_(lower_quantile),
      upper_quantile_(upper_quantile),
      smoothing_(smoothing),
      min_ratio_(std::max(min_ratio, 1.0 + 1e-9)) {}

void PriceBoundsEstimator::observe(std::vector<double>& utilities) {
    auto last = std::remove_if(utilities.begin(), utilities.end(),
                               [](double u) { return !(u > 0.0) || !std::isfinite(u); });
    const auto n = static_cast<std::size_t>(last - utilities.begin());
    if (n == 0) return;
    auto quantile = [&](double q) {
        const auto k = static_cast<std::size_t>(q * static_cast<double>(n - 1) + 0.5);
        auto it = utilities.begin() + static_cast<std::ptrdiff_t>(std::min(k, n - 1));
        std::nth_element(utilities.begin(), it, last);
        return *it;
    };
    const double lo = quantile(lower_quantile_);
    const double hi = quantile(upper_quantile_);
    // Utilities span decades: smooth in the log domain (a geometric EWMA), so one round with a
    // very valuable newcomer moves U by a factor, not by orders of magnitude.
    if (!has_estimate_) {
        lower_ = lo;
        upper_ = hi;
        has_estimate_ = true;
    } else {
        lower_ = std::exp((1.0 - smoothing_) * std::log(lower_) + smoothing_ * std::log(lo));
        upper_ = std::exp((1.0 - smoothing_) * std::log(upper_) + smoothing_ * std::log(hi));
    }
    // Keep U/L >= min_ratio around their geometric mean, so the price can still rise.
    if (upper_ < min_ratio_ * lower_) {
        const double centre = std::sqrt(lower_ * upper_);
        const double half = std::sqrt(min_ratio_);
        lower_ = centre / half;
        upper_ = centre * half;
    }
}

PriceFunction PriceBoundsEstimator::price() const {
    return has_estimate_ ? PriceFunction(lower_, upper_) : PriceFunction(1e-300, 1e-300 * min_ratio_);
}

}  // namespace explsched
