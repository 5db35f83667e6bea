#include "core/report/report_feed.hpp"

#include <limits>
#include <utility>

namespace explsched {

void ReportFeed::say(LogLevel level, const std::string& text) {
    if (log_ != nullptr && log_->enabled(level)) log_->write(level, text);
}

std::vector<StoredReport> ReportFeed::poll(const std::string& path) {
    if (path != path_) {
        reader_.reset();
        cursor_ = 0;
        path_ = path;
    }
    if (!reader_) {
        auto r = ReportReader::open(path);
        if (!r) {
            if (!warned_) say(LogLevel::verbose, "report store not readable yet: " + r.error().message);
            warned_ = true;
            return {};
        }
        reader_ = std::move(r).value();
        warned_ = false;
    }
    auto rows = reader_->read_since(cursor_);
    if (!rows) {
        say(LogLevel::error, "reading reports: " + rows.error().message);
        reader_.reset();
        return {};
    }
    if (!rows->empty()) cursor_ = rows->back().id;
    return std::move(rows).value();
}

CurvePoint curve_point(const StoredReport& r, ReportClock clock, double origin) {
    CurvePoint p;
    p.step = static_cast<double>(r.step);
    p.metric = r.metric;
    p.wall_time = (clock == ReportClock::server ? r.server_time : r.client_time) - origin;
    p.throughput = r.throughput.value_or(std::numeric_limits<double>::quiet_NaN());
    return p;
}

}  // namespace explsched
