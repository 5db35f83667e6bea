// Robust nonlinear least squares for one curve family: Eigen's (unsupported) Levenberg–Marquardt
// with analytic Jacobians, Huber loss by iteratively reweighted least squares, and weak priors on
// the shape parameters as pseudo-observations (so 1–3 points or a flat curve still give a
// well-posed problem instead of a singular Jacobian).
#pragma once

#include <cstddef>

#include "core/curves/curve_models.hpp"

namespace explsched {

struct FitOptions {
    int max_evaluations = 80;      // per LM run
    int irls_rounds = 2;           // Huber reweighting passes after the first plain fit
    double huber_k = 1.345;        // Huber threshold in robust sigmas (95% efficiency)
    double prior_strength = 0.02;  // weight of the shape prior, normalised-y units per log unit
    // LM stops when the relative change of the parameters or of the objective is below this.
    // Curves are predicted to ~1e-4 of their range; tighter tolerances only burn iterations.
    double tolerance = 1e-6;
};

// Fits `family` to (x[i], y[i]) with base weights w[i] (> 0; null = all 1), starting from each of
// `starts` (warm start first, then data-derived guesses) and keeping the lowest robust objective.
// The returned fit has ok = false if no start produced finite parameters.
FamilyFit fit_family(Family family, const double* x, const double* y, const double* w, std::size_t n,
                     const Params* starts, std::size_t n_starts, const FitOptions& options = FitOptions{});

// Median absolute deviation scaled to a normal sigma; `scratch` must hold n doubles.
double robust_sigma(const double* residuals, std::size_t n, double* scratch);

}  // namespace explsched
