#include "core/curves/sibling_prior.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/curves/curve_ensemble.hpp"

namespace explsched {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double median3(double a, double b, double c) { return std::max(std::min(a, b), std::min(std::max(a, b), c)); }

// Linear interpolation of ys over xs (increasing) at x, clamped to the ends.
double interp(const std::vector<double>& xs, const std::vector<double>& ys, double x) {
    if (x <= xs.front()) return ys.front();
    if (x >= xs.back()) return ys.back();
    const auto it = std::upper_bound(xs.begin(), xs.end(), x);
    const std::size_t i = static_cast<std::size_t>(it - xs.begin());
    const double t = (x - xs[i - 1]) / std::max(xs[i] - xs[i - 1], 1e-300);
    return ys[i - 1] + t * (ys[i] - ys[i - 1]);
}

struct Orient {
    bool log_space;
    double sign;
    double operator()(double m) const { return log_space ? -std::log(m) : sign * m; }
    double back(double v) const { return log_space ? std::exp(-std::clamp(v, -700.0, 700.0)) : sign * v; }
};

}  // namespace

void thin_curve(const std::vector<double>& steps, const std::vector<double>& metrics, std::size_t max_points,
                std::vector<double>& out_steps, std::vector<double>& out_metrics) {
    out_steps.clear();
    out_metrics.clear();
    const std::size_t n = std::min(steps.size(), metrics.size());
    if (n <= max_points || max_points < 2) {
        out_steps.assign(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(n));
        out_metrics.assign(metrics.begin(), metrics.begin() + static_cast<std::ptrdiff_t>(n));
        return;
    }
    for (std::size_t k = 0; k < max_points; ++k) {
        const std::size_t i = k * (n - 1) / (max_points - 1);
        out_steps.push_back(steps[i]);
        out_metrics.push_back(metrics[i]);
    }
}

void curve_jumps(const std::vector<double>& steps, const std::vector<double>& metrics, Direction direction,
                 double length, std::vector<CurveJump>& out) {
    out.clear();
    const std::size_t n = std::min(steps.size(), metrics.size());
    constexpr std::size_t kBefore = 4, kAfter = 3, kNoiseWindow = 8;
    if (n < kBefore + kAfter || !(length > 0.0)) return;
    const double sign = direction == Direction::maximize ? 1.0 : -1.0;
    double lo = kInfinity, hi = -kInfinity;
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(metrics[i])) return;
        lo = std::min(lo, sign * metrics[i]);
        hi = std::max(hi, sign * metrics[i]);
    }
    const double floor = kJumpMinShare * (hi - lo);
    if (!(floor > 0.0)) return;
    std::array<double, kNoiseWindow> moves{};
    for (std::size_t k = kBefore; k + kAfter <= n; ++k) {
        double before = -kInfinity, after = kInfinity;
        for (std::size_t i = k - kBefore; i < k; ++i) before = std::max(before, sign * metrics[i]);
        for (std::size_t i = k; i < k + kAfter; ++i) after = std::min(after, sign * metrics[i]);
        const double gain = after - before;
        if (!(gain > floor)) continue;
        std::size_t m = 0;
        for (std::size_t i = k > kNoiseWindow ? k - kNoiseWindow : 1; i < k; ++i)
            moves[m++] = std::fabs(metrics[i] - metrics[i - 1]);
        std::nth_element(moves.begin(), moves.begin() + static_cast<std::ptrdiff_t>(m / 2),
                         moves.begin() + static_cast<std::ptrdiff_t>(m));
        if (!(gain > kJumpNoise * moves[m / 2])) continue;
        out.push_back(CurveJump{std::clamp(steps[k] / length, 0.0, 1.0), gain});
    }
    if (out.size() > kMaxJumps) {
        std::stable_sort(out.begin(), out.end(),
                         [](const CurveJump& a, const CurveJump& b) { return a.gain > b.gain; });
        out.resize(kMaxJumps);
        std::sort(out.begin(), out.end(),
                  [](const CurveJump& a, const CurveJump& b) { return a.fraction < b.fraction; });
    }
}

