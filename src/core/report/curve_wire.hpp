// Reading one's own curve through explschedd. The report database is readable only by
// explschedd's user (SlurmUser) and root, so an ordinary user's `explsched show/why/plot` asks
// explschedd instead, over the same connection type and with the same munge check as a report:
//
//   EXPLSCHED-CURVE/1 job=1234 time=1712345678.25 cred=MUNGE:...:
//
// The credential signs everything before " cred=" (as for reports). The answer is either one
// ordinary refusal line (wire::Reply: forbidden, unknown_job, rate_limited, ...) or a header and
// that many point lines, oldest step first:
//
//   EXPLSCHED-CURVE/1 job=1234 submit=1712300000 points=2
//   POINT id=17 step=10 metric=0.9 throughput=100 time=1712345000.5 server_time=1712345000.6
//   POINT id=18 step=20 metric=0.8 time=1712345010.5 server_time=1712345010.6
//
// The curve is the newest instance of the job id (Slurm reuses ids), sent only to its owner (or
// root and SlurmUser), at most kMaxCurvePoints of its last points. Pure: no sockets, no munge.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"
#include "core/report/report_wire.hpp"

namespace explsched::wire {

inline constexpr std::string_view kCurveTag = "EXPLSCHED-CURVE";
// Most points one answer carries (the newest ones): bounds what one request makes the server hold.
inline constexpr std::size_t kMaxCurvePoints = 20000;

struct CurveRow {
    int64_t id = 0;
    uint64_t step = 0;
    double metric = 0.0;
    std::optional<double> throughput;
    double client_time = 0.0;
    double server_time = 0.0;
};

struct CurveHeader {
    uint32_t job_id = 0;
    int64_t submit = 0;
    std::size_t points = 0;
};

// Whether a request line asks for a curve (rather than carrying a report).
bool is_curve_request(std::string_view line);
// "EXPLSCHED-CURVE/1 job=N time=T" (the signed text).
std::string format_curve_signed_text(uint32_t job_id, double client_time);
// A request line (with '\n').
std::string format_curve_request(uint32_t job_id, double client_time, std::string_view credential);
// Parses a curve request into a ReportRequest with curve = true (body.job_id and client_time set).
Result<ReportRequest> parse_curve_request(std::string_view line, Code* code = nullptr);

// The whole answer: header and point lines, each ending in '\n'.
std::string format_curve_reply(uint32_t job_id, int64_t submit, const std::vector<CurveRow>& rows);
// The header line (without '\n'); an error when the line is something else (e.g. a refusal).
Result<CurveHeader> parse_curve_header(std::string_view line);
Result<CurveRow> parse_curve_point(std::string_view line);

}  // namespace explsched::wire
