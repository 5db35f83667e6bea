#define BOOST_TEST_MODULE test_report_report_feed
#include <boost/test/unit_test.hpp>

#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/log.hpp"
#include "core/report/report_feed.hpp"
#include "core/report/report_store.hpp"
#include "temp_dir.hpp"

using namespace explsched;

namespace {

// Records what the feed says.
struct RecordingLogger final : Logger {
    std::vector<std::pair<LogLevel, std::string>> lines;
    bool enabled(LogLevel) const override { return true; }
    void write(LogLevel level, std::string_view message) override {
        lines.emplace_back(level, std::string(message));
    }
};

ReportInput input(uint32_t job, uint64_t step, double metric) {
    ReportInput in;
    in.body.job_id = job;
    in.body.step = step;
    in.body.metric = metric;
    in.body.client_time = 1700000000.0 + static_cast<double>(step);
    in.uid = 1000;
    in.server_time = 1700000100.0 + static_cast<double>(step);
    return in;
}

void submit(ReportStore& store, const ReportInput& in) {
    auto r = store.submit_one(in);
    BOOST_TEST_REQUIRE(r.ok());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(report_report_feed)

BOOST_AUTO_TEST_CASE(a_store_not_there_yet_is_said_once_and_answers_nothing) {
    TempDir dir;
    RecordingLogger log;
    ReportFeed feed(&log);
    BOOST_TEST(feed.poll(dir.db()).empty());
    BOOST_TEST(feed.poll(dir.db()).empty());
    BOOST_TEST_REQUIRE(log.lines.size() == 1u);
    BOOST_TEST((log.lines[0].first == LogLevel::verbose));
    BOOST_TEST(log.lines[0].second.find("report store not readable yet") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(each_poll_answers_what_was_committed_since_the_last) {
    TempDir dir;
    auto store = ReportStore::open(dir.db());
    BOOST_TEST_REQUIRE(store.ok());
    ReportFeed feed;
    BOOST_TEST(feed.poll(dir.db()).empty());
    submit(**store, input(7, 1, 0.9));
    submit(**store, input(7, 2, 0.8));
    auto first = feed.poll(dir.db());
    BOOST_TEST_REQUIRE(first.size() == 2u);
    BOOST_TEST(first[1].step == 2u);
    BOOST_TEST(feed.poll(dir.db()).empty());
    submit(**store, input(8, 5, 0.5));
    auto second = feed.poll(dir.db());
    BOOST_TEST_REQUIRE(second.size() == 1u);
    BOOST_TEST(second[0].job_id == 8u);
}

BOOST_AUTO_TEST_CASE(a_new_path_starts_from_its_beginning) {
    TempDir dir;
    auto a = ReportStore::open(dir.db("a.db"));
    auto b = ReportStore::open(dir.db("b.db"));
    BOOST_TEST_REQUIRE(a.ok());
    BOOST_TEST_REQUIRE(b.ok());
    for (uint64_t s = 1; s <= 3; ++s) submit(**a, input(1, s, 1.0));
    submit(**b, input(2, 1, 1.0));
    ReportFeed feed;
    BOOST_TEST(feed.poll(dir.db("a.db")).size() == 3u);
    auto other = feed.poll(dir.db("b.db"));
    BOOST_TEST_REQUIRE(other.size() == 1u);
    BOOST_TEST(other[0].job_id == 2u);
}

BOOST_AUTO_TEST_CASE(curve_points_take_the_chosen_clock) {
    StoredReport r;
    r.step = 40;
    r.metric = 0.25;
    r.client_time = 1000.0;
    r.server_time = 5000.0;
    const CurvePoint server = curve_point(r, ReportClock::server);
    BOOST_TEST(server.step == 40.0);
    BOOST_TEST(server.metric == 0.25);
    BOOST_TEST(server.wall_time == 5000.0);
    BOOST_TEST(std::isnan(server.throughput));
    r.throughput = 12.5;
    const CurvePoint client = curve_point(r, ReportClock::client, 900.0);
    BOOST_TEST(client.wall_time == 100.0);
    BOOST_TEST(client.throughput == 12.5);
}

BOOST_AUTO_TEST_SUITE_END()
