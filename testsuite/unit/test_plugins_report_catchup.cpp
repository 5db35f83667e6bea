#define BOOST_TEST_MODULE test_plugins_report_catchup
#include <boost/test/unit_test.hpp>

#include "plugins/report_catchup.hpp"
#include "temp_dir.hpp"

using namespace explsched;

namespace {

ReportInput input(uint32_t job, uint64_t step) {
    ReportInput in;
    in.body.job_id = job;
    in.body.step = step;
    in.body.metric = 1.0 / static_cast<double>(step + 1);
    in.body.client_time = 1700000000.0 + static_cast<double>(step);
    in.job_submit = 1690000000;
    in.uid = 1000;
    in.server_time = 1700000100.0 + static_cast<double>(step);
    return in;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(plugins_report_catchup)

BOOST_AUTO_TEST_CASE(catches_up_in_bounded_chunks_before_saying_so) {
    TempDir dir;
    auto store = ReportStore::open(dir.db());
    BOOST_REQUIRE(store);
    for (uint64_t s = 0; s < 25; ++s) BOOST_REQUIRE((*store)->submit_one(input(1, s)));
    ReportCatchUp feed;
    BOOST_TEST(!feed.caught_up());
    std::size_t rounds = 0, rows = 0;
    while (!feed.caught_up()) {
        auto batch = feed.poll(dir.db(), 10);
        BOOST_TEST(batch.rows.size() <= 10u);
        rows += batch.rows.size();
        BOOST_REQUIRE(++rounds < 10);
    }
    BOOST_TEST(rows == 25u);
    BOOST_TEST(rounds == 3u);
    // rows committed after the catch-up target do not un-catch it
    BOOST_REQUIRE((*store)->submit_one(input(1, 30)));
    BOOST_TEST(feed.poll(dir.db(), 10).rows.size() == 1u);
    BOOST_TEST(feed.caught_up());
}

BOOST_AUTO_TEST_CASE(an_unreadable_store_is_not_an_empty_one) {
    TempDir dir;
    ReportCatchUp feed;
    BOOST_TEST(feed.poll(dir.db("missing.db"), 10).rows.empty());
    BOOST_TEST(!feed.caught_up());
}

BOOST_AUTO_TEST_SUITE_END()
