// site_factor/explsched's rule for an operator's site factor (core/sched/site_pin.hpp).
#define BOOST_TEST_MODULE sched_site_pin
#include <boost/test/unit_test.hpp>

#include "core/sched/site_pin.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(site_pin)

BOOST_AUTO_TEST_CASE(nothing_is_an_operators_before_the_plugin_stored_a_value) {
    SitePinState s;  // written == 0: e.g. the first look after a slurmctld restart
    BOOST_TEST((site_pin_step(s, 12345, 0, 100) == SitePinEvent::none));
    BOOST_TEST(!s.pinned);
}

BOOST_AUTO_TEST_CASE(our_own_value_is_not_an_operators) {
    SitePinState s;
    s.written = 2000;
    BOOST_TEST((site_pin_step(s, 2000, 0, 100) == SitePinEvent::none));
    BOOST_TEST(!s.pinned);
}

BOOST_AUTO_TEST_CASE(an_operators_value_is_kept_for_the_jobs_life_when_hold_is_0) {
    SitePinState s;
    s.written = 2000;
    BOOST_TEST((site_pin_step(s, 5, 0, 100) == SitePinEvent::pinned));
    BOOST_TEST(s.pinned);
    BOOST_TEST(s.pinned_at == 100);
    BOOST_TEST((site_pin_step(s, 5, 0, 100 + 86400 * 365) == SitePinEvent::none));
    BOOST_TEST(s.pinned);
    // the operator changes it again: still theirs, still pinned since the first time
    BOOST_TEST((site_pin_step(s, 7, 0, 200) == SitePinEvent::none));
    BOOST_TEST(s.pinned);
    BOOST_TEST(s.pinned_at == 100);
}

BOOST_AUTO_TEST_CASE(with_a_hold_the_plugin_takes_the_job_back_when_it_ends) {
    SitePinState s;
    s.written = 2000;
    BOOST_TEST((site_pin_step(s, 5, 60, 100) == SitePinEvent::pinned));
    BOOST_TEST((site_pin_step(s, 5, 60, 159) == SitePinEvent::none));
    BOOST_TEST(s.pinned);
    BOOST_TEST((site_pin_step(s, 5, 60, 160) == SitePinEvent::released));
    BOOST_TEST(!s.pinned);
    // the record holds the operator's value until the plugin stores its own: not a new pin
    BOOST_TEST((site_pin_step(s, 5, 60, 161) == SitePinEvent::none));
    BOOST_TEST(!s.pinned);
}

BOOST_AUTO_TEST_SUITE_END()
