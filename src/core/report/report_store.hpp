// The SQLite store of training-curve reports.
//
// One writer (explschedd, ReportStore) and any number of readers in other processes
// (priority/explsched in slurmctld, `explsched` tools: ReportReader). WAL mode lets readers run
// while the writer commits; each reader sees whole transactions only.
//
// A job is one job INSTANCE: (job_id, job_submit), where job_submit is the submit time slurmctld
// gave the job (seconds since the epoch). Slurm reuses job ids (wrap-around at MaxJobId, a
// cluster whose state was reset), so a report never belongs to "job 1234" alone: a reused id
// starts a new curve with a new owner. job_submit 0 marks rows written before schema 2.
// Slurm also gives a job a new submit time when it is REQUEUED (and counts it in restart_cnt):
// a requeued trial is the same trial, so a report of a job with restarts > 0 is filed under the
// newest earlier instance of its id that belongs to the same uid (the instance's first submit
// time), and its curve goes on. Only the same owner's instance is ever chained, so the worst a
// wrap-around can do is join a user's new job to that user's own old curve.
//
// Rules the writer enforces, per job instance (trial):
//  - values: ReportBody must pass wire::validate_body (the trial model's point rules);
//  - a step already stored with the same metric is an idempotent re-ack (duplicate);
//  - a step already stored with another metric is refused (step_conflict);
//  - a step lower than the job's last stored step is refused (step_behind, last step given) so a
//    client resuming from a checkpoint learns where to skip to;
//  - otherwise the report is inserted.
//  - a job instance holds at most max_points_per_job rows; more are refused (too_many_points).
// Rows are inserted by submit() and deleted only by prune_instance() (retention): a refused report
// changes nothing. A batch is one transaction, and
// a report counts as stored only once submit() returned after COMMIT.
//
// Incremental reading: every row has an id that increases with commit order (AUTOINCREMENT,
// single writer, ids never reused even after a delete), so "all rows with id > N" after
// remembering N is a complete, ordered feed; pruning removes whole job instances and leaves every
// reader's cursor valid.
//
// The file holds every user's curves: the writer creates it mode 0600 (its -wal and -shm inherit
// that mode), tightens an existing one to 0600, and refuses a file owned by another uid, one that
// is group- or other-writable, or a symbolic link. Readers must therefore run as the writer's user
// (SlurmUser) or root; a reader without permission gets an error saying so.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/result.hpp"
#include "core/report/report_wire.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace explsched {

// Schema version this code writes; a newer database is refused rather than misread.
inline constexpr int kReportSchemaVersion = 2;

struct StoredReport {
    int64_t id = 0;  // increases with commit order; the incremental-read cursor
    uint32_t job_id = 0;
    int64_t job_submit = 0;  // the job instance's submit time (0: written before schema 2)
    uint64_t step = 0;
    double metric = 0.0;
    std::optional<double> throughput;
    double client_time = 0.0;  // the client's clock (seconds since the epoch)
    double server_time = 0.0;  // explschedd's clock when it accepted the report
    uint32_t uid = 0;          // the munge-authenticated reporter
};

struct ReportInput {
    wire::ReportBody body;
    int64_t job_submit = 0;     // from slurmctld (the owner lookup), never from the client
    uint32_t job_restarts = 0;  // slurmctld's restart count of the job (requeues)
    uint32_t uid = 0;
    double server_time = 0.0;
};

enum class StoreVerdict { stored, duplicate, refused };

struct StoreOutcome {
    StoreVerdict verdict = StoreVerdict::stored;
    wire::Code code = wire::Code::none;  // why, when refused
    std::optional<uint64_t> last_step;   // for step_behind
    std::string message;                 // "<what>: <why>" when refused
    int64_t id = 0;                      // the row, when stored or duplicate
};

// Owns a connection and its prepared statements.
struct SqliteDeleter {
    void operator()(sqlite3* db) const;
    void operator()(sqlite3_stmt* stmt) const;
};
using SqliteDb = std::unique_ptr<sqlite3, SqliteDeleter>;
using SqliteStmt = std::unique_ptr<sqlite3_stmt, SqliteDeleter>;

