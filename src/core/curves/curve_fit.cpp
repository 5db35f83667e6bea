#include "core/curves/curve_fit.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Core>
#include <unsupported/Eigen/LevenbergMarquardt>

namespace explsched {

namespace {

// Residuals r_i = sqrt(w_i) (f(x_i) - y_i) for the data, then lambda (theta_j - mu_j) for each
// shape parameter with a prior. Eigen's LM minimises the sum of their squares.
struct CurveFunctor : Eigen::DenseFunctor<double> {
    CurveFunctor(Family fam, const double* xs, const double* ys, const double* sw, std::size_t n,
                 const Params& mu, double lambda, int n_prior)
        : Eigen::DenseFunctor<double>(static_cast<int>(param_count(fam)), static_cast<int>(n) + n_prior),
          family(fam),
          x(xs),
          y(ys),
          sqrt_w(sw),
          count(n),
          prior(mu),
          strength(lambda) {}

    Params unpack(const InputType& v) const {
        Params theta{};
        for (Eigen::Index j = 0; j < v.size(); ++j) theta[static_cast<std::size_t>(j)] = v[j];
        return theta;
    }

    int operator()(const InputType& v, ValueType& fvec) const {
        const Params theta = unpack(v);
        for (std::size_t i = 0; i < count; ++i) {
            fvec[static_cast<Eigen::Index>(i)] = sqrt_w[i] * (evaluate(family, theta, x[i]) - y[i]);
        }
        Eigen::Index row = static_cast<Eigen::Index>(count);
        for (std::size_t j = 0; j < param_count(family); ++j) {
            if (!std::isnan(prior[j])) fvec[row++] = strength * (theta[j] - prior[j]);
        }
        return 0;
    }

    int df(const InputType& v, JacobianType& fjac) const {
        const Params theta = unpack(v);
        const std::size_t p = param_count(family);
        Params grad{};
        fjac.setZero();
        for (std::size_t i = 0; i < count; ++i) {
            evaluate_with_gradient(family, theta, x[i], grad);
            for (std::size_t j = 0; j < p; ++j) {
                fjac(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = sqrt_w[i] * grad[j];
            }
        }
        Eigen::Index row = static_cast<Eigen::Index>(count);
        for (std::size_t j = 0; j < p; ++j) {
            if (!std::isnan(prior[j])) fjac(row++, static_cast<Eigen::Index>(j)) = strength;
        }
        return 0;
    }

    Family family;
    const double* x;
    const double* y;
    const double* sqrt_w;
    std::size_t count;
    Params prior;
    double strength;
};

int prior_rows(const Params& prior, std::size_t p) {
    int rows = 0;
    for (std::size_t j = 0; j < p; ++j) rows += std::isnan(prior[j]) ? 0 : 1;
    return rows;
}

bool finite_params(const Eigen::VectorXd& v) { return v.allFinite(); }

}  // namespace

double robust_sigma(const double* residuals, std::size_t n, double* scratch) {
    if (n == 0) return 0.0;
    for (std::size_t i = 0; i < n; ++i) scratch[i] = std::fabs(residuals[i]);
    auto mid = scratch + n / 2;
    std::nth_element(scratch, mid, scratch + n);
    return 1.4826 * *mid;
}

FamilyFit fit_family(Family family, const double* x, const double* y, const double* w, std::size_t n,
                     const Params* starts, std::size_t n_starts, const FitOptions& options) {
    FamilyFit best;
    const std::size_t p = param_count(family);
    const Params prior = shape_prior(family);
    const int n_prior = prior_rows(prior, p);
    if (n == 0 || n_starts == 0 || n + static_cast<std::size_t>(n_prior) < p) return best;

    std::vector<double> base(n), sqrt_w(n), resid(n), scratch(n);
    for (std::size_t i = 0; i < n; ++i) base[i] = w != nullptr ? w[i] : 1.0;

    double best_objective = std::numeric_limits<double>::infinity();
    for (std::size_t s = 0; s < n_starts; ++s) {
        Eigen::VectorXd v(static_cast<Eigen::Index>(p));
        for (std::size_t j = 0; j < p; ++j) v[static_cast<Eigen::Index>(j)] = starts[s][j];
        if (!finite_params(v)) continue;
        for (std::size_t i = 0; i < n; ++i) sqrt_w[i] = std::sqrt(base[i]);

        double sigma = 0.0;
        bool failed = false;
        for (int round = 0; round <= options.irls_rounds; ++round) {
            CurveFunctor functor(family, x, y, sqrt_w.data(), n, prior, options.prior_strength, n_prior);
            Eigen::LevenbergMarquardt<CurveFunctor> lm(functor);
            lm.setMaxfev(options.max_evaluations);
            lm.setXtol(options.tolerance);
            lm.setFtol(options.tolerance);
            lm.minimize(v);
            if (!finite_params(v)) {
                failed = true;
                break;
            }
            Params theta{};
            for (std::size_t j = 0; j < p; ++j) theta[j] = v[static_cast<Eigen::Index>(j)];
            for (std::size_t i = 0; i < n; ++i) resid[i] = evaluate(family, theta, x[i]) - y[i];
            sigma = robust_sigma(resid.data(), n, scratch.data());
            if (round == options.irls_rounds || n <= p) break;
            // Huber weights: points beyond k sigma count linearly, not quadratically, so one
            // spike (a bad evaluation, a learning-rate glitch) cannot drag the asymptote.
            const double threshold = options.huber_k * std::max(sigma, 1e-9);
            for (std::size_t i = 0; i < n; ++i) {
                const double a = std::fabs(resid[i]);
                const double h = a <= threshold ? 1.0 : threshold / a;
                sqrt_w[i] = std::sqrt(base[i] * h);
            }
        }
        if (failed) continue;
        Params theta{};
        for (std::size_t j = 0; j < p; ++j) theta[j] = v[static_cast<Eigen::Index>(j)];
        double objective = 0.0;
        double sse = 0.0;
        const double threshold = options.huber_k * std::max(sigma, 1e-9);
        for (std::size_t i = 0; i < n; ++i) {
            const double r = evaluate(family, theta, x[i]) - y[i];
            if (!std::isfinite(r)) {
                failed = true;
                break;
            }
            const double a = std::fabs(r);
            objective += base[i] * (a <= threshold ? 0.5 * a * a : threshold * (a - 0.5 * threshold));
            sse += base[i] * r * r;
        }
        for (std::size_t j = 0; j < p; ++j) {
            if (!std::isnan(prior[j])) {
                const double d = options.prior_strength * (theta[j] - prior[j]);
                objective += 0.5 * d * d;
            }
        }
        if (failed || !(objective < best_objective)) continue;
        best_objective = objective;
        best.theta = theta;
        best.sse = sse;
        best.sigma = sigma;
        best.ok = true;
    }
    return best;
}

}  // namespace explsched
