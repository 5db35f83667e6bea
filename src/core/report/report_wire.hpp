// The wire format between training jobs and explschedd: one request line per report, one reply
// line per request, in order, over a plain TCP connection. Text, so that a site can debug it with
// `nc`, and versioned in the first token so that a later format can coexist with this one.
//
// Request (version 1), one line of at most kMaxLineBytes bytes including the '\n':
//   EXPLSCHED-REPORT/1 job=1234 step=500 metric=0.4321 throughput=812.5 time=1712345678.25 cred=MUNGE:...:
// Fields are single-space separated key=value tokens; `throughput` (steps/s) is optional; `cred`
// comes last. Everything before " cred=" is the signed text: the munge credential's payload must
// equal it byte for byte, so a credential cannot be replayed onto another body (and munged
// refuses to decode the same credential twice).
//
// Reply:
//   EXPLSCHED-REPLY/1 stored job=1234 step=500
//   EXPLSCHED-REPLY/1 duplicate job=1234 step=500
//   EXPLSCHED-REPLY/1 refused code=step_behind job=1234 step=400 last_step=500 msg=<text>
//   EXPLSCHED-REPLY/1 retry code=busy msg=<text>
// `refused` is permanent for that report; `retry` means the server could not decide now (database
// error, slurmctld unreachable, too busy) and the same report may be sent again with a fresh
// credential. `msg` is free text to the end of the line.
//
// This file is pure: no sockets, no munge. The daemon, the C client library, the CLI and the fuzz
// target all use it; contrib/python/explsched.py implements the same grammar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/result.hpp"

namespace explsched::wire {

inline constexpr int kProtocolVersion = 1;
inline constexpr std::string_view kRequestTag = "EXPLSCHED-REPORT";
inline constexpr std::string_view kReplyTag = "EXPLSCHED-REPLY";
// Longest request or reply line, including its '\n'. A munge credential for a ~120-byte payload is
// ~300 bytes, so a valid request is far below this.
inline constexpr std::size_t kMaxLineBytes = 4096;
// Longest credential accepted (bounds what munge_decode is asked to chew on).
inline constexpr std::size_t kMaxCredentialBytes = 2048;
// Lifetime clients give their credentials (MUNGE_OPT_TTL); explschedd refuses longer-lived ones
// (a credential travels in clear text beside its report).
inline constexpr int kCredentialTtlSeconds = 60;
// Job ids are Slurm's uint32 ids; 0 and Slurm's NO_VAL/INFINITE markers are not jobs.
inline constexpr uint32_t kMaxJobId = 0xfffffffdU;

// What a training job says about itself at one step.
struct ReportBody {
    uint32_t job_id = 0;
    uint64_t step = 0;
    double metric = 0.0;
    std::optional<double> throughput;  // steps per second, when the job measured it
    double client_time = 0.0;          // the client's wall clock, seconds since the epoch
};

struct ReportRequest {
    int version = kProtocolVersion;
    bool curve = false;  // a request to read the job's curve (curve_wire.hpp), not a report
    ReportBody body;
    std::string signed_text;  // the bytes the credential must sign (everything before " cred=")
    std::string credential;
};

// Why a report was not stored. Stable names on the wire (to_string/parse_code).
enum class Code {
    none,             // stored or duplicate
    bad_request,      // the line does not follow the grammar
    line_too_long,    // the line exceeded kMaxLineBytes
    bad_version,      // a protocol version this server does not speak
    invalid_value,    // NaN/inf, negative or absurd numbers (trial.hpp's point rules)
    bad_credential,   // munge refused the credential, or it signs another body
    forbidden,        // the credential's uid neither owns the job nor is root/SlurmUser
    unknown_job,      // slurmctld does not know the job
    step_behind,      // lower than the job's last stored step (last_step says which)
    step_conflict,    // the step is stored with another metric value
    busy,             // retry: too many connections or requests
    unavailable,      // retry: database or slurmctld failed; nothing was stored
    rate_limited,     // retry: the reporting user (or host) exceeded its report rate
    too_many_points,  // the job instance reached the per-job cap of stored points
};
std::string_view to_string(Code code);
std::optional<Code> parse_code(std::string_view text);

enum class ReplyStatus { stored, duplicate, refused, retry };
std::string_view to_string(ReplyStatus status);

struct Reply {
    ReplyStatus status = ReplyStatus::stored;
    Code code = Code::none;
    std::optional<uint32_t> job_id;
    std::optional<uint64_t> step;
    std::optional<uint64_t> last_step;
    std::string message;

    bool accepted() const { return status == ReplyStatus::stored || status == ReplyStatus::duplicate; }
};

// The signed text of a body: "EXPLSCHED-REPORT/1 job=... time=..." (no trailing space). Numbers
// are printed so that they parse back to the same double.
std::string format_signed_text(const ReportBody& body);
// A full request line (with '\n') for a body and the credential that signs format_signed_text().
std::string format_request(const ReportBody& body, std::string_view credential);
// Parses one request line (without its '\n'; a trailing '\r' is tolerated). Errors name the field
// and value; Error.message starts with the reason, e.g. "metric 'nan': not a finite number".
// The error's Code is returned through `code` when not null.
Result<ReportRequest> parse_request(std::string_view line, Code* code = nullptr);

// Checks a body against the trial model's point rules (trial.hpp): step and values finite,
// non-negative where they must be, |value| <= kMaxAbsValue; a non-finite metric is refused here
// (on the wire a NaN is an error, not a divergence signal). Returns Code::invalid_value errors.
Status validate_body(const ReportBody& body);

std::string format_reply(const Reply& reply);
Result<Reply> parse_reply(std::string_view line);

// Splits a byte stream into lines of at most max_line bytes (including the '\n') while holding at
// most `capacity` bytes. A longer line is reported once as too_long as soon as it exceeds the
// limit and its remaining bytes are dropped up to the next '\n', so a 1 MB line is never buffered.
class LineFramer {
public:
    enum class Next { line, too_long, need_more };

    explicit LineFramer(std::size_t max_line = kMaxLineBytes, std::size_t capacity = 4 * kMaxLineBytes);

    // Bytes append() can take now.
    std::size_t room() const { return capacity_ - (buffer_.size() - start_); }
    // Precondition: bytes.size() <= room().
    void append(std::string_view bytes);
    // The next complete line (without '\n' or a trailing '\r') into `line`.
    Next next(std::string& line);
    // Whether unconsumed bytes remain (a partial line, or complete lines not yet taken).
    bool has_pending() const { return start_ < buffer_.size(); }

private:
    std::size_t max_line_;
    std::size_t capacity_;
    std::string buffer_;
    std::size_t start_ = 0;    // first unconsumed byte
    std::size_t scanned_ = 0;  // bytes after start_ known to hold no '\n'
    bool discarding_ = false;  // inside an over-long line: drop through the next '\n'
};

// "host:port", "[v6addr]:port" or "v6addr:port" (the last ':' separates the port).
struct HostPort {
    std::string host;
    uint16_t port = 0;
};
Result<HostPort> parse_host_port(std::string_view text);

}  // namespace explsched::wire