struct StoreOptions {
    // FULL: a commit survives power loss (fsync of the WAL per commit); NORMAL: it survives a
    // crash of the writer process only. Group commit makes FULL affordable.
    bool synchronous_full = true;
    int busy_timeout_ms = 5000;
    uint64_t max_points_per_job = 100000;  // per job instance (0: no cap)
};

// A job instance and when its last report arrived.
struct StoredInstance {
    uint32_t job_id = 0;
    int64_t job_submit = 0;
    double last_server_time = 0.0;
    uint64_t rows = 0;
};

class ReportStore {
public:
    // Opens (creating the file and schema if needed) for writing. Errors name the path.
    static Result<std::unique_ptr<ReportStore>> open(const std::string& path,
                                                     const StoreOptions& options = {});

    // Applies a batch in one transaction: one outcome per input, in order; later inputs see the
    // earlier ones (two steps of one job in one batch behave as if sent one after the other).
    // An Error means the transaction was rolled back and nothing of the batch is stored.
    Result<std::vector<StoreOutcome>> submit(const std::vector<ReportInput>& batch);
    Result<StoreOutcome> submit_one(const ReportInput& input);

    // Deletes at most `max_rows` rows of one job instance in one short transaction (the write lock
    // is never held for a whole large job); returns how many went. Call again until 0.
    Result<uint64_t> prune_instance(uint32_t job_id, int64_t job_submit, uint64_t max_rows);

    const std::string& path() const { return path_; }

private:
    ReportStore() = default;
    Result<StoreOutcome> apply(const ReportInput& input);
    Result<uint64_t> points(uint32_t job_id, int64_t job_submit);
    // The instance a report is filed under: its own, or for a requeued job the instance its
    // earlier runs were filed under (see the top of this file).
    Result<int64_t> instance_of(const ReportInput& input);

    std::string path_;
    uint64_t max_points_ = 0;
    SqliteDb db_;
    SqliteStmt begin_, commit_, rollback_, find_step_, last_step_, insert_, count_, prune_, chain_;
    // Rows per job instance: committed counts (filled lazily with one COUNT), and what the open
    // transaction added (merged on COMMIT, dropped on ROLLBACK).
    struct InstanceKey {
        uint32_t job_id;
        int64_t job_submit;
        bool operator==(const InstanceKey& o) const {
            return job_id == o.job_id && job_submit == o.job_submit;
        }
    };
    struct InstanceHash {
        std::size_t operator()(const InstanceKey& k) const {
            return std::hash<uint64_t>()((static_cast<uint64_t>(k.job_id) << 32) ^
                                         static_cast<uint64_t>(k.job_submit));
        }
    };
    std::unordered_map<InstanceKey, uint64_t, InstanceHash> counts_, pending_;
};

class ReportReader {
public:
    // Opens read-only (SQLITE_OPEN_READONLY); the database must exist with our schema. Safe while
    // explschedd writes.
    static Result<std::unique_ptr<ReportReader>> open(const std::string& path, int busy_timeout_ms = 1000);

    // Rows with id > after_id in id order, at most `limit` of them. Callers remember the last id
    // they saw and pass it next time.
    Result<std::vector<StoredReport>> read_since(int64_t after_id, std::size_t limit = 100000);
    // One job instance's curve in step order.
    Result<std::vector<StoredReport>> job_curve(uint32_t job_id, int64_t job_submit);
    // The newest instance of a job id (highest job_submit) that has reports, in step order; for
    // tools that are given only a job id.
    Result<std::vector<StoredReport>> latest_job_curve(uint32_t job_id);
    // Highest id stored (0 when empty).
    Result<int64_t> last_id();
    // Job instances whose last report arrived before `before` (server time), at most `limit`.
    Result<std::vector<StoredInstance>> instances_before(double before, std::size_t limit);

private:
    ReportReader() = default;

    std::string path_;
    SqliteDb db_;
    SqliteStmt since_, curve_, latest_curve_, last_id_;
};

}  // namespace explsched
