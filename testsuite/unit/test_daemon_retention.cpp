#define BOOST_TEST_MODULE daemon_retention
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <map>
#include <thread>

#include "core/base/log.hpp"
#include "core/report/report_store.hpp"
#include "daemon/committer.hpp"
#include "daemon/retention.hpp"
#include "temp_dir.hpp"

using namespace explsched;
using namespace explsched::daemon;

namespace {

class NullLog final : public Logger {
public:
    bool enabled(LogLevel) const override { return false; }
    void write(LogLevel, std::string_view) override {}
};

class FakeOwners : public JobOwners {
public:
    explicit FakeOwners(Logger& log) : JobOwners("/nonexistent/slurm.conf", log) {}
    std::map<uint32_t, Answer> jobs;
    bool down = false;

protected:
    Answer ask_slurmctld(uint32_t job_id) override {
        if (down) return {Kind::unavailable, 0, 0, false, false, "slurmctld down"};
        auto it = jobs.find(job_id);
        if (it == jobs.end()) return {Kind::unknown_job, 0, 0, false, false, "unknown"};
        return it->second;
    }
};

constexpr double kDay = 86400.0;
constexpr double kNow = 1800000000.0;

void add(ReportStore& store, uint32_t job, int64_t submit, int points, double server_time) {
    std::vector<ReportInput> batch;
    for (int k = 1; k <= points; ++k) {
        ReportInput in;
        in.body.job_id = job;
        in.body.step = static_cast<uint64_t>(k);
        in.body.metric = 1.0 / k;
        in.body.client_time = server_time;
        in.job_submit = submit;
        in.uid = 1000;
        in.server_time = server_time;
        batch.push_back(in);
    }
    BOOST_TEST_REQUIRE(store.submit(batch).ok());
}

uint64_t rows(const std::string& db, uint32_t job, int64_t submit) {
    auto r = ReportReader::open(db);
    BOOST_TEST_REQUIRE(r.ok());
    auto c = (*r)->job_curve(job, submit);
    BOOST_TEST_REQUIRE(c.ok());
    return c->size();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(daemon_retention)

BOOST_AUTO_TEST_CASE(old_finished_instances_go_active_and_recent_ones_stay) {
    TempDir dir;
    NullLog log;
    auto store = ReportStore::open(dir.db());
    BOOST_TEST_REQUIRE(store.ok());
    add(**store, 1, 100, 2500, kNow - 40 * kDay);  // finished long ago: pruned, in several batches
    add(**store, 2, 200, 10, kNow - 40 * kDay);    // old but still running: kept
    add(**store, 3, 300, 10, kNow - 1 * kDay);     // recent: kept
    add(**store, 2, 150, 10, kNow - 50 * kDay);    // an earlier instance of id 2, finished: pruned
    CompletionQueue done;
    Committer committer(**store, 64, done, log);
    FakeOwners owners(log);
    owners.jobs[2] = {JobOwners::Kind::owner, 1000, 200, true, false, {}};
    DaemonLimits limits;
    limits.retention = 30 * 86400;
    limits.retention_batch = 1000;

    owners.down = true;  // slurmctld unreachable: nothing is deleted
    auto skipped = prune_once(dir.db(), committer, owners, limits, kNow);
    BOOST_TEST_REQUIRE(skipped.ok());
    BOOST_TEST(skipped->skipped);
    BOOST_TEST(rows(dir.db(), 1, 100) == 2500u);

    owners.down = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // past the pause after a failed RPC
    auto r = prune_once(dir.db(), committer, owners, limits, kNow);
    BOOST_TEST_REQUIRE(r.ok());
    BOOST_TEST(r->rows == 2510u);
    BOOST_TEST(r->instances == 2u);
    BOOST_TEST(r->kept_active == 1u);
    BOOST_TEST(rows(dir.db(), 1, 100) == 0u);
    BOOST_TEST(rows(dir.db(), 2, 150) == 0u);
    BOOST_TEST(rows(dir.db(), 2, 200) == 10u);
    BOOST_TEST(rows(dir.db(), 3, 300) == 10u);

    limits.retention = 0;  // keep forever
    auto none = prune_once(dir.db(), committer, owners, limits, kNow + 365 * kDay);
    BOOST_TEST_REQUIRE(none.ok());
    BOOST_TEST(none->rows == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
