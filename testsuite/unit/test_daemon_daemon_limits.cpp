#define BOOST_TEST_MODULE daemon_limits
#include <boost/test/unit_test.hpp>

#include <string>

#include "daemon/daemon_limits.hpp"

using namespace explsched::daemon;

BOOST_AUTO_TEST_SUITE(daemon_limits)

BOOST_AUTO_TEST_CASE(every_key_is_described_and_defaults_are_those_documented) {
    const auto text = describe_limits(DaemonLimits{});
    BOOST_TEST_REQUIRE(text.size() == limit_keys().size());
    auto has = [&](const std::string& kv) {
        for (const auto& t : text)
            if (t == kv) return true;
        return false;
    };
    BOOST_TEST(has("user_rate=200"));
    BOOST_TEST(has("user_burst=1000"));
    BOOST_TEST(has("max_points_per_job=100000"));
    BOOST_TEST(has("max_conns_per_user=64"));
    BOOST_TEST(has("auth_deadline=5s"));
    BOOST_TEST(has("max_credential_ttl=60s"));
    BOOST_TEST(has("retention=2592000s"));
    for (const auto& k : limit_keys()) BOOST_TEST(!k.help.empty(), k.key);
}

BOOST_AUTO_TEST_CASE(values_parse_with_units_and_round_trip) {
    auto l = apply_limit(DaemonLimits{}, "retention=30d");
    BOOST_TEST_REQUIRE(l.ok());
    BOOST_TEST(l->retention == 30u * 86400u);
    l = apply_limit(*l, "retention=0");
    BOOST_TEST_REQUIRE(l.ok());
    BOOST_TEST(l->retention == 0u);
    l = apply_limit(*l, "user_rate=12.5");
    BOOST_TEST_REQUIRE(l.ok());
    BOOST_TEST(l->user_rate == 12.5);
    l = apply_limit(*l, "require_uid_restriction=no");
    BOOST_TEST_REQUIRE(l.ok());
    BOOST_TEST(!l->require_uid_restriction);
    // Every described value parses back to itself.
    for (const auto& kv : describe_limits(*l)) {
        auto again = apply_limit(DaemonLimits{}, kv);
        BOOST_TEST_REQUIRE(again.ok(), kv);
        BOOST_TEST((describe_limits(*again) == describe_limits(apply_limit(DaemonLimits{}, kv).value())));
    }
}

BOOST_AUTO_TEST_CASE(bad_values_and_unknown_keys_name_what_is_wrong) {
    for (const char* bad : {"user_rate=0", "user_rate=-1", "user_rate=nan", "max_points_per_job=0",
                            "auth_deadline=0", "idle_timeout=forever", "max_conns_per_user=x"}) {
        auto l = apply_limit(DaemonLimits{}, bad);
        BOOST_TEST_REQUIRE(!l.ok(), bad);
        const std::string key = std::string(bad).substr(0, std::string(bad).find('='));
        BOOST_TEST(l.error().message.find("'" + key + "'") != std::string::npos, l.error().message);
    }
    auto u = apply_limit(DaemonLimits{}, "max_bananas=3");
    BOOST_TEST_REQUIRE(!u.ok());
    BOOST_TEST(u.error().message.find("unknown limit 'max_bananas'") != std::string::npos);
    BOOST_TEST(u.error().message.find("user_rate") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
