// Learning-curve extrapolation: an ensemble of parametric families (curve_models.hpp), each fitted
// by robust nonlinear least squares (curve_fit.hpp), combined by fit quality into a predicted
// metric at any future step with an interval. One CurvePredictor per trial caches its fits so a
// new point costs a warm-started refinement, not a fresh multi-start search.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "core/base/result.hpp"
#include "core/curves/curve_models.hpp"
#include "core/curves/fit_settings.hpp"
#include "core/curves/prediction.hpp"
#include "core/curves/trial.hpp"

namespace explsched {

class CurvePredictor {
public:
    explicit CurvePredictor(Direction direction = Direction::maximize,
                            const FitSettings& settings = FitSettings{});

    // Replaces the curve and refits from scratch.
    void assign(const CleanCurve& curve);
    // Appends one point (step must exceed the last one; metric finite) and updates the fits.
    Status append(double step, double metric);
    // Brings the predictor up to `curve`, whose first size() points must be the ones it holds
    // (checked on the last of them): appends the rest and updates the fits once. Anything else
    // is an error and the caller assigns instead.
    Status extend(const CleanCurve& curve);
    void clear();

    // Predicted metric at `step`, with the settings' interval. With fewer than
    // min_points_to_fit points: the last observed value, a data-driven wide interval and
    // extrapolated = false.
    Prediction predict(double step) const;
    // The ensemble's point estimate only (cheap: no interval).
    double predict_value(double step) const;

    std::size_t size() const { return steps_.size(); }
    const std::vector<double>& steps() const { return steps_; }
    const std::vector<double>& metrics() const { return metrics_; }
    double last_step() const { return steps_.empty() ? 0.0 : steps_.back(); }
    double last_metric() const { return metrics_.empty() ? 0.0 : metrics_.back(); }
    double best_metric() const;  // best observed (direction-aware); 0 if empty
    double first_metric() const { return metrics_.empty() ? 0.0 : metrics_.front(); }
    Direction direction() const { return direction_; }
    bool fitted() const { return fitted_; }
    // Weight of each family in the mix (0 for a family that failed or was not tried).
    const std::array<double, kFamilyCount>& weights() const { return weights_; }
    double flat_weight() const { return flat_weight_; }
    std::size_t full_refits() const { return full_refits_; }
    // One family's own extrapolation (NaN if it is not fitted): diagnostics and tests.
    double predict_family(Family family, double step) const;

private:
    struct Normalised;
    void refit(bool full);
    void backtest(const Normalised& data);
    double mix(double x, std::array<double, kFamilyCount + 1>* parts) const;

    Direction direction_;
    FitSettings settings_;
    std::vector<double> steps_;
    std::vector<double> metrics_;
    std::array<FamilyFit, kFamilyCount> fits_{};
    // Mixing weights: one per family, the last for the flat model ("it stays where it is").
    std::array<double, kFamilyCount> weights_{};
    double flat_weight_ = 0.0;
    double flat_level_ = 0.0;  // the flat model's level (normalised units)
    bool fitted_ = false;
    std::size_t points_at_full_refit_ = 0;
    std::size_t full_refits_ = 0;
    // Normalisation fixed at the last full refit, so warm starts stay in the same coordinates:
    // x = step / x_scale_, y = (sign * metric - y_offset_) / y_scale_.
    double x_scale_ = 1.0;
    double y_offset_ = 0.0;
    double y_scale_ = 1.0;
    // Positive metrics that fall (loss, error rate) are fitted as -ln(metric): they decay
    // multiplicatively and cannot be predicted below zero.
    bool log_space_ = false;
    double oriented(double metric) const;  // metric -> larger-is-better fitting space
    double metric_of(double oriented_value) const;
    double noise_sigma_ = 0.0;  // robust residual scale of the mix (normalised units)
    // Out-of-sample error of the mix when it was fitted on the early part of the curve and asked
    // for the rest (normalised units), and how far that reached (ln of the x ratio): the
    // interval grows with the extrapolation distance at this measured rate.
    double backtest_error_ = 0.0;
    double backtest_reach_ = 0.0;
};

// Half-width, in standard deviations, of a central normal interval of probability `level`.
double interval_z(double level);

// One-shot: predicts the metric at `horizon` from `points` (the CLI and the benchmarks).
// Errors: the points are invalid, or fewer than one finite point.
Result<Prediction> predict_curve(PointSpan points, Direction direction, double horizon,
                                 const FitSettings& settings = FitSettings{});

}  // namespace explsched
