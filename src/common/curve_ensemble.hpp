// Learning-curve extrapolation: an ensemble of parametric families (curve_models.hpp), each fitted
// by robust nonlinear least squares (curve_fit.hpp), combined by fit quality into a predicted
// metric at any future step with an interval. One CurvePredictor per trial caches its fits so a
// new point costs a warm-started refinement, not a fresh multi-start search.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "curve_models.hpp"
#include "engine_settings.hpp"
#include "prediction.hpp"
#include "result.hpp"
#include "trial.hpp"

namespace explsched {

class CurvePredictor {
public:
    explicit CurvePredictor(Direction direction = Direction::maximize,
                            const EngineSettings& settings = EngineSettings{});

    // Replaces the curve and refits from scratch.
    void assign(const CleanCurve& curve);
    // Appends one point (step must exceed the last one; metric finite) and updates the fits.
    Status append(double step, double metric);
    void clear();

    // Predicted metric at `step`, with the settings' interval. With fewer than
    // min_points_to_fit points: the last observed value, a data-driven wide interval and
    // extrapolated = false.
    Prediction predict(double step) const;
    // The ensemble's point estimate only (cheap: no interval).
    double predict_value(double step) const;

    std::size_t size() const { return steps_.size(); }
    double last_step() const { return steps_.empty() ? 0.0 : steps_.back(); }
    double last_metric() const { return metrics_.empty() ? 0.0 : metrics_.back(); }
    double best_metric() const;   // best observed (direction-aware); 0 if empty
    double first_metric() const { return metrics_.empty() ? 0.0 : metrics_.front(); }
    Direction direction() const { return direction_; }
    bool fitted() const { return fitted_; }
    // Weight of each family in the mix (0 for a family that failed or was not tried).
    const std::array<double, kFamilyCount>& weights() const { return weights_; }
    std::size_t full_refits() const { return full_refits_; }

private:
    void refit(bool full);

    Direction direction_;
    EngineSettings settings_;
    std::vector<double> steps_;
    std::vector<double> metrics_;
    std::array<FamilyFit, kFamilyCount> fits_{};
    std::array<double, kFamilyCount> weights_{};
    bool fitted_ = false;
    std::size_t points_at_full_refit_ = 0;
    std::size_t full_refits_ = 0;
    double noise_sigma_ = 0.0;   // robust residual scale of the recent points (metric units)
};

// One-shot: predicts the metric at `horizon` from `points` (the CLI and the benchmarks).
// Errors: the points are invalid, or fewer than one finite point.
Result<Prediction> predict_curve(PointSpan points, Direction direction, double horizon,
                                 const EngineSettings& settings = EngineSettings{});

}  // namespace explsched
