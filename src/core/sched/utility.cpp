#include "core/sched/utility.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace explsched {

namespace {

// The latest reported throughput among the last `window` points (NaN if none).
double reported_throughput(PointSpan points, std::size_t window) {
    for (std::size_t i = points.size; i > 0; --i) {
        const double t = points[i - 1].throughput;
        if (std::isfinite(t) && t > 0.0) return t;
        if (points.size - i >= window) break;  // only a recent throughput counts
    }
    return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

double observed_speed(PointSpan points, std::size_t window, double hint_factor, double run_start) {
    const bool known_start = std::isfinite(run_start) && run_start > 0.0;
    double steps = 0.0;
    double seconds = 0.0;
    std::size_t intervals = 0;
    const CurvePoint* next = nullptr;
    for (std::size_t i = points.size; i > 0 && intervals < window; --i) {
        const CurvePoint& p = points[i - 1];
        if (!std::isfinite(p.wall_time)) continue;
        if (next != nullptr && next->wall_time > p.wall_time && next->step > p.step) {
            ++intervals;
            const bool requeue_wait = known_start && p.wall_time < run_start && next->wall_time >= run_start;
            if (!requeue_wait) {
                steps += next->step - p.step;
                seconds += next->wall_time - p.wall_time;
            }
        }
        next = &p;
    }
    if (!(seconds > 0.0)) return std::numeric_limits<double>::quiet_NaN();
    const double measured = steps / seconds;
    const double hint = reported_throughput(points, window);
    if (!(hint_factor > 0.0) || std::isnan(hint)) return measured;
    return std::min(hint, measured * hint_factor);
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double win_probability(const Prediction& final_metric, Direction direction, double best_other,
                       double z_interval) {
    if (!std::isfinite(best_other)) return 1.0;  // nobody to beat yet
    if (!std::isfinite(final_metric.value)) return 0.0;
    const double sign = direction == Direction::maximize ? 1.0 : -1.0;
    const double margin = sign * (final_metric.value - best_other);
    // the optimistic side of the interval is what matters for "can it still win"
    const double optimistic = direction == Direction::maximize ? final_metric.upper - final_metric.value
                                                               : final_metric.value - final_metric.lower;
    const double sd = std::max(optimistic, 0.0) / std::max(z_interval, 1e-9);
    if (!(sd > 0.0)) return margin > 0.0 ? 1.0 : (margin == 0.0 ? 0.5 : 0.0);
    return normal_cdf(margin / sd);
}

double student_t3_cdf(double t) {
    constexpr double kPi = 3.14159265358979323846;
    const double r = t / std::sqrt(3.0);
    return 0.5 + (r / (1.0 + r * r) + std::atan(r)) / kPi;
}

namespace {

// The t3 quantile at probability p in (0.5, 1), by bisection (called once per distinct level).
double student_t3_quantile(double p) {
    double lo = 0.0, hi = 1000.0;
    for (int i = 0; i < 200; ++i) {
        const double mid = 0.5 * (lo + hi);
        (student_t3_cdf(mid) < p ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

double t3_interval_quantile(double interval_level) {
    thread_local double cached_level = -1.0, cached_q = 1.0;
    if (interval_level != cached_level) {
        cached_q = student_t3_quantile(0.5 * (1.0 + std::clamp(interval_level, 0.01, 0.999)));
        cached_level = interval_level;
    }
    return cached_q;
}

}  // namespace

double win_probability_heavy(const Prediction& final_metric, Direction direction, double best_other,
                             double interval_level) {
    if (!std::isfinite(best_other)) return 1.0;
    if (!std::isfinite(final_metric.value)) return 0.0;
    const double cached_q = t3_interval_quantile(interval_level);
    const double sign = direction == Direction::maximize ? 1.0 : -1.0;
    const double margin = sign * (final_metric.value - best_other);
    const double optimistic = direction == Direction::maximize ? final_metric.upper - final_metric.value
                                                               : final_metric.value - final_metric.lower;
    const double scale = std::max(optimistic, 0.0) / cached_q;
    if (!(scale > 0.0)) return margin > 0.0 ? 1.0 : (margin == 0.0 ? 0.5 : 0.0);
    return student_t3_cdf(margin / scale);
}

double expected_improvement_heavy(const Prediction& final_metric, Direction direction, double best_other,
                                  double interval_level) {
    if (!std::isfinite(best_other)) return std::numeric_limits<double>::infinity();
    if (!std::isfinite(final_metric.value)) return 0.0;
    const double sign = direction == Direction::maximize ? 1.0 : -1.0;
    const double margin = sign * (final_metric.value - best_other);
    const double optimistic = direction == Direction::maximize ? final_metric.upper - final_metric.value
                                                               : final_metric.value - final_metric.lower;
    const double scale = std::max(optimistic, 0.0) / t3_interval_quantile(interval_level);
    if (!(scale > 0.0)) return std::max(margin, 0.0);
    // E[max(0, T - a)] for a standard t with nu = 3: (nu + a^2)/(nu - 1) f(a) - a (1 - F(a))
    constexpr double kPi = 3.14159265358979323846;
    const double a = -margin / scale;
    const double pdf = 6.0 * std::sqrt(3.0) / (kPi * (3.0 + a * a) * (3.0 + a * a));
    const double tail = (3.0 + a * a) / 2.0 * pdf - a * (1.0 - student_t3_cdf(a));
    return std::max(scale * tail, 0.0);
}

double expected_improvement(const Prediction& final_metric, Direction direction, double best_other,
                            double z_interval) {
    if (!std::isfinite(best_other)) return std::numeric_limits<double>::infinity();
    if (!std::isfinite(final_metric.value)) return 0.0;
    const double sign = direction == Direction::maximize ? 1.0 : -1.0;
    const double margin = sign * (final_metric.value - best_other);
    const double optimistic = direction == Direction::maximize ? final_metric.upper - final_metric.value
                                                               : final_metric.value - final_metric.lower;
    const double sd = std::max(optimistic, 0.0) / std::max(z_interval, 1e-9);
    if (!(sd > 0.0)) return std::max(margin, 0.0);
    const double d = margin / sd;
    constexpr double kInvSqrt2Pi = 0.3989422804014327;
    const double ei = sd * kInvSqrt2Pi * std::exp(-0.5 * d * d) + margin * normal_cdf(d);
    return std::max(ei, 0.0);
}

double utility_per_gpu_second(const UtilityInputs& in) {
    if (!(in.gain > 0.0) || !(in.group_scale > 0.0) || !(in.gpus > 0.0) || !(in.horizon_s > 0.0)) {
        return 0.0;
    }
    const double p = std::clamp(in.win_probability, 0.0, 1.0);
    const double weight = in.dominated_weight + (1.0 - in.dominated_weight) * p;
    const double u = in.gain / in.group_scale * weight / (in.horizon_s * in.gpus);
    return std::isfinite(u) ? u : 0.0;
}

}  // namespace explsched