double jump_gain_beyond(const SiblingCurve& sibling, double fraction, std::size_t own_jumps) {
    double sum = 0.0;
    // jumps are kept in the order of the curve (curve_jumps keeps the largest kMaxJumps in order)
    for (std::size_t k = own_jumps; k < sibling.jumps.size(); ++k) {
        if (sibling.jumps[k].fraction * kJumpStretch > fraction) sum += sibling.jumps[k].gain;
    }
    return sum;
}

SiblingForecast sibling_forecast(const std::vector<double>& steps, const std::vector<double>& metrics,
                                 Direction direction, double length, bool log_space,
                                 const std::vector<const SiblingCurve*>& siblings,
                                 const FitSettings& settings) {
    SiblingForecast out;
    const std::size_t n = std::min(steps.size(), metrics.size());
    if (n == 0 || !(length > 0.0) || siblings.empty()) return out;
    const Orient o{log_space, direction == Direction::maximize ? 1.0 : -1.0};
    const double u_now = steps[n - 1] / length;
    if (!(u_now < 1.0)) return out;
    // the trial: oriented values by fraction of its run
    std::vector<double> tu(n), ty(n);
    double lo = o(metrics[0]), hi = lo;
    for (std::size_t i = 0; i < n; ++i) {
        tu[i] = steps[i] / length;
        ty[i] = o(metrics[i]);
        lo = std::min(lo, ty[i]);
        hi = std::max(hi, ty[i]);
    }
    const double level = n >= 3 ? median3(ty[n - 3], ty[n - 2], ty[n - 1]) : ty[n - 1];
    // the points whose shape is compared: the recent half of the run so far, at most 8
    std::vector<std::size_t> probe;
    for (std::size_t i = 0; i < n; ++i) {
        if (tu[i] >= 0.5 * u_now) probe.push_back(i);
    }
    if (probe.size() > 8) {
        std::vector<std::size_t> thin;
        for (std::size_t k = 0; k < 8; ++k) thin.push_back(probe[k * (probe.size() - 1) / 7]);
        probe.swap(thin);
    }
    struct Vote {
        double d, w, shape, level;
    };
    std::vector<Vote> votes;
    std::vector<double> su, sy;
    for (const SiblingCurve* sib : siblings) {
        if (sib == nullptr || !(sib->length > 0.0) || sib->steps.size() < 2) continue;
        const double end_u = std::min(1.0, sib->steps.back() / sib->length);
        if (!(end_u > u_now + 0.02) || sib->steps.front() / sib->length > u_now) continue;
        bool usable = true;
        su.resize(sib->steps.size());
        sy.resize(sib->steps.size());
        for (std::size_t i = 0; i < sib->steps.size() && usable; ++i) {
            if (log_space && !(sib->metrics[i] > 0.0)) usable = false;
            su[i] = sib->steps[i] / sib->length;
            sy[i] = usable ? o(sib->metrics[i]) : 0.0;
            if (!std::isfinite(sy[i])) usable = false;
        }
        if (!usable) continue;
        for (double v : sy) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        const double s_level =
            n >= 3 ? median3(interp(su, sy, tu[n - 3]), interp(su, sy, tu[n - 2]), interp(su, sy, tu[n - 1]))
                   : interp(su, sy, u_now);
        const double s_end = interp(su, sy, end_u);
        double shape = 0.0;
        for (std::size_t i : probe) {
            const double diff = (ty[i] - level) - (interp(su, sy, tu[i]) - s_level);
            shape += diff * diff;
        }
        shape /= static_cast<double>(std::max<std::size_t>(probe.size(), 1));
        const double reach = (end_u - u_now) / (1.0 - u_now);  // < 1: a running sibling
        votes.push_back({s_end - s_level, reach * reach, shape, (level - s_level) * (level - s_level)});
    }
    // Similarity in units of the sweep's range: a sibling whose recent shape and level are the
    // trial's votes with full weight; others fade out (Gaussian kernel).
    // The trial's own observed range: siblings are alike when they differ by a fraction of what
    // the trial itself has moved (the sweep's range is set by its worst runs).
    double own_lo = ty[0], own_hi = ty[0];
    for (double v : ty) {
        own_lo = std::min(own_lo, v);
        own_hi = std::max(own_hi, v);
    }
    const double scale = std::max(std::min(hi - lo, own_hi - own_lo), 1e-9);
    const double h_shape = settings.sibling_shape_bandwidth * scale,
                 h_level = settings.sibling_level_bandwidth * scale;
    for (Vote& v : votes) {
        const double dist2 = v.shape / (h_shape * h_shape) + v.level / (h_level * h_level);
        v.w *= std::exp(-0.5 * std::min(dist2, 700.0));
    }
    double w_sum = 0.0, w_sq = 0.0, d_sum = 0.0;
    for (const Vote& v : votes) {
        w_sum += v.w;
        w_sq += v.w * v.w;
        d_sum += v.w * v.d;
    }
    if (!(w_sum > 1e-12)) return out;
    const double d_mean = d_sum / w_sum;
    double var = 0.0;
    for (const Vote& v : votes) var += v.w * (v.d - d_mean) * (v.d - d_mean);
    var /= w_sum;
    out.n_eff = w_sum * w_sum / std::max(w_sq, 1e-300);
    out.weight = w_sum;
    out.mean = level + d_mean;
    out.sd = std::sqrt(var * (1.0 + 1.0 / out.n_eff) + 0.0001 * scale * scale);
    return out;
}

