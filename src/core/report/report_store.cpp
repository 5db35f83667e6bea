#include "core/report/report_store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace explsched {

void SqliteDeleter::operator()(sqlite3* db) const { sqlite3_close_v2(db); }
void SqliteDeleter::operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS reports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id INTEGER NOT NULL CHECK (job_id > 0),
    job_submit INTEGER NOT NULL DEFAULT 0,
    step INTEGER NOT NULL CHECK (step >= 0),
    metric REAL NOT NULL,
    throughput REAL,
    client_time REAL NOT NULL,
    server_time REAL NOT NULL,
    uid INTEGER NOT NULL,
    UNIQUE (job_id, job_submit, step)
);
)sql";

// Schema 1 keyed rows by job id alone. SQLite cannot change a UNIQUE constraint in place: copy
// into a table of the new shape (ids kept, so readers' cursors stay valid), then swap.
constexpr const char* kMigrate1to2 = R"sql(
CREATE TABLE reports_v2 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id INTEGER NOT NULL CHECK (job_id > 0),
    job_submit INTEGER NOT NULL DEFAULT 0,
    step INTEGER NOT NULL CHECK (step >= 0),
    metric REAL NOT NULL,
    throughput REAL,
    client_time REAL NOT NULL,
    server_time REAL NOT NULL,
    uid INTEGER NOT NULL,
    UNIQUE (job_id, job_submit, step)
);
INSERT INTO reports_v2 (id, job_id, job_submit, step, metric, throughput, client_time, server_time, uid)
    SELECT id, job_id, 0, step, metric, throughput, client_time, server_time, uid FROM reports;
DROP TABLE reports;
ALTER TABLE reports_v2 RENAME TO reports;
UPDATE schema_version SET version = 2;
)sql";

std::string db_error(const std::string& path, sqlite3* db, const std::string& what) {
    return "report database " + path + ": " + what + ": " +
           (db != nullptr ? sqlite3_errmsg(db) : "out of memory");
}

Status exec(const std::string& path, sqlite3* db, const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err != nullptr ? err : sqlite3_errmsg(db);
        sqlite3_free(err);
        return make_error("report database " + path + ": " + msg + " (in: " + std::string(sql).substr(0, 60) +
                          ")");
    }
    return {};
}

Result<SqliteStmt> prepare(const std::string& path, sqlite3* db, const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK)
        return make_error(db_error(path, db, std::string("cannot prepare '") + sql + "'"));
    return SqliteStmt(stmt);
}

// Runs a statement that returns no rows and resets it.
Status step_done(const std::string& path, sqlite3* db, sqlite3_stmt* stmt, const char* what) {
    const int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    if (rc != SQLITE_DONE) return make_error(db_error(path, db, what));
    return {};
}

Result<SqliteDb> open_db(const std::string& path, int flags, int busy_timeout_ms) {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    SqliteDb db(raw);
    if (rc != SQLITE_OK) return make_error(db_error(path, raw, "cannot open"));
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, busy_timeout_ms);
    return db;
}

// Reads schema_version; 0 when the table is absent or empty.
Result<int> schema_version(const std::string& path, sqlite3* db) {
    // A statement naming a missing table does not even prepare: look the table up first.
    auto exists =
        prepare(path, db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
    if (!exists) return exists.error();
    const int rc = sqlite3_step(exists->get());
    if (rc == SQLITE_DONE) return 0;
    if (rc != SQLITE_ROW) return make_error(db_error(path, db, "cannot read the schema"));
    auto stmt = prepare(path, db, "SELECT COALESCE(MAX(version), 0) FROM schema_version");
    if (!stmt) return stmt.error();
    if (sqlite3_step(stmt->get()) == SQLITE_ROW) return sqlite3_column_int(stmt->get(), 0);
    return make_error(db_error(path, db, "cannot read the schema version"));
}

StoredReport read_row(sqlite3_stmt* stmt) {
    StoredReport r;
    r.id = sqlite3_column_int64(stmt, 0);
    r.job_id = static_cast<uint32_t>(sqlite3_column_int64(stmt, 1));
    r.job_submit = sqlite3_column_int64(stmt, 2);
    r.step = static_cast<uint64_t>(sqlite3_column_int64(stmt, 3));
    r.metric = sqlite3_column_double(stmt, 4);
    if (sqlite3_column_type(stmt, 5) != SQLITE_NULL) r.throughput = sqlite3_column_double(stmt, 5);
    r.client_time = sqlite3_column_double(stmt, 6);
    r.server_time = sqlite3_column_double(stmt, 7);
    r.uid = static_cast<uint32_t>(sqlite3_column_int64(stmt, 8));
    return r;
}

constexpr const char* kRowColumns =
    "id, job_id, job_submit, step, metric, throughput, client_time, server_time, uid";

// Shortest text that reads back as the same double, as on the wire.
std::string format_metric(double v) {
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
}

std::string mode_text(mode_t mode) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
    return buf;
}

