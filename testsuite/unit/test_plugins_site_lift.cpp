#define BOOST_TEST_MODULE test_plugins_site_lift
#include <boost/test/unit_test.hpp>

#include <cstdint>

#include "plugins/rerank/site_lift.hpp"

using namespace explsched::rerank;

BOOST_AUTO_TEST_SUITE(plugins_site_lift)

BOOST_AUTO_TEST_CASE(a_first_lift_brings_the_job_just_above_the_one_it_passes) {
    // Friend 1000 (nice 500 below Victim's 1500): lifted by 501 to 1501
    BOOST_TEST(next_site_lift(0, 1000, 1500) == 501u);
    // equal priorities: one more
    BOOST_TEST(next_site_lift(0, 1500, 1500) == 1u);
}

BOOST_AUTO_TEST_CASE(a_job_already_above_gets_nothing_more_and_keeps_what_it_has) {
    BOOST_TEST(next_site_lift(0, 1501, 1500) == 0u);
    BOOST_TEST(next_site_lift(0, 9000, 1500) == 0u);
    // multifactor recomputed it with the lift in: at passed + 1, or above (its age grew): unchanged
    BOOST_TEST(next_site_lift(501, 1501, 1500) == 501u);
    BOOST_TEST(next_site_lift(501, 1700, 1500) == 501u);
}

BOOST_AUTO_TEST_CASE(a_job_that_fell_below_again_gets_the_difference_added) {
    // the passed job's priority rose by 40 since (its site factor): the lift grows by 40, no more
    BOOST_TEST(next_site_lift(501, 1501, 1540) == 541u);
    // never more than passed + 1 at the time it is computed
    const std::uint32_t lift = next_site_lift(501, 1200, 1540);
    BOOST_TEST(1200u + (lift - 501u) == 1541u);
}

BOOST_AUTO_TEST_CASE(the_arithmetic_saturates) {
    BOOST_TEST(just_above(5) == 6u);  // priority mode's raise, and the lift's target
    BOOST_TEST(just_above(UINT32_MAX - 2) == UINT32_MAX - 1);
    BOOST_TEST(just_above(UINT32_MAX - 1) == UINT32_MAX - 1);
    BOOST_TEST(just_above(UINT32_MAX) == UINT32_MAX - 1);
    BOOST_TEST(next_site_lift(0, 1, UINT32_MAX) == UINT32_MAX - 2);  // target capped at UINT32_MAX - 1
    BOOST_TEST(next_site_lift(UINT32_MAX - 5, 1, UINT32_MAX) == UINT32_MAX);
    BOOST_TEST(lifted_site_factor(UINT32_MAX - 1, 10) == UINT32_MAX);
    BOOST_TEST(lifted_site_factor(2147483648u, 501) == 2147484149u);
}

BOOST_AUTO_TEST_CASE(unlifted_takes_the_lift_off_and_never_goes_below_its_floor) {
    BOOST_TEST(unlifted(2147484149u, 501) == 2147483648u);
    BOOST_TEST(unlifted(1501, 501, 1) == 1000u);
    BOOST_TEST(unlifted(400, 501, 1) == 1u);  // a priority is never 0 (held)
    BOOST_TEST(unlifted(501, 501, 1) == 1u);
    BOOST_TEST(unlifted(7, 0) == 7u);
}

BOOST_AUTO_TEST_SUITE_END()