Prediction prior_forecast(const Prediction& own, const std::vector<double>& steps,
                          const std::vector<double>& metrics, Direction direction, double length,
                          const std::vector<const SiblingCurve*>& siblings, const FitSettings& settings) {
    if (!own.extrapolated || siblings.empty() || settings.sibling_prior_weight <= 0.0) return own;
    bool log_space = direction == Direction::minimize && !metrics.empty();
    for (double m : metrics) log_space = log_space && m > 0.0;
    const SiblingForecast sib =
        sibling_forecast(steps, metrics, direction, length, log_space, siblings, settings);
    if (!(sib.weight > 1e-6)) return own;
    const Orient o{log_space, direction == Direction::maximize ? 1.0 : -1.0};
    const double z = interval_z(settings.interval_level);
    // the own interval as fitted (predict() scaled it by its calibration)
    const double k_own = std::max(settings.interval_calibration, 1e-9);
    const double m_own = o(own.value);
    const double sd_own = std::fabs(o(own.upper) - o(own.lower)) / (2.0 * z * k_own);
    if (!std::isfinite(m_own) || !std::isfinite(sd_own)) return own;
    const double alpha = sib.weight / (sib.weight + settings.sibling_prior_weight);
    const double mean = alpha * sib.mean + (1.0 - alpha) * m_own;
    const double var = alpha * sib.sd * sib.sd + (1.0 - alpha) * sd_own * sd_own +
                       alpha * (1.0 - alpha) * (sib.mean - m_own) * (sib.mean - m_own);
    const double sd = std::sqrt(var) * settings.sibling_calibration;
    Prediction out = own;
    out.value = o.back(mean);
    const double a = o.back(mean - z * sd), b = o.back(mean + z * sd);
    out.lower = std::min(a, b);
    out.upper = std::max(a, b);
    return out;
}