// The checks a file the writer trusts must pass: a regular file (not a link), ours, and writable
// by no one else. fd: open on it.
Status check_owned(const std::string& path, int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0)
        return make_error("report database " + path + ": fstat: " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return make_error("report database " + path + ": not a regular file");
    if (st.st_uid != geteuid())
        return make_error(
            "report database " + path + " is owned by uid " + std::to_string(st.st_uid) +
            ", not by explschedd's uid " + std::to_string(geteuid()) +
            ": refusing to use it (run explschedd as the file's owner, SlurmUser, or chown it)");
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return make_error("report database " + path + " has mode " + mode_text(st.st_mode) +
                          ": writable by group or others, so anyone could have altered it; refusing to use "
                          "it (check its contents, then chmod 0600)");
    if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) != 0)
        return make_error("report database " + path + ": chmod 0600: " + std::strerror(errno));
    return {};
}

// Creates the database file (mode 0600) or checks the existing one, and its -wal/-shm, before
// SQLite opens them: SQLite creates files with the default mode (0644 less the umask) and gives
// -wal/-shm the database file's mode.
Status secure_database_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return make_error("report database " + path + ": cannot open: " + std::strerror(errno) +
                          (errno == ELOOP ? " (a symbolic link: refused)" : ""));
    Status st = check_owned(path, fd);
    ::close(fd);
    if (!st) return st;
    for (const char* suffix : {"-wal", "-shm"}) {
        const std::string side = path + suffix;
        const int sfd = ::open(side.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (sfd < 0) {
            if (errno == ENOENT) continue;
            return make_error("report database " + side + ": cannot open: " + std::strerror(errno));
        }
        Status s2 = check_owned(side, sfd);
        ::close(sfd);
        if (!s2) return s2;
    }
    return {};
}

}  // namespace

