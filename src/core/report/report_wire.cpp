// Over 400 lines: the report wire format, both directions (requests, replies, line framing), is one concept.
#include "core/report/report_wire.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/base/curve_point.hpp"
#include "core/base/strings.hpp"

namespace explsched::wire {

namespace {

struct CodeName {
    Code code;
    std::string_view name;
};
constexpr CodeName kCodeNames[] = {
    {Code::none, "none"},
    {Code::bad_request, "bad_request"},
    {Code::line_too_long, "line_too_long"},
    {Code::bad_version, "bad_version"},
    {Code::invalid_value, "invalid_value"},
    {Code::bad_credential, "bad_credential"},
    {Code::forbidden, "forbidden"},
    {Code::unknown_job, "unknown_job"},
    {Code::step_behind, "step_behind"},
    {Code::step_conflict, "step_conflict"},
    {Code::busy, "busy"},
    {Code::unavailable, "unavailable"},
    {Code::rate_limited, "rate_limited"},
    {Code::too_many_points, "too_many_points"},
};

std::string quote(std::string_view text) {
    // Bound what is echoed back so an error about a huge token stays a short line.
    constexpr std::size_t kMaxEcho = 64;
    std::string out = "'";
    for (char c : text.substr(0, kMaxEcho)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    if (text.size() > kMaxEcho) out += "...";
    out += "'";
    return out;
}

void append_double(std::string& out, double value) {
    // Shortest text that parses back to the same double: the credential signs this text, and the
    // server stores exactly the value the client meant.
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, res.ptr);
}

Error field_error(Code* code, Code what, std::string_view field, std::string_view value,
                  std::string_view why) {
    if (code != nullptr) *code = what;
    return make_error("report field '" + std::string(field) + "': " + quote(value) + " " + std::string(why));
}

Error request_error(Code* code, Code what, std::string message) {
    if (code != nullptr) *code = what;
    return make_error(std::move(message));
}

// A decimal number that may be NaN/inf on the client side: tell "not finite" from "not a number".
Result<double> parse_number(std::string_view field, std::string_view text, Code* code) {
    if (auto d = parse_finite_double(text)) return *d;
    if (!text.empty() && text.size() <= 64) {
        const std::string copy(text);
        char* end = nullptr;
        const double d = std::strtod(copy.c_str(), &end);
        if (end == copy.c_str() + copy.size() && !std::isfinite(d))
            return field_error(code, Code::invalid_value, field, text, "is not a finite number");
    }
    return field_error(code, Code::bad_request, field, text, "is not a decimal number");
}

bool printable_ascii(std::string_view text) {
    return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// "TAG/N" → N when the tag matches.
Result<int> parse_tag(std::string_view token, std::string_view tag, Code* code) {
    if (token.size() <= tag.size() + 1 || token.substr(0, tag.size()) != tag || token[tag.size()] != '/')
        return request_error(code, Code::bad_request,
                             "line does not start with " + std::string(tag) + "/" +
                                 std::to_string(kProtocolVersion) + " (got " + quote(token) + ")");
    auto v = parse_uint64(token.substr(tag.size() + 1));
    if (!v || *v != static_cast<uint64_t>(kProtocolVersion))
        return request_error(code, Code::bad_version,
                             "protocol version " + quote(token.substr(tag.size() + 1)) +
                                 " is not supported (this side speaks " + std::to_string(kProtocolVersion) +
                                 ")");
    return static_cast<int>(*v);
}

}  // namespace

std::string_view to_string(Code code) {
    for (const auto& c : kCodeNames)
        if (c.code == code) return c.name;
    return "unknown";
}

std::optional<Code> parse_code(std::string_view text) {
    for (const auto& c : kCodeNames)
        if (c.name == text) return c.code;
    return std::nullopt;
}

std::string_view to_string(ReplyStatus status) {
    switch (status) {
        case ReplyStatus::stored:
            return "stored";
        case ReplyStatus::duplicate:
            return "duplicate";
        case ReplyStatus::refused:
            return "refused";
        case ReplyStatus::retry:
            return "retry";
    }
    return "?";
}

std::string format_signed_text(const ReportBody& body) {
    std::string out;
    out.reserve(160);
    out += kRequestTag;
    out += "/" + std::to_string(kProtocolVersion);
    out += " job=" + std::to_string(body.job_id);
    out += " step=" + std::to_string(body.step);
    out += " metric=";
    append_double(out, body.metric);
    if (body.throughput) {
        out += " throughput=";
        append_double(out, *body.throughput);
    }
    out += " time=";
    append_double(out, body.client_time);
    return out;
}

std::string format_request(const ReportBody& body, std::string_view credential) {
    std::string out = format_signed_text(body);
    out += " cred=";
    out += credential;
    out += '\n';
    return out;
}

namespace {

// The request fields that must appear exactly once, seen so far.
struct SeenFields {
    bool job = false, step = false, metric = false, time = false;
};

Status check_line(std::string_view line, Code* code) {
    if (line.size() >= kMaxLineBytes)
        return request_error(code, Code::line_too_long,
                             "line of " + std::to_string(line.size()) + " bytes exceeds the limit of " +
                                 std::to_string(kMaxLineBytes));
    if (!printable_ascii(line))
        return request_error(code, Code::bad_request, "line holds a byte that is not printable ASCII");
    return {};
}

// The credential: everything after " cred=", the last field.
Status parse_credential(std::string_view line, std::size_t cred_at, ReportRequest& req, Code* code) {
    if (cred_at == std::string_view::npos)
        return request_error(code, Code::bad_request, "report has no cred= field (a munge credential)");
    req.credential = std::string(line.substr(cred_at + 6));
    if (req.credential.empty()) return request_error(code, Code::bad_request, "report field 'cred' is empty");
    if (req.credential.size() > kMaxCredentialBytes)
        return request_error(
            code, Code::bad_request,
            "report field 'cred' is longer than " + std::to_string(kMaxCredentialBytes) + " bytes");
    if (req.credential.find(' ') != std::string::npos)
        return request_error(code, Code::bad_request, "report field 'cred' must be the last field");
    return {};
}

Status once(bool& seen, std::string_view key, Code* code) {
    if (seen)
        return request_error(code, Code::bad_request,
                             "report field '" + std::string(key) + "' appears twice");
    seen = true;
    return {};
}

Status parse_job(std::string_view key, std::string_view value, ReportBody& body, Code* code) {
    auto n = parse_uint64(value);
    if (!n) return field_error(code, Code::bad_request, key, value, "is not a job id");
    if (*n == 0 || *n > kMaxJobId)
        return field_error(code, Code::invalid_value, key, value, "is not a valid Slurm job id");
    body.job_id = static_cast<uint32_t>(*n);
    return {};
}

// One key=value token of the signed text.
Status parse_field(std::string_view token, SeenFields& seen, ReportBody& body, Code* code) {
    const auto eq = token.find('=');
    if (token.empty() || eq == std::string_view::npos || eq == 0)
        return request_error(
            code, Code::bad_request,
            "report token " + quote(token) + " is not key=value (single spaces between fields)");
    const std::string_view key = token.substr(0, eq);
    const std::string_view value = token.substr(eq + 1);
    if (key == "job") {
        if (auto s = once(seen.job, key, code); !s) return s;
        return parse_job(key, value, body, code);
    }
    if (key == "step") {
        if (auto s = once(seen.step, key, code); !s) return s;
        auto n = parse_uint64(value);
        if (!n) return field_error(code, Code::bad_request, key, value, "is not a non-negative integer");
        body.step = *n;
        return {};
    }
    if (key == "metric") {
        if (auto s = once(seen.metric, key, code); !s) return s;
        auto d = parse_number(key, value, code);
        if (!d) return d.error();
        body.metric = *d;
        return {};
    }
    if (key == "time") {
        if (auto s = once(seen.time, key, code); !s) return s;
        auto d = parse_number(key, value, code);
        if (!d) return d.error();
        body.client_time = *d;
        return {};
    }
    if (key == "throughput") {
        if (body.throughput)
            return request_error(code, Code::bad_request, "report field 'throughput' appears twice");
        auto d = parse_number(key, value, code);
        if (!d) return d.error();
        body.throughput = *d;
        return {};
    }
    return request_error(
        code, Code::bad_request,
        "unknown report field " + quote(key) + " (known: job, step, metric, throughput, time, cred)");
}

const char* missing_field(const SeenFields& seen) {
    return !seen.job ? "job" : !seen.step ? "step" : !seen.metric ? "metric" : !seen.time ? "time" : nullptr;
}

}  // namespace

Result<ReportRequest> parse_request(std::string_view line, Code* code) {
    if (code != nullptr) *code = Code::none;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (auto s = check_line(line, code); !s) return s.error();
    const auto cred_at = line.find(" cred=");
    const std::string_view signed_text = line.substr(0, cred_at);
    ReportRequest req;

    const auto tokens = split(signed_text, " ");
    auto version = parse_tag(tokens.front(), kRequestTag, code);
    if (!version) return version.error();
    req.version = *version;
    if (auto s = parse_credential(line, cred_at, req, code); !s) return s.error();

    SeenFields seen;
    for (std::size_t i = 1; i < tokens.size(); ++i) {
        if (auto s = parse_field(tokens[i], seen, req.body, code); !s) return s.error();
    }
    if (const char* missing = missing_field(seen); missing != nullptr)
        return request_error(code, Code::bad_request,
                             std::string("report lacks the field '") + missing + "'");
    if (auto s = validate_body(req.body); !s) {
        if (code != nullptr) *code = Code::invalid_value;
        return s.error();
    }
    req.signed_text = std::string(signed_text);
    return req;
}

Status validate_body(const ReportBody& body) {
    if (!std::isfinite(body.metric))
        return make_error("report field 'metric': " + std::to_string(body.metric) +
                          " is not a finite number");
    // One set of rules for curve points: the trial model's. A lone point checks the values.
    CurvePoint point;
    point.step = static_cast<double>(body.step);
    point.metric = body.metric;
    point.wall_time = body.client_time;
    point.throughput = body.throughput.value_or(std::numeric_limits<double>::quiet_NaN());
    if (body.throughput && !std::isfinite(*body.throughput))
        return make_error("report field 'throughput': " + std::to_string(*body.throughput) +
                          " is not a finite number");
    if (!std::isfinite(body.client_time))
        return make_error("report field 'time': " + std::to_string(body.client_time) +
                          " is not a finite number");
    if (body.step > static_cast<uint64_t>(kMaxAbsValue))
        return make_error("report field 'step': " + std::to_string(body.step) +
                          " is absurdly large (limit 1e15)");
    if (auto s = check_point(0, point); !s) {
        // "curve point 0: wall_time -1: negative" → "report field 'time': -1: negative".
        std::string why = s.error().message;
        const std::string_view prefix = "curve point 0: ";
        if (why.compare(0, prefix.size(), prefix) == 0) why.erase(0, prefix.size());
        const auto space = why.find(' ');
        std::string field = why.substr(0, space);
        if (field == "wall_time") field = "time";
        return make_error("report field '" + field +
                          "': " + (space == std::string::npos ? why : why.substr(space + 1)));
    }
    return {};
}

std::string format_reply(const Reply& reply) {
    std::string out;
    out += kReplyTag;
    out += "/" + std::to_string(kProtocolVersion) + " ";
    out += to_string(reply.status);
    if (reply.code != Code::none) {
        out += " code=";
        out += to_string(reply.code);
    }
    if (reply.job_id) out += " job=" + std::to_string(*reply.job_id);
    if (reply.step) out += " step=" + std::to_string(*reply.step);
    if (reply.last_step) out += " last_step=" + std::to_string(*reply.last_step);
    if (!reply.message.empty()) {
        out += " msg=";
        const std::size_t room = kMaxLineBytes - 1 > out.size() ? kMaxLineBytes - 1 - out.size() : 0;
        for (char c : std::string_view(reply.message).substr(0, room))
            out += (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    out += '\n';
    return out;
}

Result<Reply> parse_reply(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() >= kMaxLineBytes)
        return make_error("reply line exceeds " + std::to_string(kMaxLineBytes) + " bytes");
    if (!printable_ascii(line)) return make_error("reply holds a byte that is not printable ASCII");
    Reply reply;
    const auto msg_at = line.find(" msg=");
    if (msg_at != std::string_view::npos) {
        reply.message = std::string(line.substr(msg_at + 5));
        line = line.substr(0, msg_at);
    }
    const auto tokens = split(line, " ");
    if (auto v = parse_tag(tokens.front(), kReplyTag, nullptr); !v)
        return make_error("reply: " + v.error().message);
    if (tokens.size() < 2) return make_error("reply lacks a status");
    const std::string_view status = tokens[1];
    if (status == "stored")
        reply.status = ReplyStatus::stored;
    else if (status == "duplicate")
        reply.status = ReplyStatus::duplicate;
    else if (status == "refused")
        reply.status = ReplyStatus::refused;
    else if (status == "retry")
        reply.status = ReplyStatus::retry;
    else
        return make_error("reply status " + quote(status) + " is not stored, duplicate, refused or retry");
    for (std::size_t i = 2; i < tokens.size(); ++i) {
        const std::string_view token = tokens[i];
        const auto eq = token.find('=');
        if (eq == std::string_view::npos)
            return make_error("reply token " + quote(token) + " is not key=value");
        const std::string_view key = token.substr(0, eq);
        const std::string_view value = token.substr(eq + 1);
        if (key == "code") {
            auto c = parse_code(value);
            if (!c) return make_error("reply code " + quote(value) + " is unknown");
            reply.code = *c;
        } else if (key == "job") {
            auto n = parse_uint64(value);
            if (!n || *n > kMaxJobId) return make_error("reply job " + quote(value) + " is not a job id");
            reply.job_id = static_cast<uint32_t>(*n);
        } else if (key == "step" || key == "last_step") {
            auto n = parse_uint64(value);
            if (!n) return make_error("reply " + std::string(key) + " " + quote(value) + " is not a step");
            (key == "step" ? reply.step : reply.last_step) = *n;
        } else {
            // Later versions may add fields; a client ignores what it does not know.
        }
    }
    if ((reply.status == ReplyStatus::refused || reply.status == ReplyStatus::retry) &&
        reply.code == Code::none)
        return make_error("reply status '" + std::string(status) + "' without a code");
    return reply;
}

LineFramer::LineFramer(std::size_t max_line, std::size_t capacity)
    : max_line_(max_line), capacity_(std::max(capacity, max_line + 1)) {
    buffer_.reserve(capacity_);
}

void LineFramer::append(std::string_view bytes) {
    // Compact lazily: consumed bytes are dropped only when the tail needs the space.
    if (start_ > 0 && buffer_.size() + bytes.size() > capacity_) {
        buffer_.erase(0, start_);
        start_ = 0;
    }
    buffer_.append(bytes.data(), std::min(bytes.size(), room()));
}

LineFramer::Next LineFramer::next(std::string& line) {
    for (;;) {
        const std::size_t pending = buffer_.size() - start_;
        const char* base = buffer_.data() + start_;
        const void* nl = std::memchr(base + scanned_, '\n', pending - scanned_);
        if (nl == nullptr) {
            scanned_ = pending;
            if (discarding_) {
                buffer_.clear();
                start_ = scanned_ = 0;
                return Next::need_more;
            }
            if (pending >= max_line_) {
                // Over the limit and still no end: report now, drop the rest as it arrives.
                buffer_.clear();
                start_ = scanned_ = 0;
                discarding_ = true;
                return Next::too_long;
            }
            if (start_ == buffer_.size()) {
                buffer_.clear();
                start_ = scanned_ = 0;
            }
            return Next::need_more;
        }
        const std::size_t len = static_cast<std::size_t>(static_cast<const char*>(nl) - base);
        start_ += len + 1;
        scanned_ = 0;
        if (discarding_) {
            discarding_ = false;
            continue;
        }
        if (len + 1 > max_line_) return Next::too_long;
        line.assign(base, len);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return Next::line;
    }
}

Result<HostPort> parse_host_port(std::string_view text) {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size())
        return make_error("address " + quote(text) + " is not host:port");
    std::string_view host = text.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    auto port = parse_uint64(text.substr(colon + 1));
    if (!port || *port == 0 || *port > 65535)
        return make_error("address " + quote(text) + ": port " + quote(text.substr(colon + 1)) +
                          " is not in 1..65535");
    if (host.empty() || !printable_ascii(host) || host.find(' ') != std::string_view::npos)
        return make_error("address " + quote(text) + ": host is empty or malformed");
    return HostPort{std::string(host), static_cast<uint16_t>(*port)};
}

}  // namespace explsched::wire
