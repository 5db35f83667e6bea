#define BOOST_TEST_MODULE test_sched_engine_settings
#include <boost/test/unit_test.hpp>

#include "core/sched/engine_settings.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(engine_settings)

BOOST_AUTO_TEST_CASE(defaults_are_valid) { BOOST_TEST(validate(EngineSettings{}).ok()); }

BOOST_AUTO_TEST_CASE(bad_values_are_named) {
    EngineSettings s;
    s.interval_level = 1.5;
    auto r = validate(s);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message == "engine settings: interval_level: 1.5: not in (0, 1)");

    s = EngineSettings{};
    s.price_upper_quantile = 0.05;  // below the lower quantile
    r = validate(s);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message.find("price_upper_quantile") != std::string::npos);

    s = EngineSettings{};
    s.utility_horizon_s = 0.0;
    BOOST_TEST(!validate(s).ok());
    s = EngineSettings{};
    s.asha_reduction = 1.0;
    BOOST_TEST(!validate(s).ok());
    s = EngineSettings{};
    s.min_points_to_fit = 2;
    BOOST_TEST(!validate(s).ok());
}

BOOST_AUTO_TEST_CASE(weights_must_fit_in_a_slurm_priority) {
    EngineSettings s;
    s.weight_value = 3000000000u;
    s.weight_age = 2000000000u;
    auto r = validate(s);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message.find("32-bit") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(hopeless_actions_have_names) {
    BOOST_TEST(std::string(to_string(HopelessAction::terminate)) == "terminate");
    BOOST_TEST(std::string(to_string(HopelessAction::requeue_hold)) == "requeue_hold");
    BOOST_TEST(std::string(to_string(HopelessAction::none)) == "none");
}

BOOST_AUTO_TEST_SUITE_END()
