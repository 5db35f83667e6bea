// The parametric learning-curve families of the literature (Domhan et al. 2015; Klein et al.
// 2017), written in normalised coordinates: x = step / x_scale > 0 and y oriented so that larger
// is better and the observed range maps to about [0, 1]. Each family rises towards an asymptote
// `a`; rates and exponents are stored as logarithms so every parameter vector is admissible and
// Levenberg–Marquardt needs no constraints.
#pragma once

#include <array>
#include <cstddef>
#include <limits>

namespace explsched {

enum class Family {
    pow3,       // a - e^lb * x^(-e^lc)
    exp3,       // a - e^lb * exp(-e^lc * x)
    log_power,  // a / (1 + (x / e^b)^(-e^lc))
    janoschek,  // a - (a - b) * exp(-e^lk * x^(e^ld))   (Weibull-type)
    mmf,        // a - (a - b) / (1 + (e^lk * x)^(e^ld))  (Morgan–Mercer–Flodin)
};
inline constexpr std::size_t kFamilyCount = 5;
inline constexpr std::size_t kMaxParams = 4;
inline constexpr std::array<Family, kFamilyCount> kAllFamilies = {
    Family::pow3, Family::exp3, Family::log_power, Family::janoschek, Family::mmf};

using Params = std::array<double, kMaxParams>;

const char* to_string(Family family);
std::size_t param_count(Family family);

// f(x; theta) in normalised units.
double evaluate(Family family, const Params& theta, double x);
// f and df/dtheta (first param_count entries of grad).
double evaluate_with_gradient(Family family, const Params& theta, double x, Params& grad);
// The value as x -> infinity (the asymptote).
double asymptote(Family family, const Params& theta);

// Deterministic starting points for the fit, derived from the (normalised) data.
// Returns how many it wrote into `out` (at most out.size()).
std::size_t initial_guesses(Family family, const double* x, const double* y, std::size_t n,
                            std::array<Params, 3>& out);

// Weak prior centre for the shape parameters, used as regularising pseudo-observations so that
// sparse or flat curves still give a well-posed fit (entries for `a` and `b` are NaN: no prior).
Params shape_prior(Family family);

// One family's fitted state, in the normalised coordinates of the predictor that owns it.
struct FamilyFit {
    Params theta{};
    double sse = std::numeric_limits<double>::quiet_NaN();    // weighted residual sum of squares
    double sigma = std::numeric_limits<double>::quiet_NaN();  // robust residual scale
    double score = std::numeric_limits<double>::quiet_NaN();  // lower is better (ensemble weight)
    bool ok = false;
};

}  // namespace explsched
