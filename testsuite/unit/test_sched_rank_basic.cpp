#define BOOST_TEST_MODULE test_sched_rank_basic
#include <boost/test/unit_test.hpp>

#include <limits>

#include "core/sched/rank_basic.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(sched_rank_basic)

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
