#define BOOST_TEST_MODULE test_base_strings
#include <boost/test/unit_test.hpp>

#include "core/base/strings.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(base_strings)

BOOST_AUTO_TEST_CASE(trim_and_split) {
    BOOST_TEST(trim("  a b \t\n") == "a b");
    BOOST_TEST(trim("   ").empty());
    const auto parts = split("a,,b c", ", ");
    BOOST_REQUIRE(parts.size() == 4u);
    BOOST_TEST(parts[0] == "a");
    BOOST_TEST(parts[1].empty());
    BOOST_TEST(parts[3] == "c");
}

BOOST_AUTO_TEST_CASE(strict_integers) {
    BOOST_TEST(parse_uint64("42").value() == 42u);
    BOOST_TEST(!parse_uint64("").has_value());
    BOOST_TEST(!parse_uint64("-1").has_value());
    BOOST_TEST(!parse_uint64("1 ").has_value());
    BOOST_TEST(!parse_uint64("99999999999999999999999").has_value());
    BOOST_TEST(parse_int64("-7").value() == -7);
}

BOOST_AUTO_TEST_CASE(strict_doubles) {
    BOOST_TEST(parse_finite_double("0.25").value() == 0.25);
    BOOST_TEST(parse_finite_double("-1e3").value() == -1000.0);
    for (const char* bad : {"", "nan", "inf", "-inf", "1e999", "0x10", "1.5abc", " 1"})
        BOOST_TEST(!parse_finite_double(bad).has_value(), bad);
}

BOOST_AUTO_TEST_CASE(printable_excerpt_bounds_and_escapes_untrusted_text) {
    BOOST_TEST(printable_excerpt("ResNet-50 (64)") == "ResNet-50 (64)");
    BOOST_TEST(printable_excerpt(std::string_view("a\x01\x1b[2J\\\xff", 8)) == "a\\x01\\x1b[2J\\x5c\\xff");
    const std::string huge(100000, 'x');
    const std::string cut = printable_excerpt(huge);
    BOOST_TEST(cut == std::string(64, 'x') + "... (100000 bytes)");
    BOOST_TEST(printable_excerpt(huge, 3) == "xxx... (100000 bytes)");
    BOOST_TEST(printable_excerpt("") == "");
}

BOOST_AUTO_TEST_SUITE_END()
