#define BOOST_TEST_MODULE test_base_config_parse
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "core/base/config_parse.hpp"

using namespace explsched;

namespace {

// A one-key table: "n=<uint>" adds to the total.
Result<int> add(const int& total, std::string_view item) {
    auto kv = split_key_value(item);
    if (!kv) return kv.error();
    if (kv->key != "n") return make_error("unknown setting '" + std::string(kv->key) + "'");
    auto n = parse_uint64(kv->value);
    if (!n) return make_error("setting 'n': '" + std::string(kv->value) + "' is not a number");
    return total + static_cast<int>(*n);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(base_config_parse)

BOOST_AUTO_TEST_CASE(durations_take_an_optional_unit) {
    BOOST_TEST(*parse_duration_value("90") == 90u);
    BOOST_TEST(*parse_duration_value("90s") == 90u);
    BOOST_TEST(*parse_duration_value("15m") == 900u);
    BOOST_TEST(*parse_duration_value("2h") == 7200u);
    BOOST_TEST(*parse_duration_value("1d") == 86400u);
    BOOST_TEST(parse_duration_value("5y").error().message ==
               "'5y' is not a duration (e.g. 90, 90s, 15m, 2h, 1d)");
    BOOST_TEST(!parse_duration_value("").ok());
    BOOST_TEST(!parse_duration_value("m").ok());
    BOOST_TEST(parse_duration_value("18446744073709551615d").error().message ==
               "'18446744073709551615d' is too large");
}

BOOST_AUTO_TEST_CASE(booleans) {
    for (const char* yes : {"yes", "true", "1", "on"}) BOOST_TEST(*parse_bool_value(yes));
    for (const char* no : {"no", "false", "0", "off"}) BOOST_TEST(!*parse_bool_value(no));
    BOOST_TEST(parse_bool_value("maybe").error().message == "'maybe' is not a boolean (yes/no)");
}

BOOST_AUTO_TEST_CASE(key_value_items_are_trimmed_and_need_an_equals_sign) {
    auto kv = split_key_value("  grace_time = 2m ");
    BOOST_TEST_REQUIRE(kv.ok());
    BOOST_TEST(kv->key == "grace_time");
    BOOST_TEST(kv->value == "2m");
    BOOST_TEST(split_key_value(" mps ").error().message == "setting 'mps': expected key=value");
}

BOOST_AUTO_TEST_CASE(items_args_and_lines_apply_in_order_and_stop_at_the_first_error) {
    BOOST_TEST(*apply_items("n=1,, n=2 ,n=3", ",", 0, add) == 6);
    BOOST_TEST(apply_items("n=1,m=2", ",", 0, add).error().message == "unknown setting 'm'");
    BOOST_TEST(*apply_args(std::vector<std::string>{"n=4", "n=5"}, 1, add) == 10);
    BOOST_TEST(*apply_lines("# total\nn=1\n\n  n=2 # two\n", "t.conf", 0, add) == 3);
    BOOST_TEST(apply_lines("n=1\n# x\nn=oops\n", "t.conf", 0, add).error().message ==
               "t.conf:3: setting 'n': 'oops' is not a number");
}

BOOST_AUTO_TEST_SUITE_END()
