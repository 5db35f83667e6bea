#define BOOST_TEST_MODULE test_sched_price
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <vector>

#include "core/sched/price.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(price)

BOOST_AUTO_TEST_CASE(bounds_at_empty_knee_and_full) {
    const PriceFunction p(1e-6, 1e-3);
    BOOST_TEST(p(0.0) == 1e-6);
    BOOST_TEST(p(p.knee()) == 1e-6, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(p(1.0) == 1e-3, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(p.knee() == 1.0 / (1.0 + std::log(1000.0)), boost::test_tools::tolerance(1e-12));
    // out-of-range loads clamp
    BOOST_TEST(p(-1.0) == p(0.0));
    BOOST_TEST(p(2.0) == p(1.0));
}

BOOST_AUTO_TEST_CASE(monotone_continuous_and_within_bounds) {
    const PriceFunction p(0.5, 40.0);
    double previous = p(0.0);
    for (int i = 0; i <= 1000; ++i) {
        const double u = i / 1000.0;
        const double v = p(u);
        BOOST_TEST(v >= previous);       // non-decreasing
        BOOST_TEST(v - previous < 0.5);  // no jumps (continuous)
        BOOST_TEST(v >= p.lower());
        BOOST_TEST(v <= p.upper() * (1 + 1e-12));
        previous = v;
    }
    // exponential above the knee: equal steps in load multiply the price by equal factors
    const double a = p(0.6), b = p(0.7), c = p(0.8);
    BOOST_TEST(b / a == c / b, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(estimator_takes_quantiles_and_smooths_geometrically) {
    PriceBoundsEstimator e(0.1, 0.9, 0.5, 4.0);
    BOOST_TEST(!e.has_estimate());
    std::vector<double> none = {0.0, -1.0, std::nan("")};
    e.observe(none);
    BOOST_TEST(!e.has_estimate());  // nothing positive: no estimate yet
    std::vector<double> u;
    for (int i = 1; i <= 101; ++i) u.push_back(i * 1e-6);
    e.observe(u);
    BOOST_REQUIRE(e.has_estimate());
    BOOST_TEST(e.lower() == 11e-6, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(e.upper() == 91e-6, boost::test_tools::tolerance(1e-9));
    std::vector<double> higher;
    for (int i = 1; i <= 101; ++i) higher.push_back(i * 4e-6);
    e.observe(higher);
    // halfway in the log domain: lower = sqrt(11e-6 * 44e-6)
    BOOST_TEST(e.lower() == std::sqrt(11e-6 * 44e-6), boost::test_tools::tolerance(1e-9));
    const PriceFunction p = e.price();
    BOOST_TEST(p.lower() == e.lower());
    BOOST_TEST(p.upper() == e.upper());
}

BOOST_AUTO_TEST_CASE(estimator_keeps_a_minimum_ratio) {
    PriceBoundsEstimator e(0.1, 0.9, 0.2, 4.0);
    std::vector<double> same(50, 2e-5);
    e.observe(same);
    BOOST_TEST(e.upper() / e.lower() == 4.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(std::sqrt(e.upper() * e.lower()) == 2e-5, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_SUITE_END()
