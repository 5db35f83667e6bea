#define BOOST_TEST_MODULE report_store
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/report/report_store.hpp"
#include "temp_dir.hpp"

using namespace explsched;

namespace {

template <typename T>
std::string why(const Result<T>& r) {
    return r.ok() ? std::string() : r.error().message;
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

ReportInput input(uint32_t job, uint64_t step, double metric, uint32_t uid = 1000) {
    ReportInput in;
    in.body.job_id = job;
    in.body.step = step;
    in.body.metric = metric;
    in.body.client_time = 1700000000.0 + static_cast<double>(step);
    in.uid = uid;
    in.server_time = 1700000001.0;
    return in;
}

std::unique_ptr<ReportStore> open_store(const std::string& path) {
    auto s = ReportStore::open(path);
    BOOST_TEST_REQUIRE(s.ok(), why(s));
    return std::move(s).value();
}

std::unique_ptr<ReportReader> open_reader(const std::string& path) {
    auto r = ReportReader::open(path);
    BOOST_TEST_REQUIRE(r.ok(), why(r));
    return std::move(r).value();
}

StoreOutcome submit(ReportStore& store, const ReportInput& in) {
    auto r = store.submit_one(in);
    BOOST_TEST_REQUIRE(r.ok(), why(r));
    return *r;
}

std::string sql_text(const std::string& path, const char* sql) {
    sqlite3* db = nullptr;
    BOOST_TEST_REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    BOOST_TEST_REQUIRE(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK);
    std::string out;
    if (sqlite3_step(stmt) == SQLITE_ROW) out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return out;
}

// The whole table as text, to prove refusals change nothing.
std::string dump(const std::string& path) {
    auto reader = open_reader(path);
    auto rows = reader->read_since(0);
    BOOST_TEST_REQUIRE(rows.ok(), why(rows));
    std::string out;
    for (const auto& r : *rows) {
        char line[200];
        std::snprintf(line, sizeof line, "%lld %u %llu %.17g %.17g %.17g %u\n", static_cast<long long>(r.id),
                      r.job_id, static_cast<unsigned long long>(r.step), r.metric,
                      r.throughput.value_or(-1.0), r.client_time, r.uid);
        out += line;
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(report_store)

BOOST_AUTO_TEST_CASE(creates_a_wal_database_with_a_schema_version) {
    TempDir dir;
    auto store = open_store(dir.db());
    BOOST_TEST(sql_text(dir.db(), "PRAGMA journal_mode") == "wal");
    BOOST_TEST(sql_text(dir.db(), "SELECT version FROM schema_version") == "2");
    auto out = submit(*store, input(5, 10, 0.5));
    BOOST_TEST((out.verdict == StoreVerdict::stored));
    BOOST_TEST(out.id == 1);
    store.reset();
    // Reopening keeps the data and does not recreate the schema.
    store = open_store(dir.db());
    BOOST_TEST((submit(*store, input(5, 10, 0.5)).verdict == StoreVerdict::duplicate));
    BOOST_TEST(sql_text(dir.db(), "SELECT COUNT(*) FROM schema_version") == "1");
}

BOOST_AUTO_TEST_CASE(a_reused_job_id_starts_a_new_curve_with_its_own_owner) {
    TempDir dir;
    auto store = open_store(dir.db());
    ReportInput first = input(42, 100, 0.5, 1001);
    first.job_submit = 1700000000;
    BOOST_TEST((submit(*store, first).verdict == StoreVerdict::stored));
    first.body.step = 900;
    BOOST_TEST((submit(*store, first).verdict == StoreVerdict::stored));
    // Job id 42 again (wrap-around or a reset cluster), another user, a later submit time: its
    // step 10 is neither "behind" the old instance's 900 nor a conflict with anything.
    ReportInput reused = input(42, 10, 2.0, 1002);
    reused.job_submit = 1800000000;
    auto out = submit(*store, reused);
    BOOST_TEST((out.verdict == StoreVerdict::stored), out.message);
    reused.body.step = 100;  // the old instance's step 100 had another value: not a conflict
    BOOST_TEST((submit(*store, reused).verdict == StoreVerdict::stored));
    auto reader = open_reader(dir.db());
    auto old_curve = reader->job_curve(42, 1700000000);
    auto new_curve = reader->job_curve(42, 1800000000);
    BOOST_TEST_REQUIRE(old_curve.ok(), why(old_curve));
    BOOST_TEST_REQUIRE(new_curve.ok(), why(new_curve));
    BOOST_TEST_REQUIRE(old_curve->size() == 2u);
    BOOST_TEST_REQUIRE(new_curve->size() == 2u);
    for (const auto& r : *old_curve) BOOST_TEST(r.uid == 1001u);
    for (const auto& r : *new_curve) BOOST_TEST(r.uid == 1002u);
    BOOST_TEST((*new_curve)[0].step == 10u);
    auto latest = reader->latest_job_curve(42);
    BOOST_TEST_REQUIRE(latest.ok(), why(latest));
    BOOST_TEST_REQUIRE(latest->size() == 2u);
    BOOST_TEST((*latest)[0].job_submit == 1800000000);
    auto rows = reader->read_since(0);
    BOOST_TEST_REQUIRE(rows.ok(), why(rows));
    BOOST_TEST((*rows)[0].job_submit == 1700000000);
}

BOOST_AUTO_TEST_CASE(a_requeued_job_goes_on_with_its_curve_and_never_joins_another_users) {
    TempDir dir;
    auto store = open_store(dir.db());
    // User 1002 had job id 42 first (a long-gone instance).
    ReportInput other = input(42, 500, 0.1, 1002);
    other.job_submit = 1000;
    BOOST_TEST((submit(*store, other).verdict == StoreVerdict::stored));
    // User 1001's job 42, submitted at 2000, reports steps 10 and 20.
    ReportInput mine = input(42, 10, 0.9, 1001);
    mine.job_submit = 2000;
    BOOST_TEST((submit(*store, mine).verdict == StoreVerdict::stored));
    mine.body.step = 20;
    BOOST_TEST((submit(*store, mine).verdict == StoreVerdict::stored));
    // Preempted and requeued: slurmctld now says submit 3000, restart count 1. Its reports go on
    // in the first run's instance (a step behind the last one is refused as before).
    ReportInput requeued = input(42, 15, 0.85, 1001);
    requeued.job_submit = 3000;
    requeued.job_restarts = 1;
    auto behind = submit(*store, requeued);
    BOOST_TEST((behind.code == wire::Code::step_behind));
    BOOST_TEST(behind.last_step.value_or(0) == 20u);
    requeued.body.step = 30;
    BOOST_TEST((submit(*store, requeued).verdict == StoreVerdict::stored));
    auto reader = open_reader(dir.db());
    auto curve = reader->job_curve(42, 2000);
    BOOST_TEST_REQUIRE(curve.ok(), why(curve));
    BOOST_TEST(curve->size() == 3u);
    BOOST_TEST(reader->job_curve(42, 3000)->empty());
    // User 1002's old instance is untouched, and a requeued job of a user with no earlier
    // instance starts its own.
    BOOST_TEST(reader->job_curve(42, 1000)->size() == 1u);
    ReportInput stranger = input(43, 1, 0.5, 1003);
    stranger.job_submit = 4000;
    stranger.job_restarts = 2;
    BOOST_TEST((submit(*store, stranger).verdict == StoreVerdict::stored));
    BOOST_TEST(reader->job_curve(43, 4000)->size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_schema_1_database_is_upgraded_keeping_rows_and_ids) {
    TempDir dir;
    {
        sqlite3* db = nullptr;
        BOOST_TEST_REQUIRE(sqlite3_open(dir.db().c_str(), &db) == SQLITE_OK);
        const char* v1 = R"sql(
            PRAGMA journal_mode=WAL;
            CREATE TABLE schema_version (version INTEGER NOT NULL);
            INSERT INTO schema_version VALUES (1);
            CREATE TABLE reports (id INTEGER PRIMARY KEY AUTOINCREMENT, job_id INTEGER NOT NULL CHECK (job_id > 0),
                step INTEGER NOT NULL CHECK (step >= 0), metric REAL NOT NULL, throughput REAL,
                client_time REAL NOT NULL, server_time REAL NOT NULL, uid INTEGER NOT NULL, UNIQUE (job_id, step));
            INSERT INTO reports VALUES (5, 7, 10, 0.5, NULL, 1.0, 2.0, 1001);
            INSERT INTO reports VALUES (9, 7, 20, 0.4, 3.5, 1.0, 2.0, 1001);
        )sql";
        BOOST_TEST_REQUIRE(sqlite3_exec(db, v1, nullptr, nullptr, nullptr) == SQLITE_OK);
        sqlite3_close(db);
    }
    // A reader refuses the old schema with a message saying what to do.
    auto early = ReportReader::open(dir.db());
    BOOST_TEST_REQUIRE(!early.ok());
    BOOST_TEST(contains(early.error().message, "start explschedd once to upgrade"));
    auto store = open_store(dir.db());
    BOOST_TEST(sql_text(dir.db(), "SELECT version FROM schema_version") == "2");
    auto reader = open_reader(dir.db());
    auto rows = reader->read_since(0);
    BOOST_TEST_REQUIRE(rows.ok(), why(rows));
    BOOST_TEST_REQUIRE(rows->size() == 2u);
    BOOST_TEST((*rows)[0].id == 5);
    BOOST_TEST((*rows)[1].id == 9);
    BOOST_TEST((*rows)[1].throughput.value_or(0.0) == 3.5);
    BOOST_TEST((*rows)[0].job_submit == 0);
    // New ids continue after the old ones.
    auto out = submit(*store, input(7, 30, 0.3, 1001));
    BOOST_TEST((out.verdict == StoreVerdict::stored));
    BOOST_TEST(out.id > 9);
}

BOOST_AUTO_TEST_CASE(a_newer_schema_is_refused) {
    TempDir dir;
    open_store(dir.db()).reset();
    sqlite3* db = nullptr;
    BOOST_TEST_REQUIRE(sqlite3_open(dir.db().c_str(), &db) == SQLITE_OK);
    BOOST_TEST_REQUIRE(sqlite3_exec(db, "UPDATE schema_version SET version = 7", nullptr, nullptr, nullptr) ==
                       SQLITE_OK);
    sqlite3_close(db);
    auto s = ReportStore::open(dir.db());
    BOOST_TEST_REQUIRE(!s.ok());
    BOOST_TEST(contains(s.error().message, "schema version 7"));
    BOOST_TEST(contains(s.error().message, dir.db()));
    BOOST_TEST(!ReportReader::open(dir.db()).ok());
}

BOOST_AUTO_TEST_CASE(open_errors_name_the_path) {
    auto s = ReportStore::open("/nonexistent-dir/x/reports.db");
    BOOST_TEST_REQUIRE(!s.ok());
    BOOST_TEST(contains(s.error().message, "/nonexistent-dir/x/reports.db"));
    TempDir dir;
    auto r = ReportReader::open(dir.db());  // a reader never creates the database
    BOOST_TEST_REQUIRE(!r.ok());
    BOOST_TEST(contains(r.error().message, dir.db()));
    BOOST_TEST(!std::filesystem::exists(dir.db()));
}

BOOST_AUTO_TEST_CASE(non_finite_and_absurd_values_are_refused) {
    TempDir dir;
    auto store = open_store(dir.db());
    submit(*store, input(1, 1, 2.0));
    const std::string before = dump(dir.db());
    for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity(), 1.5e15, -2e15}) {
        auto out = submit(*store, input(1, 2, bad));
        BOOST_TEST((out.verdict == StoreVerdict::refused));
        BOOST_TEST((out.code == wire::Code::invalid_value));
        BOOST_TEST(contains(out.message, "metric"));
    }
    ReportInput t = input(1, 2, 1.0);
    t.body.throughput = std::numeric_limits<double>::quiet_NaN();
    BOOST_TEST((submit(*store, t).code == wire::Code::invalid_value));
    t.body.throughput = -1.0;
    BOOST_TEST((submit(*store, t).code == wire::Code::invalid_value));
    BOOST_TEST((submit(*store, input(1, 2000000000000000ULL, 1.0)).code == wire::Code::invalid_value));
    BOOST_TEST((submit(*store, input(0, 3, 1.0)).code == wire::Code::invalid_value));
    BOOST_TEST(dump(dir.db()) == before);
}

BOOST_AUTO_TEST_CASE(decreasing_steps_are_refused_with_the_last_step) {
    TempDir dir;
    auto store = open_store(dir.db());
    BOOST_TEST((submit(*store, input(42, 100, 1.0)).verdict == StoreVerdict::stored));
    BOOST_TEST((submit(*store, input(42, 200, 0.9)).verdict == StoreVerdict::stored));
    const std::string before = dump(dir.db());
    auto out = submit(*store, input(42, 150, 0.95));
    BOOST_TEST((out.verdict == StoreVerdict::refused));
    BOOST_TEST((out.code == wire::Code::step_behind));
    BOOST_TEST_REQUIRE(out.last_step.has_value());
    BOOST_TEST(*out.last_step == 200u);
    BOOST_TEST(contains(out.message, "last stored step 200"));
    BOOST_TEST(contains(out.message, "job 42"));
    // Another job's steps are independent.
    BOOST_TEST((submit(*store, input(43, 5, 3.0)).verdict == StoreVerdict::stored));
    // Skipping ahead after the refusal works.
    BOOST_TEST((submit(*store, input(42, 201, 0.8)).verdict == StoreVerdict::stored));
    auto reader = open_reader(dir.db());
    auto curve = reader->job_curve(42, 0);
    BOOST_TEST_REQUIRE(curve.ok(), why(curve));
    BOOST_TEST_REQUIRE(curve->size() == 3u);
    BOOST_TEST((*curve)[0].step == 100u);
    BOOST_TEST((*curve)[2].step == 201u);
    BOOST_TEST(contains(dump(dir.db()), before));
}

BOOST_AUTO_TEST_CASE(same_step_same_value_is_an_idempotent_reack) {
    TempDir dir;
    auto store = open_store(dir.db());
    auto first = submit(*store, input(7, 10, 0.25));
    submit(*store, input(7, 20, 0.2));
    const std::string before = dump(dir.db());
    auto again = submit(*store, input(7, 10, 0.25));  // an old report resent after a lost ack
    BOOST_TEST((again.verdict == StoreVerdict::duplicate));
    BOOST_TEST(again.id == first.id);
    auto last = submit(*store, input(7, 20, 0.2));
    BOOST_TEST((last.verdict == StoreVerdict::duplicate));
    auto conflict = submit(*store, input(7, 20, 0.3));
    BOOST_TEST((conflict.verdict == StoreVerdict::refused));
    BOOST_TEST((conflict.code == wire::Code::step_conflict));
    BOOST_TEST(contains(conflict.message, "metric 0.3 differs from the stored value 0.2"));
    BOOST_TEST(dump(dir.db()) == before);
}

BOOST_AUTO_TEST_CASE(a_batch_is_one_transaction_with_per_report_outcomes) {
    TempDir dir;
    auto store = open_store(dir.db());
    std::vector<ReportInput> batch = {input(1, 1, 1.0), input(1, 2, 0.9), input(1, 1, 5.0), input(2, 1, NAN),
                                      input(1, 0, 1.0), input(1, 2, 0.9), input(2, 9, 1.0)};
    auto r = store->submit(batch);
    BOOST_TEST_REQUIRE(r.ok(), why(r));
    BOOST_TEST_REQUIRE(r->size() == batch.size());
    const StoreVerdict expect[] = {StoreVerdict::stored,  StoreVerdict::stored,  StoreVerdict::refused,
                                   StoreVerdict::refused, StoreVerdict::refused, StoreVerdict::duplicate,
                                   StoreVerdict::stored};
    for (std::size_t i = 0; i < batch.size(); ++i) BOOST_TEST(((*r)[i].verdict == expect[i]), "report " << i);
    BOOST_TEST(((*r)[2].code == wire::Code::step_conflict));
    BOOST_TEST(((*r)[4].code == wire::Code::step_behind));
    auto reader = open_reader(dir.db());
    BOOST_TEST(*reader->last_id() == 3);
}

BOOST_AUTO_TEST_CASE(incremental_reads_follow_commit_order) {
    TempDir dir;
    auto store = open_store(dir.db());
    auto reader = open_reader(dir.db());
    BOOST_TEST(reader->read_since(0)->empty());
    for (uint64_t s = 1; s <= 5; ++s) submit(*store, input(3, s, 1.0 / static_cast<double>(s)));
    auto rows = reader->read_since(0, 3);
    BOOST_TEST_REQUIRE(rows->size() == 3u);
    auto more = reader->read_since(rows->back().id);
    BOOST_TEST_REQUIRE(more->size() == 2u);
    BOOST_TEST(more->front().id == 4);
    BOOST_TEST(more->back().step == 5u);
    BOOST_TEST(more->back().metric == 0.2);
    BOOST_TEST(more->back().uid == 1000u);
    BOOST_TEST(!more->back().throughput.has_value());
    BOOST_TEST(reader->read_since(5)->empty());
    BOOST_TEST(reader->job_curve(99, 0)->empty());
}

BOOST_AUTO_TEST_CASE(a_reader_in_another_process_reads_while_the_writer_commits) {
    TempDir dir;
    open_store(dir.db()).reset();
    constexpr int kJobs = 4, kSteps = 500;
    const pid_t writer = fork();
    BOOST_TEST_REQUIRE(writer >= 0);
    if (writer == 0) {
        auto s = ReportStore::open(dir.db(), StoreOptions{false, 5000});
        if (!s) _exit(2);
        for (int step = 1; step <= kSteps; ++step) {
            std::vector<ReportInput> batch;
            for (int job = 1; job <= kJobs; ++job)
                batch.push_back(input(static_cast<uint32_t>(job), static_cast<uint64_t>(step), 1.0 / step));
            auto r = (*s)->submit(batch);
            if (!r) _exit(3);
        }
        _exit(0);
    }
    auto reader = open_reader(dir.db());
    int64_t cursor = 0;
    std::vector<uint64_t> last_step(kJobs + 1, 0);
    int polls = 0, rows_seen = 0;
    bool writer_done = false;
    int status = 0;
    while (rows_seen < kJobs * kSteps) {
        auto rows = reader->read_since(cursor, 300);
        BOOST_TEST_REQUIRE(rows.ok(), why(rows));
        ++polls;
        for (const auto& r : *rows) {
            BOOST_TEST_REQUIRE(r.id == cursor + 1);  // contiguous, in commit order
            cursor = r.id;
            BOOST_TEST_REQUIRE(r.step == last_step[r.job_id] + 1);
            last_step[r.job_id] = r.step;
            ++rows_seen;
        }
        if (rows->empty()) {
            if (writer_done) break;
            writer_done = waitpid(writer, &status, WNOHANG) == writer;
        }
    }
    if (!writer_done) BOOST_TEST_REQUIRE(waitpid(writer, &status, 0) == writer);
    BOOST_TEST(WIFEXITED(status));
    BOOST_TEST(WEXITSTATUS(status) == 0);
    BOOST_TEST(rows_seen == kJobs * kSteps);
    BOOST_TEST(polls > 1);
    BOOST_TEST(sql_text(dir.db(), "PRAGMA integrity_check") == "ok");
}

BOOST_AUTO_TEST_CASE(an_acknowledged_report_survives_sigkill_of_the_writer) {
    TempDir dir;
    open_store(dir.db()).reset();
    int fds[2];
    BOOST_TEST_REQUIRE(pipe(fds) == 0);
    const pid_t writer = fork();
    BOOST_TEST_REQUIRE(writer >= 0);
    if (writer == 0) {
        close(fds[0]);
        auto s = ReportStore::open(dir.db());
        if (!s) _exit(2);
        for (uint64_t step = 1;; ++step) {
            auto r = (*s)->submit_one(input(11, step, 1.0));
            if (!r || r->verdict != StoreVerdict::stored) _exit(3);
            // The ack: written only after submit() returned, i.e. after COMMIT.
            if (write(fds[1], &step, sizeof step) != sizeof step) _exit(4);
        }
    }
    close(fds[1]);
    uint64_t acked = 0, step = 0;
    while (acked < 300 && read(fds[0], &step, sizeof step) == sizeof step) acked = step;
    kill(writer, SIGKILL);
    // Acks already in the pipe were sent before the kill too.
    while (read(fds[0], &step, sizeof step) == sizeof step) acked = step;
    close(fds[0]);
    int status = 0;
    BOOST_TEST_REQUIRE(waitpid(writer, &status, 0) == writer);
    BOOST_TEST(WIFSIGNALED(status));
    BOOST_TEST(acked >= 300u);

    auto reader = open_reader(dir.db());
    auto curve = reader->job_curve(11, 0);
    BOOST_TEST_REQUIRE(curve.ok(), why(curve));
    BOOST_TEST_REQUIRE(curve->size() >= acked);
    for (uint64_t i = 0; i < acked; ++i) BOOST_TEST_REQUIRE((*curve)[i].step == i + 1);
    // The writer can reopen and continue after the crash.
    auto store = open_store(dir.db());
    BOOST_TEST((submit(*store, input(11, curve->back().step + 1, 1.0)).verdict == StoreVerdict::stored));
    BOOST_TEST(sql_text(dir.db(), "PRAGMA integrity_check") == "ok");
}

BOOST_AUTO_TEST_CASE(hostile_input_leaves_the_database_intact) {
    TempDir dir;
    auto store = open_store(dir.db());
    for (uint64_t s = 1; s <= 50; ++s) submit(*store, input(9, s * 10, 1.0 / static_cast<double>(s)));
    const std::string before = dump(dir.db());
    std::vector<ReportInput> hostile;
    unsigned seed = 12345;
    for (int i = 0; i < 2000; ++i) {
        seed = seed * 1103515245u + 12345u;
        const uint64_t step = (seed >> 8) % 500;  // all at or below the last step 500
        double metric = (seed & 1) ? 1.0 / static_cast<double>(step + 1) : -1.0;
        if (seed % 7 == 0) metric = NAN;
        if (seed % 11 == 0) metric = 1e300;
        hostile.push_back(input(9, step, metric));
    }
    auto r = store->submit(hostile);
    BOOST_TEST_REQUIRE(r.ok(), why(r));
    for (const auto& out : *r) BOOST_TEST_REQUIRE((out.verdict != StoreVerdict::stored));
    BOOST_TEST(dump(dir.db()) == before);
    BOOST_TEST(sql_text(dir.db(), "PRAGMA integrity_check") == "ok");
}

BOOST_AUTO_TEST_CASE(the_point_cap_refuses_past_the_limit_per_instance_and_stores_nothing_half_way) {
    TempDir dir;
    StoreOptions opt;
    opt.max_points_per_job = 3;
    auto st = ReportStore::open(dir.db(), opt);
    BOOST_TEST_REQUIRE(st.ok(), why(st));
    auto& store = **st;
    // Two steps committed, then a batch that crosses the cap: later inputs see earlier ones.
    BOOST_TEST((submit(store, input(5, 1, 1.0)).verdict == StoreVerdict::stored));
    BOOST_TEST((submit(store, input(5, 2, 0.9)).verdict == StoreVerdict::stored));
    auto batch = store.submit({input(5, 3, 0.8), input(5, 4, 0.7), input(5, 3, 0.8)});
    BOOST_TEST_REQUIRE(batch.ok(), why(batch));
    BOOST_TEST(((*batch)[0].verdict == StoreVerdict::stored));
    BOOST_TEST(((*batch)[1].verdict == StoreVerdict::refused));
    BOOST_TEST(((*batch)[1].code == wire::Code::too_many_points));
    BOOST_TEST(contains((*batch)[1].message, "max_points_per_job=3"), (*batch)[1].message);
    BOOST_TEST(((*batch)[2].verdict == StoreVerdict::duplicate));  // a re-ack is not a new point
    const std::string before = dump(dir.db());
    BOOST_TEST((submit(store, input(5, 9, 0.1)).code == wire::Code::too_many_points));
    BOOST_TEST(dump(dir.db()) == before);
    // Another instance of the same id, and another job, have their own count.
    ReportInput other = input(5, 1, 1.0);
    other.job_submit = 1700000500;
    BOOST_TEST((submit(store, other).verdict == StoreVerdict::stored));
    BOOST_TEST((submit(store, input(6, 1, 1.0)).verdict == StoreVerdict::stored));
    // A reopened store counts what is on disk.
    st->reset();
    auto again = ReportStore::open(dir.db(), opt);
    BOOST_TEST_REQUIRE(again.ok(), why(again));
    BOOST_TEST((submit(**again, input(5, 10, 0.05)).code == wire::Code::too_many_points));
}

BOOST_AUTO_TEST_CASE(the_database_is_created_0600_and_foreign_or_writable_files_are_refused) {
    TempDir dir;
    {
        auto store = open_store(dir.db());
        submit(*store, input(1, 1, 1.0));
        struct stat st;
        BOOST_TEST_REQUIRE(stat(dir.db().c_str(), &st) == 0);
        BOOST_TEST((st.st_mode & 07777) == 0600u);
        for (const char* side : {"-wal", "-shm"}) {
            const std::string p = dir.db() + side;
            if (stat(p.c_str(), &st) == 0) BOOST_TEST((st.st_mode & 077) == 0u, p);
        }
    }
    // A group-writable database is refused, naming the mode.
    BOOST_TEST_REQUIRE(chmod(dir.db().c_str(), 0660) == 0);
    auto s = ReportStore::open(dir.db());
    BOOST_TEST_REQUIRE(!s.ok());
    BOOST_TEST(contains(s.error().message, "0660"), s.error().message);
    // A readable-by-others one is tightened to 0600.
    BOOST_TEST_REQUIRE(chmod(dir.db().c_str(), 0644) == 0);
    BOOST_TEST_REQUIRE(ReportStore::open(dir.db()).ok());
    struct stat st;
    BOOST_TEST_REQUIRE(stat(dir.db().c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 07777) == 0600u);
    // A symbolic link is refused.
    const std::string link = dir.db("link.db");
    BOOST_TEST_REQUIRE(symlink(dir.db().c_str(), link.c_str()) == 0);
    auto l = ReportStore::open(link);
    BOOST_TEST_REQUIRE(!l.ok());
    BOOST_TEST(contains(l.error().message, "symbolic link"), l.error().message);
    // Another user's file is refused (needs root to chown).
    if (geteuid() == 0) {
        BOOST_TEST_REQUIRE(chown(dir.db().c_str(), 65534, 65534) == 0);
        auto o = ReportStore::open(dir.db());
        BOOST_TEST_REQUIRE(!o.ok());
        BOOST_TEST(contains(o.error().message, "owned by uid 65534"), o.error().message);
    }
}

BOOST_AUTO_TEST_CASE(pruning_deletes_one_instance_in_bounded_batches_and_keeps_cursors_valid) {
    TempDir dir;
    auto store = open_store(dir.db());
    for (uint64_t step = 1; step <= 25; ++step)
        submit(*store, input(7, step, 1.0 / static_cast<double>(step)));
    ReportInput newer = input(8, 1, 0.5);
    newer.server_time = 1800000000.0;
    submit(*store, newer);
    auto reader = open_reader(dir.db());
    auto all = reader->read_since(0);
    BOOST_TEST_REQUIRE(all.ok());
    const int64_t cursor = all->back().id;

    auto old = reader->instances_before(1750000000.0, 100);
    BOOST_TEST_REQUIRE(old.ok(), why(old));
    BOOST_TEST_REQUIRE(old->size() == 1u);
    BOOST_TEST((*old)[0].job_id == 7u);
    BOOST_TEST((*old)[0].rows == 25u);

    std::vector<uint64_t> batches;
    for (;;) {
        auto n = store->prune_instance(7, 0, 10);
        BOOST_TEST_REQUIRE(n.ok(), why(n));
        batches.push_back(*n);
        if (*n < 10) break;
    }
    BOOST_TEST((batches == std::vector<uint64_t>{10, 10, 5}));
    auto curve = reader->job_curve(7, 0);
    BOOST_TEST_REQUIRE(curve.ok());
    BOOST_TEST(curve->empty());
    // Ids are never reused: a reader's cursor still yields exactly the rows after it.
    submit(*store, input(9, 1, 0.5));
    auto after = reader->read_since(cursor);
    BOOST_TEST_REQUIRE(after.ok());
    BOOST_TEST_REQUIRE(after->size() == 1u);
    BOOST_TEST((*after)[0].job_id == 9u);
    BOOST_TEST((*after)[0].id > cursor);
    // The pruned job's count starts over.
    StoreOptions opt;
    opt.max_points_per_job = 2;
    store.reset();
    auto capped = ReportStore::open(dir.db(), opt);
    BOOST_TEST_REQUIRE(capped.ok());
    BOOST_TEST((submit(**capped, input(7, 100, 0.1)).verdict == StoreVerdict::stored));
}

BOOST_AUTO_TEST_CASE(a_reader_without_permission_is_told_who_may_read) {
    TempDir dir;
    open_store(dir.db());
    if (geteuid() != 0) return;  // root reads anything; the check below needs an ordinary uid
    const pid_t pid = fork();
    BOOST_TEST_REQUIRE(pid >= 0);
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
        auto r = ReportReader::open(dir.db());
        _exit(!r.ok() && contains(r.error().message, "SlurmUser") ? 0 : 1);
    }
    int status = 0;
    BOOST_TEST_REQUIRE(waitpid(pid, &status, 0) == pid);
    BOOST_TEST(WIFEXITED(status));
    BOOST_TEST(WEXITSTATUS(status) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
