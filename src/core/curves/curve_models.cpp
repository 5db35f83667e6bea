#include "core/curves/curve_models.hpp"

#include <algorithm>
#include <cmath>

namespace explsched {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// exp() of a log-parameter, clamped so that no parameter vector LM tries can overflow.
double exp_clamped(double v) { return std::exp(std::clamp(v, -30.0, 30.0)); }

double safe_log(double x) { return std::log(std::max(x, 1e-12)); }

}  // namespace

const char* to_string(Family family) {
    switch (family) {
        case Family::pow3:
            return "pow3";
        case Family::exp3:
            return "exp3";
        case Family::log_power:
            return "log_power";
        case Family::janoschek:
            return "janoschek";
        case Family::mmf:
            return "mmf";
    }
    return "?";
}

std::size_t param_count(Family family) {
    switch (family) {
        case Family::pow3:
        case Family::exp3:
        case Family::log_power:
            return 3;
        case Family::janoschek:
        case Family::mmf:
            return 4;
    }
    return 0;
}

double evaluate(Family family, const Params& t, double x) {
    const double lx = safe_log(x);
    switch (family) {
        case Family::pow3:
            return t[0] - exp_clamped(t[1] - exp_clamped(t[2]) * lx);
        case Family::exp3:
            return t[0] - exp_clamped(t[1] - exp_clamped(t[2]) * x);
        case Family::log_power: {
            const double z = -exp_clamped(t[2]) * (lx - t[1]);
            return t[0] / (1.0 + exp_clamped(z));
        }
        case Family::janoschek: {
            const double kxd = exp_clamped(t[2] + exp_clamped(t[3]) * lx);
            return t[0] - (t[0] - t[1]) * std::exp(-kxd);
        }
        case Family::mmf: {
            const double tt = exp_clamped(exp_clamped(t[3]) * (t[2] + lx));
            return t[0] - (t[0] - t[1]) / (1.0 + tt);
        }
    }
    return kNaN;
}

double evaluate_with_gradient(Family family, const Params& t, double x, Params& g) {
    const double lx = safe_log(x);
    g = Params{};
    switch (family) {
        case Family::pow3: {
            const double c = exp_clamped(t[2]);
            const double term = exp_clamped(t[1] - c * lx);  // b * x^-c
            g[0] = 1.0;
            g[1] = -term;
            g[2] = term * c * lx;
            return t[0] - term;
        }
        case Family::exp3: {
            const double c = exp_clamped(t[2]);
            const double term = exp_clamped(t[1] - c * x);  // b * e^-cx
            g[0] = 1.0;
            g[1] = -term;
            g[2] = term * c * x;
            return t[0] - term;
        }
        case Family::log_power: {
            const double c = exp_clamped(t[2]);
            const double z = -c * (lx - t[1]);
            const double s = 1.0 / (1.0 + exp_clamped(z));
            const double ds_dz = -s * (1.0 - s);
            g[0] = s;
            g[1] = t[0] * ds_dz * c;
            g[2] = t[0] * ds_dz * z;
            return t[0] * s;
        }
        case Family::janoschek: {
            const double d = exp_clamped(t[3]);
            const double kxd = exp_clamped(t[2] + d * lx);  // K x^D
            const double e = std::exp(-kxd);
            const double span = t[0] - t[1];
            g[0] = 1.0 - e;
            g[1] = e;
            g[2] = span * e * kxd;
            g[3] = span * e * kxd * d * lx;
            return t[0] - span * e;
        }
        case Family::mmf: {
            const double d = exp_clamped(t[3]);
            const double u = t[2] + lx;  // ln(K x)
            const double tt = exp_clamped(d * u);
            const double q = 1.0 / (1.0 + tt);
            const double span = t[0] - t[1];
            g[0] = 1.0 - q;
            g[1] = q;
            g[2] = span * q * q * d * tt;
            g[3] = span * q * q * tt * d * u;
            return t[0] - span * q;
        }
    }
    return kNaN;
}

double asymptote(Family, const Params& theta) {
    // Every family here is written so that its first parameter is the limit as x -> infinity.
    return theta[0];
}

std::size_t initial_guesses(Family family, const double* x, const double* y, std::size_t n,
                            std::array<Params, 3>& out) {
    if (n == 0) return 0;
    const double y_first = y[0];
    const double y_last = y[n - 1];
    const double y_max = *std::max_element(y, y + n);
    const double y_min = *std::min_element(y, y + n);
    const double range = std::max(y_max - y_min, 1e-6);
    const double x_first = std::max(x[0], 1e-9);
    // x where the curve first reaches half of its observed rise: the knee of sigmoid families.
    double x_half = x[n / 2];
    for (std::size_t i = 0; i < n; ++i) {
        if (y[i] - y_min >= 0.5 * range) {
            x_half = std::max(x[i], 1e-9);
            break;
        }
    }
    const double a_near = std::max(y_last, y_max) + 0.05 * range;
    const double a_far = std::max(y_last, y_max) + 0.5 * range;
    std::size_t count = 0;
    auto push = [&](const Params& p) {
        if (count < out.size()) out[count++] = p;
    };
    switch (family) {
        case Family::pow3:
            for (double a : {a_near, a_far}) {
                const double c = 0.5;
                push({a, safe_log((a - y_first) * std::pow(x_first, c)), std::log(c), 0.0});
            }
            break;
        case Family::exp3:
            for (double a : {a_near, a_far}) {
                const double c = 1.0 / std::max(x_half, 1e-3);
                push({a, safe_log((a - y_first) * std::exp(c * x_first)), std::log(c), 0.0});
            }
            break;
        case Family::log_power:
            for (double a : {a_near, a_far}) push({a, std::log(x_half), 0.0, 0.0});
            break;
        case Family::janoschek:
            for (double a : {a_near, a_far}) {
                push({a, y_first - 0.2 * range, std::log(1.0 / x_half), 0.0});
            }
            break;
        case Family::mmf:
            for (double a : {a_near, a_far}) {
                push({a, y_first - 0.2 * range, -std::log(x_half), 0.0});
            }
            break;
    }
    return count;
}

Params shape_prior(Family family) {
    switch (family) {
        case Family::pow3:
            return {kNaN, kNaN, std::log(0.5), kNaN};
        case Family::exp3:
            return {kNaN, kNaN, std::log(3.0), kNaN};
        case Family::log_power:
            return {kNaN, kNaN, 0.0, kNaN};
        case Family::janoschek:
            return {kNaN, kNaN, kNaN, 0.0};
        case Family::mmf:
            return {kNaN, kNaN, kNaN, 0.0};
    }
    return {kNaN, kNaN, kNaN, kNaN};
}

}  // namespace explsched
