#define BOOST_TEST_MODULE test_sched_throughput_table
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>

#include "core/sched/throughput_table.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(throughput_table)

BOOST_AUTO_TEST_CASE(parses_gavel_keys_and_isolated_throughputs) {
    const char* json = R"J({
      "k80": {"('ResNet-18 (batch size 16)', 1)": {"null": 2.0, "('X', 1)": [1.0, 1.0]}},
      "v100": {"('ResNet-18 (batch size 16)', 1)": {"null": 8.0},
               "('ResNet-18 (batch size 16)', 2)": {"null": 15.0}},
      "v100_unconsolidated": {"('ResNet-18 (batch size 16)', 1)": {"null": 1.0}}
    })J";
    auto t = ThroughputTable::from_gavel_json(json);
    BOOST_REQUIRE(t.ok());
    BOOST_TEST(t->throughput("ResNet-18 (batch size 16)", "V100") == 8.0);
    BOOST_TEST(t->throughput("ResNet-18 (batch size 16)", "v100", 2) == 15.0);
    BOOST_TEST(std::isnan(t->throughput("ResNet-18 (batch size 16)", "p100")));
    BOOST_TEST(t->speed_ratio("ResNet-18 (batch size 16)", "k80", "v100") == 4.0);
    BOOST_TEST(t->speed_ratio("ResNet-18 (batch size 16)", "k80", "p100") == 1.0);  // unknown
    BOOST_TEST(t->speed_ratio("unknown", "k80", "v100") == 1.0);
    BOOST_TEST(t->speed_ratio("ResNet-18 (batch size 16)", "v100", "v100") == 1.0);
}

BOOST_AUTO_TEST_CASE(a_type_the_job_does_not_fit_on_has_no_speed) {
    ThroughputTable t;
    t.set("big", "k80", 0.0);
    t.set("big", "v100", 3.0);
    BOOST_TEST(t.speed_ratio("big", "v100", "k80") == 0.0);
    BOOST_TEST(t.speed_ratio("big", "k80", "v100") == 1.0);  // nothing measured to scale from
}

BOOST_AUTO_TEST_CASE(bad_documents_are_errors) {
    BOOST_TEST(!ThroughputTable::from_gavel_json("{").ok());
    BOOST_TEST(!ThroughputTable::from_gavel_json("[1]").ok());
    auto key = ThroughputTable::from_gavel_json(R"J({"k80": {"ResNet": {"null": 1}}})J");
    BOOST_REQUIRE(!key.ok());
    BOOST_TEST(key.error().message.find("key 'ResNet'") != std::string::npos);
    auto val = ThroughputTable::from_gavel_json(R"J({"k80": {"('A', 1)": {"null": "fast"}}})J");
    BOOST_REQUIRE(!val.ok());
    BOOST_TEST(val.error().message.find("isolated throughput") != std::string::npos);
    BOOST_TEST(!ThroughputTable::load_gavel_file("/nonexistent.json").ok());
}

BOOST_AUTO_TEST_CASE(loads_the_shared_gavel_table) {
    const std::string path =
        std::string(EXPLSCHED_DATA_DIR) + "/throughputs/gavel_simulation_throughputs.json";
    if (!std::filesystem::exists(path)) {
        BOOST_TEST_MESSAGE("shared data not present: " << path);
        return;
    }
    auto t = ThroughputTable::load_gavel_file(path);
    BOOST_REQUIRE(t.ok());
    BOOST_TEST(t->size() > 10u);
    const double k80 = t->throughput("ResNet-18 (batch size 16)", "k80");
    const double v100 = t->throughput("ResNet-18 (batch size 16)", "v100");
    BOOST_TEST(k80 > 0.0);
    BOOST_TEST(v100 > k80);  // a V100 is faster than a K80
}

BOOST_AUTO_TEST_SUITE_END()