Result<std::unique_ptr<ReportStore>> ReportStore::open(const std::string& path, const StoreOptions& options) {
    if (auto s = secure_database_file(path); !s) return s.error();
    auto db = open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, options.busy_timeout_ms);
    if (!db) return db.error();
    std::unique_ptr<ReportStore> store(new ReportStore());
    store->path_ = path;
    store->max_points_ = options.max_points_per_job;
    store->db_ = std::move(db).value();
    sqlite3* raw = store->db_.get();

    // journal_mode answers with the mode in force: a database that cannot switch to WAL (e.g. on
    // a file system without shared memory) must not silently run in rollback mode.
    {
        auto stmt = prepare(path, raw, "PRAGMA journal_mode=WAL");
        if (!stmt) return stmt.error();
        if (sqlite3_step(stmt->get()) != SQLITE_ROW)
            return make_error(db_error(path, raw, "cannot enable WAL mode"));
        const auto* mode = reinterpret_cast<const char*>(sqlite3_column_text(stmt->get(), 0));
        if (mode == nullptr || std::string(mode) != "wal")
            return make_error("report database " + path + ": journal mode is '" + (mode ? mode : "?") +
                              "', not 'wal' (is the file system local?)");
    }
    if (auto s = exec(path, raw,
                      options.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
        !s)
        return s.error();

    if (auto s = exec(path, raw, "BEGIN IMMEDIATE"); !s) return s.error();
    auto version = schema_version(path, raw);
    Status st;
    if (!version) {
        st = version.error();
    } else if (*version > kReportSchemaVersion) {
        st = make_error("report database " + path + ": schema version " + std::to_string(*version) +
                        " is newer than this program's (" + std::to_string(kReportSchemaVersion) + ")");
    } else if (*version == 0) {
        st = exec(path, raw, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
        if (st) st = exec(path, raw, kSchema);
        if (st) st = exec(path, raw, "INSERT INTO schema_version (version) VALUES (2)");
    } else if (*version == 1) {
        st = exec(path, raw, kMigrate1to2);
    }
    if (!st) {
        (void)exec(path, raw, "ROLLBACK");
        return st.error();
    }
    if (auto s = exec(path, raw, "COMMIT"); !s) return s.error();

    struct {
        SqliteStmt* slot;
        const char* sql;
    } stmts[] = {
        {&store->begin_, "BEGIN IMMEDIATE"},
        {&store->commit_, "COMMIT"},
        {&store->rollback_, "ROLLBACK"},
        {&store->find_step_,
         "SELECT id, metric FROM reports WHERE job_id = ?1 AND job_submit = ?3 AND step = ?2"},
        {&store->last_step_,
         "SELECT step FROM reports WHERE job_id = ?1 AND job_submit = ?2 ORDER BY step DESC LIMIT 1"},
        {&store->chain_,
         "SELECT MAX(job_submit) FROM reports WHERE job_id = ?1 AND uid = ?2 AND job_submit > 0 AND "
         "job_submit < ?3"},
        {&store->insert_,
         "INSERT INTO reports (job_id, step, metric, throughput, client_time, server_time, uid, job_submit) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"},
        {&store->count_, "SELECT COUNT(*) FROM reports WHERE job_id = ?1 AND job_submit = ?2"},
        {&store->prune_,
         "DELETE FROM reports WHERE id IN (SELECT id FROM reports WHERE job_id = ?1 AND job_submit = ?2 "
         "LIMIT ?3)"},
    };
    for (auto& s : stmts) {
        auto p = prepare(path, raw, s.sql);
        if (!p) return p.error();
        *s.slot = std::move(p).value();
    }
    return store;
}

Result<StoreOutcome> ReportStore::apply(const ReportInput& input) {
    sqlite3* db = db_.get();
    const wire::ReportBody& b = input.body;
    StoreOutcome out;
    if (auto s = wire::validate_body(b); !s) {
        out.verdict = StoreVerdict::refused;
        out.code = wire::Code::invalid_value;
        out.message = s.error().message;
        return out;
    }
    if (b.job_id == 0 || b.job_id > wire::kMaxJobId) {
        out.verdict = StoreVerdict::refused;
        out.code = wire::Code::invalid_value;
        out.message = "report field 'job': " + std::to_string(b.job_id) + " is not a valid Slurm job id";
        return out;
    }
    const auto job = static_cast<sqlite3_int64>(b.job_id);
    const auto step = static_cast<sqlite3_int64>(b.step);
    auto chained = instance_of(input);
    if (!chained) return chained.error();
    const int64_t instance = *chained;

    // The same step again: idempotent when the value matches, a conflict otherwise.
    sqlite3_stmt* find = find_step_.get();
    sqlite3_bind_int64(find, 1, job);
    sqlite3_bind_int64(find, 2, step);
    sqlite3_bind_int64(find, 3, instance);
    int rc = sqlite3_step(find);
    if (rc == SQLITE_ROW) {
        out.id = sqlite3_column_int64(find, 0);
        const double stored = sqlite3_column_double(find, 1);
        sqlite3_reset(find);
        if (stored == b.metric) {
            out.verdict = StoreVerdict::duplicate;
        } else {
            out.verdict = StoreVerdict::refused;
            out.code = wire::Code::step_conflict;
            out.id = 0;
            out.message = "job " + std::to_string(b.job_id) + " step " + std::to_string(b.step) +
                          ": metric " + format_metric(b.metric) + " differs from the stored value " +
                          format_metric(stored);
        }
        return out;
    }
    sqlite3_reset(find);
    if (rc != SQLITE_DONE) return make_error(db_error(path_, db, "cannot look up a step"));

    sqlite3_stmt* last = last_step_.get();
    sqlite3_bind_int64(last, 1, job);
    sqlite3_bind_int64(last, 2, instance);
    rc = sqlite3_step(last);
    if (rc == SQLITE_ROW) {
        const auto last_step = static_cast<uint64_t>(sqlite3_column_int64(last, 0));
        sqlite3_reset(last);
        if (b.step < last_step) {
            out.verdict = StoreVerdict::refused;
            out.code = wire::Code::step_behind;
            out.last_step = last_step;
            out.message = "job " + std::to_string(b.job_id) + " step " + std::to_string(b.step) +
                          " is lower than its last stored step " + std::to_string(last_step) +
                          " (steps must not decrease; resume reporting after step " +
                          std::to_string(last_step) + ")";
            return out;
        }
    } else {
        sqlite3_reset(last);
        if (rc != SQLITE_DONE) return make_error(db_error(path_, db, "cannot look up the last step"));
    }

    if (max_points_ > 0) {
        auto n = points(b.job_id, instance);
        if (!n) return n.error();
        if (*n >= max_points_) {
            out.verdict = StoreVerdict::refused;
            out.code = wire::Code::too_many_points;
            out.message =
                "job " + std::to_string(b.job_id) + " has " + std::to_string(*n) +
                " stored points, the cap per job (max_points_per_job=" + std::to_string(max_points_) +
                "); report less often";
            return out;
        }
    }

    sqlite3_stmt* ins = insert_.get();
    sqlite3_bind_int64(ins, 1, job);
    sqlite3_bind_int64(ins, 2, step);
    sqlite3_bind_double(ins, 3, b.metric);
    if (b.throughput)
        sqlite3_bind_double(ins, 4, *b.throughput);
    else
        sqlite3_bind_null(ins, 4);
    sqlite3_bind_double(ins, 5, b.client_time);
    sqlite3_bind_double(ins, 6, input.server_time);
    sqlite3_bind_int64(ins, 7, static_cast<sqlite3_int64>(input.uid));
    sqlite3_bind_int64(ins, 8, instance);
    if (auto s = step_done(path_, db, ins, "cannot insert a report"); !s) return s.error();
    out.verdict = StoreVerdict::stored;
    out.id = sqlite3_last_insert_rowid(db);
    ++pending_[InstanceKey{b.job_id, instance}];
    return out;
}

Result<int64_t> ReportStore::instance_of(const ReportInput& input) {
    if (input.job_restarts == 0 || input.job_submit <= 0) return input.job_submit;
    sqlite3_stmt* stmt = chain_.get();
    sqlite3_bind_int64(stmt, 1, static_cast<sqlite3_int64>(input.body.job_id));
    sqlite3_bind_int64(stmt, 2, static_cast<sqlite3_int64>(input.uid));
    sqlite3_bind_int64(stmt, 3, input.job_submit);
    const int rc = sqlite3_step(stmt);
    int64_t instance = input.job_submit;
    if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 0) != SQLITE_NULL)
        instance = sqlite3_column_int64(stmt, 0);
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    if (rc != SQLITE_ROW)
        return make_error(db_error(path_, db_.get(), "cannot look up a requeued job's instance"));
    return instance;
}

