#define BOOST_TEST_MODULE test_curves_curve_models
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "core/curves/curve_models.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(curve_models)

// The analytic Jacobian LM relies on must match central differences for every family.
BOOST_AUTO_TEST_CASE(gradients_match_finite_differences) {
    const Params thetas[] = {{0.9, -0.5, -0.3, 0.2}, {1.2, 0.1, 0.4, -0.4}, {0.5, -1.0, 0.8, 0.6}};
    for (Family f : kAllFamilies) {
        for (const Params& theta : thetas) {
            for (double x : {0.05, 0.3, 1.0, 2.5}) {
                Params g{};
                const double v = evaluate_with_gradient(f, theta, x, g);
                BOOST_TEST(v == evaluate(f, theta, x), boost::test_tools::tolerance(1e-12));
                for (std::size_t j = 0; j < param_count(f); ++j) {
                    const double h = 1e-6;
                    Params up = theta, down = theta;
                    up[j] += h;
                    down[j] -= h;
                    const double numeric = (evaluate(f, up, x) - evaluate(f, down, x)) / (2 * h);
                    BOOST_TEST_CONTEXT(to_string(f) << " theta[" << j << "] x=" << x) {
                        BOOST_TEST(std::fabs(g[j] - numeric) < 1e-5 * (1 + std::fabs(numeric)));
                    }
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(every_family_rises_to_its_first_parameter) {
    for (Family f : kAllFamilies) {
        const Params theta = {0.8, f == Family::log_power ? 0.0 : -0.5, 0.0, 0.0};
        const double far = evaluate(f, theta, 1e6);
        BOOST_TEST_CONTEXT(to_string(f)) {
            BOOST_TEST(std::fabs(far - asymptote(f, theta)) < 1e-3);
            BOOST_TEST(evaluate(f, theta, 0.5) < evaluate(f, theta, 2.0));  // increasing
        }
    }
}

BOOST_AUTO_TEST_CASE(extreme_parameters_stay_finite) {
    for (Family f : kAllFamilies) {
        const Params wild = {1.0, 500.0, 800.0, -900.0};
        BOOST_TEST(std::isfinite(evaluate(f, wild, 1e-9)));
        BOOST_TEST(std::isfinite(evaluate(f, wild, 1e9)));
    }
}

BOOST_AUTO_TEST_CASE(guesses_are_finite_and_priors_cover_shape_only) {
    const double x[] = {0.1, 0.2, 0.4, 0.7, 1.0};
    const double y[] = {0.0, 0.4, 0.7, 0.85, 0.9};
    for (Family f : kAllFamilies) {
        std::array<Params, 3> out{};
        const std::size_t n = initial_guesses(f, x, y, 5, out);
        BOOST_TEST(n >= 1u);
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < param_count(f); ++j) BOOST_TEST(std::isfinite(out[i][j]));
            BOOST_TEST(std::isfinite(evaluate(f, out[i], 0.5)));
        }
        const Params prior = shape_prior(f);
        BOOST_TEST(std::isnan(prior[0]));  // never a prior on the asymptote
        BOOST_TEST(param_count(f) >= 3u);
        BOOST_TEST(std::string(to_string(f)) != "?");
    }
    std::array<Params, 3> none{};
    BOOST_TEST(initial_guesses(Family::pow3, x, y, 0, none) == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