namespace {

// A kept sibling curve a track can be read from: two points or more, its run's length known.
bool track_usable(const SiblingCurve* c) {
    return c != nullptr && c->steps.size() >= 2 && c->length > 0.0 && c->steps.size() == c->metrics.size();
}

// The oriented difference between a trial's points and `r`'s path at the same fractions of their
// runs, over the last kTrackWindow before `end` (at least kTrackMinPoints, the newest
// kTrackMaxPoints): its mean, spread and slope into `out`. Too few points: `out` reset.
void window_gap(const std::vector<double>& steps, const std::vector<double>& metrics, std::size_t n,
                double sign, double length, const SiblingCurve& r, double end, TrackLead& out) {
    double sum = 0.0, sum2 = 0.0, sum_g = 0.0, sum_gg = 0.0, sum_gd = 0.0;
    std::size_t k = 0;
    for (std::size_t i = n; i-- > 0 && k < kTrackMaxPoints;) {
        const double g = steps[i] / length;
        if (g > end) continue;
        if (k >= kTrackMinPoints && g < end - kTrackWindow) break;
        // the reference at the same fraction of its run
        const double at_ref = g * r.length;
        if (at_ref < r.steps.front() || !std::isfinite(metrics[i])) continue;
        const double d = sign * (metrics[i] - interp(r.steps, r.metrics, at_ref));
        if (!std::isfinite(d)) continue;
        sum += d;
        sum2 += d * d;
        sum_g += g;
        sum_gg += g * g;
        sum_gd += g * d;
        ++k;
    }
    if (k < kTrackMinPoints) {
        out = TrackLead{};
        return;
    }
    const double kd = static_cast<double>(k);
    out.points = k;
    out.fraction = end;
    out.lead = sum / kd;
    out.sd = std::sqrt(std::max(0.0, (sum2 - kd * out.lead * out.lead) / (kd - 1.0)));
    const double spread_g = sum_gg - sum_g * sum_g / kd;
    out.slope = spread_g > 0.0 ? (sum_gd - sum_g * sum / kd) / spread_g : 0.0;
}

}  // namespace

TrackLead best_track_lead(const std::vector<double>& steps, const std::vector<double>& metrics,
                          Direction direction, double length,
                          const std::vector<const SiblingCurve*>& siblings, double best, double tolerance) {
    TrackLead out;
    const std::size_t n = std::min(steps.size(), metrics.size());
    if (n < kTrackMinPoints || !(length > 0.0) || !std::isfinite(best) || !(tolerance >= 0.0)) return out;
    const double sign = direction == Direction::maximize ? 1.0 : -1.0;
    const double at = steps[n - 1] / length;
    out.fraction = at;
    // the reference: the sibling that did best from this fraction of its run on
    double top = -kInfinity;
    for (const SiblingCurve* c : siblings) {
        if (!track_usable(c)) continue;
        if (!(c->steps.back() / c->length >= at) || !(c->steps.front() / c->length <= at)) continue;
        double from_here = -kInfinity;
        for (std::size_t i = 0; i < c->steps.size(); ++i) {
            if (c->steps[i] / c->length >= at && std::isfinite(c->metrics[i]))
                from_here = std::max(from_here, sign * c->metrics[i]);
        }
        if (from_here > top) {
            top = from_here;
            out.reference = c;
        }
    }
    if (out.reference == nullptr || !(top >= sign * best - tolerance)) {
        out.reference = nullptr;
        return out;
    }
    window_gap(steps, metrics, n, sign, length, *out.reference, at, out);
    return out;
}

TrackLead behind_track_gap(const std::vector<double>& steps, const std::vector<double>& metrics,
                           Direction direction, double length,
                           const std::vector<const SiblingCurve*>& siblings, double best, double tolerance,
                           std::size_t own_jumps) {
    TrackLead out;
    const std::size_t n = std::min(steps.size(), metrics.size());
    if (n < kTrackMinPoints || !(length > 0.0) || !std::isfinite(best) || !(tolerance >= 0.0)) return out;
    const double sign = direction == Direction::maximize ? 1.0 : -1.0;
    // the reference: the sibling that reached the sweep's best
    double top = -kInfinity;
    const SiblingCurve* reference = nullptr;
    for (const SiblingCurve* c : siblings) {
        if (!track_usable(c)) continue;
        for (double v : c->metrics) {
            if (std::isfinite(v) && sign * v > top) {
                top = sign * v;
                reference = c;
            }
        }
    }
    if (reference == nullptr || !(top >= sign * best - tolerance)) return out;
    const double at = steps[n - 1] / length;
    const double end = std::min(at, reference->steps.back() / reference->length);
    if (!(at - end <= kTrackWindow)) return out;  // the reference lags too far
    std::size_t ref_jumps = 0;
    for (const CurveJump& jump : reference->jumps)
        if (jump.fraction <= end) ++ref_jumps;
    if (ref_jumps > own_jumps) return out;  // a drop the trial may still make
    out.reference = reference;
    window_gap(steps, metrics, n, sign, length, *reference, end, out);
    return out;
}

}  // namespace explsched
