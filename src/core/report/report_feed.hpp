// The reports committed since the last poll, for a host that keeps every trial's curve in memory
// (the priority plugin, each re-ranking round). Reads the store explschedd writes, read-only,
// from a cursor it keeps; reopens when the path changes or a read fails. Runs without any of the
// host's locks: it may wait up to the store's busy timeout.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/curve_point.hpp"
#include "core/base/log.hpp"
#include "core/report/report_store.hpp"

namespace explsched {

class ReportFeed {
public:
    // The logger (may be null) must outlive the feed.
    explicit ReportFeed(Logger* log = nullptr) : log_(log) {}

    // Reports committed since the last call (all of them on the first call, or after `path`
    // changed). A store that cannot be opened yet answers nothing (said once, at verbose); a
    // failed read answers nothing and reopens next time.
    std::vector<StoredReport> poll(const std::string& path);

private:
    void say(LogLevel level, const std::string& text);

    Logger* log_;
    std::string path_;
    std::unique_ptr<ReportReader> reader_;
    int64_t cursor_ = 0;
    bool warned_ = false;
};

// Which clock a stored report's time is read on: explschedd's, when it accepted the report (what
// the scheduler trusts: a client cannot pick it), or the client's own.
enum class ReportClock { server, client };

// The curve point a stored report stands for; its wall time on `clock`, minus `origin`.
CurvePoint curve_point(const StoredReport& report, ReportClock clock, double origin = 0.0);

}  // namespace explsched
