#define BOOST_TEST_MODULE test_common_rank_basic
#include <boost/test/unit_test.hpp>

#include <limits>

#include "common/rank_basic.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(common_rank_basic)

BOOST_AUTO_TEST_CASE(age_grows_and_saturates) {
    Settings s;
    s.max_age = 100;
    s.weight_age = 1000;
    s.weight_partition = 0;
    JobFacts j;
    j.eligible_seconds = 0;
    BOOST_TEST(basic_rank(j, s).weighted == 0.0);
    j.eligible_seconds = 50;
    BOOST_TEST(basic_rank(j, s).age_factor == 0.5);
    j.eligible_seconds = 1e9;
    BOOST_TEST(basic_rank(j, s).weighted == 1000.0);
    j.eligible_seconds = -5;  // clock skew: never negative
    BOOST_TEST(basic_rank(j, s).age_factor == 0.0);
}

BOOST_AUTO_TEST_CASE(partition_term_is_clamped) {
    Settings s;
    s.weight_partition = 200;
    s.weight_age = 0;
    JobFacts j;
    j.partition_norm = 0.5;
    BOOST_TEST(basic_rank(j, s).weighted == 100.0);
    j.partition_norm = 7;
    BOOST_TEST(basic_rank(j, s).partition_factor == 1.0);
    j.partition_norm = std::numeric_limits<double>::quiet_NaN();
    BOOST_TEST(basic_rank(j, s).partition_factor == 0.0);
}

BOOST_AUTO_TEST_CASE(slurm_priority_bounds) {
    BOOST_TEST(to_slurm_priority(0, 0) == 1u);         // never 0: that means held
    BOOST_TEST(to_slurm_priority(99.6, 0) == 101u);
    BOOST_TEST(to_slurm_priority(100, 30) == 71u);     // nice lowers
    BOOST_TEST(to_slurm_priority(100, -30) == 131u);   // negative nice raises
    BOOST_TEST(to_slurm_priority(5, 1000) == 1u);
    BOOST_TEST(to_slurm_priority(1e30, 0) == std::numeric_limits<uint32_t>::max() - 1);
    BOOST_TEST(to_slurm_priority(std::numeric_limits<double>::infinity(), 0) == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
