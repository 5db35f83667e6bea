// The report store as priority/explsched reads it: in bounded chunks from a cursor, knowing when
// it has caught up. At every (re)open the store's last row id is the target; until the cursor
// reaches it the plugin has only part of the curves and must not cancel or hold anything (a trial
// whose best points are not read yet looks worse than it is). A store whose last id is below the
// cursor was replaced (a new database): everything read so far is void and reading starts over.
// No Slurm header: unit-tested on its own (testsuite/unit/test_plugins_report_catchup.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/log.hpp"
#include "core/report/report_store.hpp"

namespace explsched {

class ReportCatchUp {
public:
    struct Batch {
        std::vector<StoredReport> rows;
        bool reset = false;  // the store was replaced: drop every curve read before these rows
    };

    explicit ReportCatchUp(Logger* log = nullptr) : log_(log) {}

    // At most `chunk` rows committed after the cursor. Nothing while the store cannot be read
    // (then caught_up() stays false until it can: an unreadable store is not an empty one).
    Batch poll(const std::string& path, std::size_t chunk) {
        Batch out;
        if (path != path_) {
            reader_.reset();
            path_ = path;
            out.reset = cursor_ != 0;
            cursor_ = 0;
        }
        if (!reader_) {
            if (!open(out)) return out;
        }
        auto rows = reader_->read_since(cursor_, chunk);
        if (!rows) {
            say(LogLevel::error, "reading reports: " + rows.error().message);
            reader_.reset();
            return out;
        }
        if (!rows->empty()) cursor_ = rows->back().id;
        out.rows = std::move(rows).value();
        return out;
    }

    // Every row committed before the last (re)open has been read.
    bool caught_up() const { return reader_ != nullptr && cursor_ >= target_; }
    int64_t cursor() const { return cursor_; }
    int64_t target() const { return target_; }

private:
    bool open(Batch& out) {
        auto r = ReportReader::open(path_);
        if (!r) {
            if (!warned_) say(LogLevel::verbose, "report store not readable yet: " + r.error().message);
            warned_ = true;
            return false;
        }
        auto last = (*r)->last_id();
        if (!last) {
            say(LogLevel::error, "reading reports: " + last.error().message);
            return false;
        }
        if (*last < cursor_) {
            say(LogLevel::info, "report store " + path_ + " was replaced (last id " + std::to_string(*last) +
                                    " < " + std::to_string(cursor_) + "): reading it from the start");
            cursor_ = 0;
            out.reset = true;
        }
        target_ = *last;
        reader_ = std::move(r).value();
        warned_ = false;
        return true;
    }
    void say(LogLevel level, const std::string& text) {
        if (log_ != nullptr && log_->enabled(level)) log_->write(level, text);
    }

    Logger* log_;
    std::string path_;
    std::unique_ptr<ReportReader> reader_;
    int64_t cursor_ = 0;
    int64_t target_ = 0;
    bool warned_ = false;
};

}  // namespace explsched