Result<uint64_t> ReportStore::points(uint32_t job_id, int64_t job_submit) {
    const InstanceKey key{job_id, job_submit};
    uint64_t added = 0;
    if (auto p = pending_.find(key); p != pending_.end()) added = p->second;
    if (auto c = counts_.find(key); c != counts_.end()) return c->second + added;
    sqlite3_stmt* stmt = count_.get();
    sqlite3_bind_int64(stmt, 1, static_cast<sqlite3_int64>(job_id));
    sqlite3_bind_int64(stmt, 2, job_submit);
    const int rc = sqlite3_step(stmt);
    const uint64_t n = rc == SQLITE_ROW ? static_cast<uint64_t>(sqlite3_column_int64(stmt, 0)) : 0;
    sqlite3_reset(stmt);
    if (rc != SQLITE_ROW) return make_error(db_error(path_, db_.get(), "cannot count a job's reports"));
    // Inside the open transaction the COUNT already sees its own inserts.
    const uint64_t committed = n >= added ? n - added : 0;
    if (counts_.size() >= 200000) counts_.clear();  // bounded; recounted on demand
    counts_[key] = committed;
    return n;
}

Result<uint64_t> ReportStore::prune_instance(uint32_t job_id, int64_t job_submit, uint64_t max_rows) {
    sqlite3* db = db_.get();
    if (auto s = step_done(path_, db, begin_.get(), "cannot begin a transaction"); !s) return s.error();
    sqlite3_stmt* stmt = prune_.get();
    sqlite3_bind_int64(stmt, 1, static_cast<sqlite3_int64>(job_id));
    sqlite3_bind_int64(stmt, 2, job_submit);
    sqlite3_bind_int64(stmt, 3, static_cast<sqlite3_int64>(std::min<uint64_t>(max_rows, INT64_MAX)));
    if (auto s = step_done(path_, db, stmt, "cannot delete reports"); !s) {
        (void)step_done(path_, db, rollback_.get(), "cannot roll back");
        return s.error();
    }
    const auto deleted = static_cast<uint64_t>(sqlite3_changes(db));
    if (auto s = step_done(path_, db, commit_.get(), "cannot commit"); !s) {
        if (sqlite3_get_autocommit(db) == 0) (void)step_done(path_, db, rollback_.get(), "cannot roll back");
        return s.error();
    }
    counts_.erase(InstanceKey{job_id, job_submit});
    return deleted;
}

