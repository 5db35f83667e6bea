#define BOOST_TEST_MODULE daemon_committer
#include <boost/test/unit_test.hpp>

#include <poll.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "core/base/log.hpp"
#include "core/report/report_store.hpp"
#include "daemon/committer.hpp"
#include "temp_dir.hpp"

using namespace explsched;
using namespace explsched::daemon;

namespace {

CommitTask task(uint64_t conn, uint64_t seq, uint32_t job, uint64_t step, double metric) {
    CommitTask t;
    t.ticket = Ticket{conn, seq};
    t.input.body.job_id = job;
    t.input.body.step = step;
    t.input.body.metric = metric;
    t.input.body.client_time = 1.0;
    t.input.uid = 1000;
    t.input.server_time = 2.0;
    return t;
}

// Collects completions until `count` arrived (or 10 s passed), checking each against the database
// as it arrives: a reply may only leave after the COMMIT that stored its report.
std::vector<Completion> collect(CompletionQueue& done, std::size_t count, ReportReader* reader = nullptr) {
    std::vector<Completion> all;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (all.size() < count && std::chrono::steady_clock::now() < deadline) {
        pollfd p{done.fd(), POLLIN, 0};
        poll(&p, 1, 100);
        for (auto& c : done.take()) {
            if (reader != nullptr && c.reply && c.reply->status == wire::ReplyStatus::stored) {
                auto curve = reader->job_curve(*c.reply->job_id, 0);
                BOOST_TEST_REQUIRE(curve.ok());
                bool found = false;
                for (const auto& r : *curve) found = found || r.step == *c.reply->step;
                BOOST_TEST_REQUIRE(found, "acknowledged before commit: step " << *c.reply->step);
            }
            all.push_back(std::move(c));
        }
    }
    return all;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(daemon_committer)

BOOST_AUTO_TEST_CASE(replies_leave_after_commit_and_batches_group_reports) {
    TempDir dir;
    auto store = ReportStore::open(dir.db());
    BOOST_TEST_REQUIRE(store.ok());
    auto reader = ReportReader::open(dir.db());
    BOOST_TEST_REQUIRE(reader.ok());
    NullLogger log;
    CompletionQueue done;
    constexpr int kReports = 2000;
    {
        Committer committer(**store, 512, done, log);
        // Many producers at once, as auth workers are: reports pile up while a commit runs.
        std::vector<std::thread> producers;
        for (int p = 0; p < 4; ++p) {
            producers.emplace_back([&, p] {
                for (int i = 1; i <= kReports / 4; ++i)
                    committer.push(task(static_cast<uint64_t>(p), static_cast<uint64_t>(i),
                                        static_cast<uint32_t>(100 + p), static_cast<uint64_t>(i), 1.0 / i));
            });
        }
        for (auto& t : producers) t.join();
        auto replies = collect(done, kReports, reader->get());
        BOOST_TEST_REQUIRE(replies.size() == static_cast<std::size_t>(kReports));
        // Per producer (connection), replies come in the order its reports were pushed.
        std::map<uint64_t, uint64_t> last_seq;
        for (const auto& c : replies) {
            BOOST_TEST_REQUIRE((c.stage == Completion::Stage::commit));
            BOOST_TEST_REQUIRE(c.reply.has_value());
            BOOST_TEST_REQUIRE((c.reply->status == wire::ReplyStatus::stored));
            BOOST_TEST_REQUIRE(c.ticket.seq == last_seq[c.ticket.conn] + 1);
            last_seq[c.ticket.conn] = c.ticket.seq;
        }
        BOOST_TEST(committer.stats().stored.load() == static_cast<uint64_t>(kReports));
        BOOST_TEST(committer.stats().batches.load() < static_cast<uint64_t>(kReports));
        BOOST_TEST_MESSAGE("2000 reports in " << committer.stats().batches.load() << " commits");
    }
    BOOST_TEST(*(*reader)->last_id() == kReports);
}

BOOST_AUTO_TEST_CASE(max_batch_one_commits_each_report_alone) {
    TempDir dir;
    auto store = ReportStore::open(dir.db());
    BOOST_TEST_REQUIRE(store.ok());
    NullLogger log;
    CompletionQueue done;
    Committer committer(**store, 1, done, log);
    for (int i = 1; i <= 50; ++i)
        committer.push(task(1, static_cast<uint64_t>(i), 7, static_cast<uint64_t>(i), 1.0));
    auto replies = collect(done, 50);
    BOOST_TEST(replies.size() == 50u);
    BOOST_TEST(committer.stats().batches.load() == 50u);
}

BOOST_AUTO_TEST_CASE(refusals_carry_code_and_last_step) {
    TempDir dir;
    auto store = ReportStore::open(dir.db());
    BOOST_TEST_REQUIRE(store.ok());
    NullLogger log;
    CompletionQueue done;
    Committer committer(**store, 64, done, log);
    committer.push(task(1, 1, 9, 100, 1.0));
    committer.push(task(1, 2, 9, 50, 1.0));
    committer.push(task(1, 3, 9, 100, 2.0));
    committer.push(task(1, 4, 9, 100, 1.0));
    auto replies = collect(done, 4);
    BOOST_TEST_REQUIRE(replies.size() == 4u);
    BOOST_TEST((replies[0].reply->status == wire::ReplyStatus::stored));
    BOOST_TEST((replies[1].reply->code == wire::Code::step_behind));
    BOOST_TEST(*replies[1].reply->last_step == 100u);
    BOOST_TEST((replies[2].reply->code == wire::Code::step_conflict));
    BOOST_TEST((replies[3].reply->status == wire::ReplyStatus::duplicate));
    BOOST_TEST(committer.stats().refused.load() == 2u);
}

BOOST_AUTO_TEST_CASE(destruction_drains_the_queue) {
    TempDir dir;
    auto store = ReportStore::open(dir.db());
    BOOST_TEST_REQUIRE(store.ok());
    NullLogger log;
    CompletionQueue done;
    {
        Committer committer(**store, 8, done, log);
        for (int i = 1; i <= 100; ++i)
            committer.push(task(1, static_cast<uint64_t>(i), 5, static_cast<uint64_t>(i), 1.0));
    }  // shutdown: what was queued is committed, not dropped
    auto reader = ReportReader::open(dir.db());
    BOOST_TEST_REQUIRE(reader.ok());
    BOOST_TEST(*(*reader)->last_id() == 100);
    BOOST_TEST(done.take().size() == 100u);
}

BOOST_AUTO_TEST_SUITE_END()
