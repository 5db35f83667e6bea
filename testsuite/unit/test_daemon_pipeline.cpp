#define BOOST_TEST_MODULE daemon_pipeline
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "daemon/pipeline.hpp"

using namespace explsched::daemon;

BOOST_AUTO_TEST_SUITE(daemon_pipeline)

BOOST_AUTO_TEST_CASE(a_fair_queue_serves_keys_in_turn) {
    FairQueue<int> q;
    for (int i = 0; i < 1000; ++i) q.push("flooder", i);
    q.push("victim", -1);
    q.push("victim", -2);
    auto first = q.pop(4);
    BOOST_TEST_REQUIRE(first.size() == 4u);
    // The victim's first report is served second, not after the flooder's thousand.
    BOOST_TEST(first[1] == -1);
    BOOST_TEST(first[3] == -2);
    BOOST_TEST(first[0] == 0);
    BOOST_TEST(first[2] == 1);
    // Order within a key is kept.
    auto rest = q.pop(2000);
    BOOST_TEST_REQUIRE(rest.size() == 998u);
    for (std::size_t i = 0; i < rest.size(); ++i) BOOST_TEST(rest[i] == static_cast<int>(i) + 2);
    q.close();
    BOOST_TEST(q.pop(1).empty());
}

BOOST_AUTO_TEST_SUITE_END()