Result<std::vector<StoreOutcome>> ReportStore::submit(const std::vector<ReportInput>& batch) {
    std::vector<StoreOutcome> outcomes;
    if (batch.empty()) return outcomes;
    outcomes.reserve(batch.size());
    sqlite3* db = db_.get();
    if (auto s = step_done(path_, db, begin_.get(), "cannot begin a transaction"); !s) return s.error();
    pending_.clear();
    for (const ReportInput& input : batch) {
        auto r = apply(input);
        if (!r) {
            (void)step_done(path_, db, rollback_.get(), "cannot roll back");
            pending_.clear();
            return r.error();
        }
        outcomes.push_back(std::move(r).value());
    }
    if (auto s = step_done(path_, db, commit_.get(), "cannot commit"); !s) {
        // A failed COMMIT may leave the transaction open (SQLITE_BUSY); end it so the next batch
        // starts clean. Nothing of this batch is stored.
        if (sqlite3_get_autocommit(db) == 0) (void)step_done(path_, db, rollback_.get(), "cannot roll back");
        pending_.clear();
        return s.error();
    }
    for (const auto& [key, added] : pending_)
        if (auto c = counts_.find(key); c != counts_.end()) c->second += added;
    pending_.clear();
    return outcomes;
}

Result<StoreOutcome> ReportStore::submit_one(const ReportInput& input) {
    auto r = submit(std::vector<ReportInput>{input});
    if (!r) return r.error();
    return std::move(r->front());
}

Result<std::unique_ptr<ReportReader>> ReportReader::open(const std::string& path, int busy_timeout_ms) {
    // SQLite says only "unable to open database file": say why, and what to do.
    if (::access(path.c_str(), R_OK) != 0 && errno == EACCES)
        return make_error("report database " + path +
                          ": permission denied: it holds every user's curves and only explschedd's user "
                          "(SlurmUser) and root may read it; run this as one of them");
    auto db = open_db(path, SQLITE_OPEN_READONLY, busy_timeout_ms);
    if (!db) return db.error();
    std::unique_ptr<ReportReader> reader(new ReportReader());
    reader->path_ = path;
    reader->db_ = std::move(db).value();
    sqlite3* raw = reader->db_.get();
    auto version = schema_version(path, raw);
    if (!version) return version.error();
    if (*version == 0)
        return make_error("report database " + path + ": no schema (has explschedd created it?)");
    if (*version > kReportSchemaVersion)
        return make_error("report database " + path + ": schema version " + std::to_string(*version) +
                          " is newer than this program's (" + std::to_string(kReportSchemaVersion) + ")");
    if (*version < kReportSchemaVersion)
        return make_error("report database " + path + ": schema version " + std::to_string(*version) +
                          " is older than this program's (" + std::to_string(kReportSchemaVersion) +
                          "); start explschedd once to upgrade it");
    const std::string since =
        std::string("SELECT ") + kRowColumns + " FROM reports WHERE id > ?1 ORDER BY id LIMIT ?2";
    const std::string curve = std::string("SELECT ") + kRowColumns +
                              " FROM reports WHERE job_id = ?1 AND job_submit = ?2 ORDER BY step";
    const std::string latest = std::string("SELECT ") + kRowColumns +
                               " FROM reports WHERE job_id = ?1 AND job_submit = (SELECT MAX(job_submit) "
                               "FROM reports WHERE job_id = ?1) ORDER BY step";
    auto s1 = prepare(path, raw, since.c_str());
    if (!s1) return s1.error();
    auto s2 = prepare(path, raw, curve.c_str());
    if (!s2) return s2.error();
    auto s4 = prepare(path, raw, latest.c_str());
    if (!s4) return s4.error();
    auto s3 = prepare(path, raw, "SELECT COALESCE(MAX(id), 0) FROM reports");
    if (!s3) return s3.error();
    reader->since_ = std::move(s1).value();
    reader->curve_ = std::move(s2).value();
    reader->latest_curve_ = std::move(s4).value();
    reader->last_id_ = std::move(s3).value();
    return reader;
}

