#define BOOST_TEST_MODULE test_sched_priority
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

#include "core/sched/priority.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(priority)

BOOST_AUTO_TEST_CASE(value_factor_is_monotone_and_centred_on_the_price) {
    const double ratio = 100.0;
    BOOST_TEST(value_factor(1e-5, 1e-5, ratio) == 0.5, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(value_factor(1e-3, 1e-5, ratio) == 1.0, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(value_factor(1e-7, 1e-5, ratio) == 0.0, boost::test_tools::tolerance(1e-12));
    double previous = -1.0;
    for (int k = -30; k <= 30; ++k) {
        const double v = value_factor(1e-5 * std::pow(10.0, k / 10.0), 1e-5, ratio);
        BOOST_TEST(v >= previous);
        previous = v;
    }
    // a higher price lowers the value of the same utility
    BOOST_TEST(value_factor(1e-5, 2e-5, ratio) < value_factor(1e-5, 1e-5, ratio));
    BOOST_TEST(value_factor(0.0, 1e-5, ratio) == 0.0);
    BOOST_TEST(value_factor(1e-9, 0.0, ratio) == 1.0);  // free GPUs
}

BOOST_AUTO_TEST_CASE(age_saturates_and_floors_the_value) {
    BOOST_TEST(age_factor(3600, 7200) == 0.5);
    BOOST_TEST(age_factor(1e9, 7200) == 1.0);
    BOOST_TEST(age_factor(-5, 7200) == 0.0);
    BOOST_TEST(starvation_floor(0.1, 1.0) == 0.5);
    BOOST_TEST(starvation_floor(0.9, 1.0) == 0.9);
    BOOST_TEST(starvation_floor(0.1, 0.0) == 0.1);
}

BOOST_AUTO_TEST_CASE(priority_is_weighted_and_stays_in_slurm_range) {
    EngineSettings s;
    s.weight_value = 1000;
    s.weight_age = 100;
    s.weight_partition = 10;
    BOOST_TEST(compose_priority(0.5, 0.0, 0.0, 0, s) == 501u);
    BOOST_TEST(compose_priority(1.0, 1.0, 1.0, 0, s) == 1111u);
    BOOST_TEST(compose_priority(1.0, 1.0, 1.0, 11, s) == 1100u);  // nice lowers
    BOOST_TEST(compose_priority(0.0, 0.0, 0.0, 5, s) == 1u);      // never 0 (held)
    BOOST_TEST(compose_priority(0.6, 0.0, 0.0, 0, s) > compose_priority(0.5, 0.0, 0.0, 0, s));
}

BOOST_AUTO_TEST_CASE(slurm_priority_bounds) {
    BOOST_TEST(to_slurm_priority(0, 0) == 1u);  // never 0: that means held
    BOOST_TEST(to_slurm_priority(99.6, 0) == 101u);
    BOOST_TEST(to_slurm_priority(100, 30) == 71u);    // nice lowers
    BOOST_TEST(to_slurm_priority(100, -30) == 131u);  // negative nice raises
    BOOST_TEST(to_slurm_priority(5, 1000) == 1u);
    BOOST_TEST(to_slurm_priority(1e30, 0) == std::numeric_limits<uint32_t>::max() - 1);
    BOOST_TEST(to_slurm_priority(std::numeric_limits<double>::infinity(), 0) == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
