#include "core/curves/curve_ensemble.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/curves/curve_fit.hpp"

namespace explsched {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Two-sided normal quantile for a central interval of probability `level` (Acklam-free: the
// levels we use are bracketed by a short table and interpolated; exactness is not needed for an
// interval whose width is itself an estimate).
double interval_z_impl(double level) {
    static constexpr double kLevels[] = {0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.999};
    static constexpr double kZ[] = {0.6745, 0.8416, 1.0364, 1.2816, 1.6449, 1.9600, 2.3263, 2.5758, 3.2905};
    if (level <= kLevels[0]) return kZ[0] * level / kLevels[0];
    for (std::size_t i = 1; i < std::size(kLevels); ++i) {
        if (level <= kLevels[i]) {
            const double t = (level - kLevels[i - 1]) / (kLevels[i] - kLevels[i - 1]);
            return kZ[i - 1] + t * (kZ[i] - kZ[i - 1]);
        }
    }
    return kZ[std::size(kZ) - 1];
}

}  // namespace

double interval_z(double level) { return interval_z_impl(level); }

CurvePredictor::CurvePredictor(Direction direction, const FitSettings& settings)
    : direction_(direction), settings_(settings) {}

void CurvePredictor::clear() {
    steps_.clear();
    metrics_.clear();
    fits_ = {};
    weights_ = {};
    fitted_ = false;
    points_at_full_refit_ = 0;
    noise_sigma_ = 0.0;
}

void CurvePredictor::assign(const CleanCurve& curve) {
    clear();
    steps_ = curve.steps;
    metrics_ = curve.metrics;
    refit(true);
}

Status CurvePredictor::append(double step, double metric) {
    if (!std::isfinite(step) || !std::isfinite(metric)) {
        return make_error("curve point: step " + std::to_string(step) + " metric " + std::to_string(metric) +
                          ": not finite");
    }
    if (!steps_.empty() && step <= steps_.back()) {
        return make_error("curve point: step " + std::to_string(step) + ": not after the last step " +
                          std::to_string(steps_.back()));
    }
    steps_.push_back(step);
    metrics_.push_back(metric);
    const bool full = points_at_full_refit_ == 0 ||
                      static_cast<double>(steps_.size()) >=
                          (1.0 + settings_.refit_growth) * static_cast<double>(points_at_full_refit_);
    refit(full);
    return {};
}

Status CurvePredictor::extend(const CleanCurve& curve) {
    const std::size_t have = steps_.size();
    if (curve.steps.size() < have || (have > 0 && (curve.steps[have - 1] != steps_.back() ||
                                                   curve.metrics[have - 1] != metrics_.back()))) {
        return make_error("curve: the new points do not continue the cached curve");
    }
    if (curve.steps.size() == have) return {};
    steps_.insert(steps_.end(), curve.steps.begin() + static_cast<std::ptrdiff_t>(have), curve.steps.end());
    metrics_.insert(metrics_.end(), curve.metrics.begin() + static_cast<std::ptrdiff_t>(have),
                    curve.metrics.end());
    const bool full = points_at_full_refit_ == 0 ||
                      static_cast<double>(steps_.size()) >=
                          (1.0 + settings_.refit_growth) * static_cast<double>(points_at_full_refit_);
    refit(full);
    return {};
}

double CurvePredictor::best_metric() const {
    if (metrics_.empty()) return 0.0;
    return direction_ == Direction::maximize ? *std::max_element(metrics_.begin(), metrics_.end())
                                             : *std::min_element(metrics_.begin(), metrics_.end());
}

// The curve in normalised coordinates, binned to at most max_fit_points points.
struct CurvePredictor::Normalised {
    std::vector<double> x, y, w;
};

namespace {

// Fits every family to data[0, n) (n <= data size), from the warm fits when given, else from
// data-derived guesses.
void fit_families(const double* x, const double* y, const double* w, std::size_t n,
                  const std::array<FamilyFit, kFamilyCount>* warm, std::size_t only,
                  std::array<FamilyFit, kFamilyCount>& out) {
    for (std::size_t k = 0; k < kFamilyCount; ++k) {
        if (only < kFamilyCount && k != only) continue;
        const Family family = kAllFamilies[k];
        FitOptions options;
        std::array<Params, 3> starts{};
        std::size_t n_starts = 0;
        if (warm != nullptr && (*warm)[k].ok) {
            // a warm start from the fit one point ago is already near the optimum: one short
            // LM run, no reweighting (the full refits keep the robust weights honest)
            starts[n_starts++] = (*warm)[k].theta;
            options.irls_rounds = 0;
            options.max_evaluations = 20;
        } else {
            n_starts = initial_guesses(family, x, y, n, starts);
            options.irls_rounds = 1;
            // Start LM only from the guess that already fits best: the guesses differ in where
            // they put the asymptote, and LM from the better one reaches the same optimum at
            // half the cost of trying both.
            if (n_starts > 1) {
                std::size_t best = 0;
                double best_sse = std::numeric_limits<double>::infinity();
                for (std::size_t g = 0; g < n_starts; ++g) {
                    double sse = 0.0;
                    for (std::size_t i = 0; i < n; ++i) {
                        const double r = evaluate(family, starts[g], x[i]) - y[i];
                        sse += (w != nullptr ? w[i] : 1.0) * r * r;
                    }
                    if (sse < best_sse) {
                        best_sse = sse;
                        best = g;
                    }
                }
                starts[0] = starts[best];
                n_starts = 1;
            }
        }
        out[k] = fit_family(family, x, y, w, n, starts.data(), n_starts, options);
        if (!out[k].ok) continue;
        // An extrapolation that falls well below where the curve already is, or rises absurdly
        // far beyond what it has risen so far, is fitted noise, not a forecast.
        const double y_last = y[n - 1];
        const double f2 = evaluate(family, out[k].theta, 2.0 * x[n - 1]);
        const double a = asymptote(family, out[k].theta);
        if (!std::isfinite(f2) || f2 < y_last - 0.5 || f2 > y_last + 2.0 || !std::isfinite(a)) {
            out[k].ok = false;
        }
    }
}

// The flat model's level: the median of the last three points (robust to one noisy epoch).
double flat_level(const double* y, std::size_t n) {
    if (n == 0) return 0.0;
    if (n < 3) return y[n - 1];
    double a = y[n - 3], b = y[n - 2], c = y[n - 1];
    return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

}  // namespace

void CurvePredictor::refit(bool full) {
    const std::size_t n = steps_.size();
    if (n < settings_.min_points_to_fit) {
        fitted_ = false;
        return;
    }
    if (full || !fitted_) {
        x_scale_ = steps_.back() > 0.0 ? steps_.back() : 1.0;
        log_space_ =
            direction_ == Direction::minimize && *std::min_element(metrics_.begin(), metrics_.end()) > 0.0;
        double lo = oriented(metrics_.front());
        double hi = lo;
        for (double m : metrics_) {
            lo = std::min(lo, oriented(m));
            hi = std::max(hi, oriented(m));
        }
        y_offset_ = oriented(metrics_.front());
        y_scale_ = std::max(hi - lo, 1e-9 * std::max(1.0, std::fabs(hi)));
        points_at_full_refit_ = n;
        ++full_refits_;
        full = true;
    }
    // Bin long curves into at most max_fit_points equal-count bins aligned to the newest point:
    // the fit costs O(bins), and the newest points keep the finest resolution.
    const std::size_t max_points = std::max<std::size_t>(settings_.max_fit_points, 8);
    const std::size_t per_bin = (n + max_points - 1) / max_points;
    Normalised data;
    data.x.reserve(max_points + 1);
    data.y.reserve(max_points + 1);
    data.w.reserve(max_points + 1);
    for (std::size_t end = n; end > 0;) {
        const std::size_t begin = end >= per_bin ? end - per_bin : 0;
        double sx = 0.0, sy = 0.0;
        for (std::size_t i = begin; i < end; ++i) {
            sx += steps_[i] / x_scale_;
            sy += (oriented(metrics_[i]) - y_offset_) / y_scale_;
        }
        const double count = static_cast<double>(end - begin);
        data.x.push_back(std::max(sx / count, 1e-9));
        data.y.push_back(sy / count);
        // recent points weigh more: they say most about where the curve is heading
        data.w.push_back(count * std::pow(std::max(sx / count, 1e-9), settings_.fit_recency_power));
        end = begin;
    }
    std::reverse(data.x.begin(), data.x.end());
    std::reverse(data.y.begin(), data.y.end());
    std::reverse(data.w.begin(), data.w.end());
    const std::size_t m = data.x.size();

    // Between full refits one new point re-tunes one family (round robin, warm-started): the
    // fits move little per point, and this keeps an update at a fifth of the cost.
    const std::array<FamilyFit, kFamilyCount> previous = fits_;
    const std::size_t only = full ? kFamilyCount : n % kFamilyCount;
    fit_families(data.x.data(), data.y.data(), data.w.data(), m, full ? nullptr : &previous, only, fits_);
    flat_level_ = flat_level(data.y.data(), m);
    // Mixing weights change only on a full refit (they come from a backtest, which costs a
    // second round of fits); between full refits the families are only re-tuned.
    if (full) backtest(data);
    double total = flat_weight_;
    for (std::size_t k = 0; k < kFamilyCount; ++k) {
        if (!fits_[k].ok) weights_[k] = 0.0;
        total += weights_[k];
    }
    if (!(total > 0.0)) {
        flat_weight_ = 1.0;
        total = 1.0;
    }
    for (double& w : weights_) w /= total;
    flat_weight_ /= total;
    fitted_ = true;

    std::vector<double> resid(m), scratch(m);
    for (std::size_t i = 0; i < m; ++i) {
        resid[i] = (mix(data.x[i], nullptr) - data.y[i]) * std::sqrt(data.w[i]);
    }
    noise_sigma_ = robust_sigma(resid.data(), m, scratch.data());
}

// Weights from out-of-sample skill: refit every family on the early part of the curve (steps up
// to x_last / 2), predict the rest, and weight each model, the flat one included, by the inverse
// of its squared error there, the farthest points counting most. Fit quality on the points seen
// says little about extrapolation (a 4-parameter family always fits best); forecasting the
// curve's own recent past is the closest measurable proxy for forecasting its future.
void CurvePredictor::backtest(const Normalised& data) {
    const std::size_t m = data.x.size();
    const double x_split = settings_.backtest_split * data.x.back();
    std::size_t n_train = 0;
    while (n_train < m && data.x[n_train] <= x_split) ++n_train;
    n_train = std::min(std::max<std::size_t>(n_train, 3), m > 2 ? m - 2 : m);
    if (n_train < 3 || m - n_train < 1) {
        // too short to hold anything out: equal trust in every family that fitted, and a share
        // for the flat model
        for (std::size_t k = 0; k < kFamilyCount; ++k) weights_[k] = fits_[k].ok ? 1.0 : 0.0;
        flat_weight_ = 1.0;
        backtest_error_ = 0.0;
        backtest_reach_ = 0.0;
        return;
    }
    std::array<FamilyFit, kFamilyCount> early{};
    fit_families(data.x.data(), data.y.data(), data.w.data(), n_train, nullptr, kFamilyCount, early);
    const double flat = flat_level(data.y.data(), n_train);
    const double x_end = data.x[n_train - 1];
    std::array<double, kFamilyCount + 1> sq{};
    double total_v = 0.0;
    for (std::size_t i = n_train; i < m; ++i) {
        const double v = data.w[i] * (data.x[i] - x_end);
        total_v += v;
        for (std::size_t k = 0; k < kFamilyCount; ++k) {
            if (!early[k].ok) continue;
            const double r = evaluate(kAllFamilies[k], early[k].theta, data.x[i]) - data.y[i];
            sq[k] += v * r * r;
        }
        sq[kFamilyCount] += v * (flat - data.y[i]) * (flat - data.y[i]);
    }
    const double floor = 1e-6;
    double best = std::numeric_limits<double>::infinity();
    std::array<double, kFamilyCount + 1> err{};
    for (std::size_t k = 0; k <= kFamilyCount; ++k) {
        const bool usable = k == kFamilyCount || (early[k].ok && fits_[k].ok);
        err[k] = usable ? std::sqrt(sq[k] / std::max(total_v, 1e-300)) : kNaN;
        if (usable) best = std::min(best, err[k]);
    }
    double combined_sq = 0.0, total_w = 0.0;
    for (std::size_t k = 0; k <= kFamilyCount; ++k) {
        const double w = std::isnan(err[k]) ? 0.0 : 1.0 / (err[k] * err[k] + floor);
        if (k < kFamilyCount)
            weights_[k] = w;
        else
            flat_weight_ = w;
        if (w > 0.0) {
            combined_sq += w * err[k] * err[k];
            total_w += w;
        }
    }
    backtest_error_ = total_w > 0.0 ? std::sqrt(combined_sq / total_w) : 0.0;
    backtest_reach_ = std::log(std::max(data.x.back() / x_end, 1.0 + 1e-9));
}

double CurvePredictor::mix(double x, std::array<double, kFamilyCount + 1>* parts) const {
    double f = flat_weight_ * flat_level_;
    for (std::size_t k = 0; k < kFamilyCount; ++k) {
        if (weights_[k] <= 0.0) continue;
        const double fk = evaluate(kAllFamilies[k], fits_[k].theta, x);
        f += weights_[k] * fk;
        if (parts != nullptr) (*parts)[k] = fk;
    }
    if (parts != nullptr) (*parts)[kFamilyCount] = flat_level_;
    return f;
}

double CurvePredictor::predict_value(double step) const {
    if (!fitted_) return last_metric();
    return predict(step).value;
}

Prediction CurvePredictor::predict(double step) const {
    Prediction out;
    out.horizon = step;
    out.observed = steps_.size();
    if (steps_.empty()) return out;
    const double z = interval_z(settings_.interval_level);
    const double sign = direction_ == Direction::maximize ? 1.0 : -1.0;
    if (!fitted_) {
        // No extrapolation: the last value, with an interval as wide as what was seen so far
        // (at least 10% of the metric's magnitude), skewed to the improving side.
        const double last = metrics_.back();
        double spread = 0.0;
        for (double m : metrics_) spread = std::max(spread, std::fabs(m - last));
        spread = std::max(spread, 0.1 * std::fabs(last) + 1e-9);
        spread *= std::max(settings_.fallback_calibration, 0.0);
        out.value = last;
        out.lower = sign > 0 ? last - 0.5 * spread : last - 2.0 * spread;
        out.upper = sign > 0 ? last + 2.0 * spread : last + 0.5 * spread;
        return out;
    }
    const double x = std::max(step / x_scale_, 1e-9);
    std::array<double, kFamilyCount + 1> parts{};
    double mean = mix(x, &parts);
    double between = flat_weight_ * (parts[kFamilyCount] - mean) * (parts[kFamilyCount] - mean);
    for (std::size_t k = 0; k < kFamilyCount; ++k) {
        if (weights_[k] > 0.0) between += weights_[k] * (parts[k] - mean) * (parts[k] - mean);
    }
    // Shrink the predicted gain over the flat level by how much the models disagree: when
    // they agree (gain^2 >> variance) the gain stands; when they scatter around it, the curve's
    // future is not identified by its past and "it stays about where it is" is the safer bet.
    const double gain = mean - flat_level_;
    if (gain * gain + between > 0.0) {
        mean = flat_level_ + gain * gain * gain / (gain * gain + settings_.agreement_shrinkage * between);
    }
    // The backtest measured the error of an extrapolation reaching backtest_reach_ (in ln x);
    // scale it to this one's reach.
    const double reach = std::max(0.0, std::log(std::max(x, 1e-9) * x_scale_ / steps_.back()));
    const double per_reach = backtest_reach_ > 0.0 ? backtest_error_ / backtest_reach_ : 0.1;
    const double extrap = per_reach * reach;
    // scaled by the cross-validated calibration (fit_settings.hpp: interval_calibration)
    const double sd = std::sqrt(between + noise_sigma_ * noise_sigma_ + extrap * extrap) *
                      std::max(settings_.interval_calibration, 0.0);
    out.value = metric_of(mean * y_scale_ + y_offset_);
    const double a = metric_of((mean - z * sd) * y_scale_ + y_offset_);
    const double b = metric_of((mean + z * sd) * y_scale_ + y_offset_);
    out.lower = std::min(a, b);
    out.upper = std::max(a, b);
    out.extrapolated = true;
    return out;
}

Result<Prediction> predict_curve(PointSpan points, Direction direction, double horizon,
                                 const FitSettings& settings) {
    auto curve = clean_curve(points);
    if (!curve) return curve.error();
    if (curve->steps.empty()) return make_error("curve: no finite point to predict from");
    if (!std::isfinite(horizon) || horizon < 0.0) {
        return make_error("horizon: " + std::to_string(horizon) + ": not a finite step >= 0");
    }
    CurvePredictor predictor(direction, settings);
    predictor.assign(*curve);
    return predictor.predict(horizon);
}

double CurvePredictor::oriented(double metric) const {
    if (log_space_) return -std::log(metric);
    return direction_ == Direction::maximize ? metric : -metric;
}

double CurvePredictor::metric_of(double value) const {
    if (log_space_) return std::exp(-std::clamp(value, -700.0, 700.0));
    return direction_ == Direction::maximize ? value : -value;
}

double CurvePredictor::predict_family(Family family, double step) const {
    const auto k = static_cast<std::size_t>(family);
    if (!fitted_ || !fits_[k].ok) return kNaN;
    const double f = evaluate(family, fits_[k].theta, std::max(step / x_scale_, 1e-9));
    return metric_of(f * y_scale_ + y_offset_);
}

}  // namespace explsched