namespace {

Result<std::vector<StoredReport>> collect(const std::string& path, sqlite3* db, sqlite3_stmt* stmt) {
    std::vector<StoredReport> rows;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) rows.push_back(read_row(stmt));
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    if (rc != SQLITE_DONE) return make_error(db_error(path, db, "cannot read reports"));
    return rows;
}

}  // namespace

Result<std::vector<StoredReport>> ReportReader::read_since(int64_t after_id, std::size_t limit) {
    sqlite3_bind_int64(since_.get(), 1, after_id);
    sqlite3_bind_int64(since_.get(), 2, static_cast<sqlite3_int64>(std::min<std::size_t>(limit, INT64_MAX)));
    return collect(path_, db_.get(), since_.get());
}

Result<std::vector<StoredReport>> ReportReader::job_curve(uint32_t job_id, int64_t job_submit) {
    sqlite3_bind_int64(curve_.get(), 1, static_cast<sqlite3_int64>(job_id));
    sqlite3_bind_int64(curve_.get(), 2, job_submit);
    return collect(path_, db_.get(), curve_.get());
}

Result<std::vector<StoredReport>> ReportReader::latest_job_curve(uint32_t job_id) {
    sqlite3_bind_int64(latest_curve_.get(), 1, static_cast<sqlite3_int64>(job_id));
    return collect(path_, db_.get(), latest_curve_.get());
}

Result<std::vector<StoredInstance>> ReportReader::instances_before(double before, std::size_t limit) {
    auto stmt = prepare(path_, db_.get(),
                        "SELECT job_id, job_submit, MAX(server_time), COUNT(*) FROM reports GROUP BY job_id, "
                        "job_submit HAVING MAX(server_time) < ?1 LIMIT ?2");
    if (!stmt) return stmt.error();
    sqlite3_bind_double(stmt->get(), 1, before);
    sqlite3_bind_int64(stmt->get(), 2, static_cast<sqlite3_int64>(std::min<std::size_t>(limit, INT64_MAX)));
    std::vector<StoredInstance> out;
    int rc;
    while ((rc = sqlite3_step(stmt->get())) == SQLITE_ROW) {
        StoredInstance i;
        i.job_id = static_cast<uint32_t>(sqlite3_column_int64(stmt->get(), 0));
        i.job_submit = sqlite3_column_int64(stmt->get(), 1);
        i.last_server_time = sqlite3_column_double(stmt->get(), 2);
        i.rows = static_cast<uint64_t>(sqlite3_column_int64(stmt->get(), 3));
        out.push_back(i);
    }
    if (rc != SQLITE_DONE) return make_error(db_error(path_, db_.get(), "cannot list job instances"));
    return out;
}

Result<int64_t> ReportReader::last_id() {
    sqlite3_stmt* stmt = last_id_.get();
    const int rc = sqlite3_step(stmt);
    int64_t id = 0;
    if (rc == SQLITE_ROW) id = sqlite3_column_int64(stmt, 0);
    sqlite3_reset(stmt);
    if (rc != SQLITE_ROW) return make_error(db_error(path_, db_.get(), "cannot read the last id"));
    return id;
}

}  // namespace explsched
