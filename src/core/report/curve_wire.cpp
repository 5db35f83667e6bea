#include "core/report/curve_wire.hpp"

#include <charconv>
#include <cmath>

#include "core/base/strings.hpp"

namespace explsched::wire {

namespace {

void append_double(std::string& out, double value) {
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, res.ptr);
}

std::string tag_text() { return std::string(kCurveTag) + "/" + std::to_string(kProtocolVersion); }

Error bad(Code* code, Code what, std::string message) {
    if (code != nullptr) *code = what;
    return make_error(std::move(message));
}

// key=value tokens after the first `skip` tokens, handed to `take`.
template <typename Take>
Status each_field(std::string_view text, std::size_t skip, Take take) {
    const auto tokens = split(text, " ");
    for (std::size_t i = skip; i < tokens.size(); ++i) {
        const auto eq = tokens[i].find('=');
        if (eq == std::string_view::npos || eq == 0)
            return make_error("token '" + std::string(tokens[i].substr(0, 64)) + "' is not key=value");
        if (auto s = take(tokens[i].substr(0, eq), tokens[i].substr(eq + 1)); !s) return s;
    }
    return {};
}

Result<double> finite(std::string_view key, std::string_view value) {
    auto d = parse_finite_double(value);
    if (!d)
        return make_error("field '" + std::string(key) + "': '" + std::string(value.substr(0, 64)) +
                          "' is not a finite number");
    return *d;
}

}  // namespace

bool is_curve_request(std::string_view line) {
    return line.size() > kCurveTag.size() && line.substr(0, kCurveTag.size()) == kCurveTag &&
           line[kCurveTag.size()] == '/';
}

std::string format_curve_signed_text(uint32_t job_id, double client_time) {
    std::string out = tag_text() + " job=" + std::to_string(job_id) + " time=";
    append_double(out, client_time);
    return out;
}

std::string format_curve_request(uint32_t job_id, double client_time, std::string_view credential) {
    return format_curve_signed_text(job_id, client_time) + " cred=" + std::string(credential) + "\n";
}

Result<ReportRequest> parse_curve_request(std::string_view line, Code* code) {
    if (code != nullptr) *code = Code::none;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() >= kMaxLineBytes)
        return bad(code, Code::line_too_long,
                   "line of " + std::to_string(line.size()) + " bytes exceeds the limit");
    for (char c : line)
        if (c < 0x20 || c >= 0x7f)
            return bad(code, Code::bad_request, "line holds a byte that is not printable ASCII");
    const auto cred_at = line.find(" cred=");
    if (cred_at == std::string_view::npos)
        return bad(code, Code::bad_request, "curve request has no cred= field");
    const std::string_view signed_text = line.substr(0, cred_at);
    const auto first = signed_text.substr(0, signed_text.find(' '));
    if (first != tag_text())
        return bad(code, Code::bad_version,
                   "curve request tag '" + std::string(first.substr(0, 64)) + "' is not " + tag_text());
    ReportRequest req;
    req.curve = true;
    req.credential = std::string(line.substr(cred_at + 6));
    if (req.credential.empty() || req.credential.size() > kMaxCredentialBytes ||
        req.credential.find(' ') != std::string::npos)
        return bad(code, Code::bad_request, "curve request: field 'cred' is empty, too long or not last");
    bool job = false, time = false;
    Code what = Code::bad_request;
    auto s = each_field(signed_text, 1, [&](std::string_view key, std::string_view value) -> Status {
        if (key == "job" && !job) {
            auto n = parse_uint64(value);
            if (!n || *n == 0 || *n > kMaxJobId) {
                what = Code::invalid_value;
                return make_error("field 'job': '" + std::string(value.substr(0, 64)) + "' is not a job id");
            }
            req.body.job_id = static_cast<uint32_t>(*n);
            job = true;
            return {};
        }
        if (key == "time" && !time) {
            auto d = finite(key, value);
            if (!d) return d.error();
            req.body.client_time = *d;
            time = true;
            return {};
        }
        return make_error("unknown or repeated field '" + std::string(key.substr(0, 64)) +
                          "' (known: job, time, cred)");
    });
    if (!s) return bad(code, what, "curve request: " + s.error().message);
    if (!job || !time) return bad(code, Code::bad_request, "curve request lacks the field 'job' or 'time'");
    req.signed_text = std::string(signed_text);
    return req;
}

std::string format_curve_reply(uint32_t job_id, int64_t submit, const std::vector<CurveRow>& rows) {
    std::string out = tag_text() + " job=" + std::to_string(job_id) + " submit=" + std::to_string(submit) +
                      " points=" + std::to_string(rows.size()) + "\n";
    out.reserve(out.size() + rows.size() * 96);
    for (const CurveRow& r : rows) {
        out += "POINT id=" + std::to_string(r.id) + " step=" + std::to_string(r.step) + " metric=";
        append_double(out, r.metric);
        if (r.throughput) {
            out += " throughput=";
            append_double(out, *r.throughput);
        }
        out += " time=";
        append_double(out, r.client_time);
        out += " server_time=";
        append_double(out, r.server_time);
        out += '\n';
    }
    return out;
}

Result<CurveHeader> parse_curve_header(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, line.find(' ')) != tag_text())
        return make_error("not a curve answer: '" + std::string(line.substr(0, 200)) + "'");
    CurveHeader h;
    bool job = false, submit = false, points = false;
    auto s = each_field(line, 1, [&](std::string_view key, std::string_view value) -> Status {
        if (key == "job") {
            auto n = parse_uint64(value);
            if (!n || *n == 0 || *n > kMaxJobId) return make_error("bad job");
            h.job_id = static_cast<uint32_t>(*n);
            job = true;
        } else if (key == "submit") {
            auto n = parse_int64(value);
            if (!n) return make_error("bad submit");
            h.submit = *n;
            submit = true;
        } else if (key == "points") {
            auto n = parse_uint64(value);
            if (!n || *n > kMaxCurvePoints) return make_error("bad point count");
            h.points = static_cast<std::size_t>(*n);
            points = true;
        }
        return {};  // unknown keys: a later server may say more
    });
    if (!s) return make_error("curve answer: " + s.error().message);
    if (!job || !submit || !points) return make_error("curve answer lacks job, submit or points");
    return h;
}

Result<CurveRow> parse_curve_point(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, 6) != "POINT ")
        return make_error("not a curve point: '" + std::string(line.substr(0, 80)) + "'");
    CurveRow r;
    bool id = false, step = false, metric = false, time = false, server_time = false;
    auto s = each_field(line, 1, [&](std::string_view key, std::string_view value) -> Status {
        if (key == "id" || key == "step") {
            auto n = parse_uint64(value);
            if (!n || *n > static_cast<uint64_t>(INT64_MAX)) return make_error("bad " + std::string(key));
            if (key == "id") {
                r.id = static_cast<int64_t>(*n);
                id = true;
            } else {
                r.step = *n;
                step = true;
            }
            return {};
        }
        auto d = finite(key, value);
        if (!d) return d.error();
        if (key == "metric") {
            r.metric = *d;
            metric = true;
        } else if (key == "throughput") {
            r.throughput = *d;
        } else if (key == "time") {
            r.client_time = *d;
            time = true;
        } else if (key == "server_time") {
            r.server_time = *d;
            server_time = true;
        }
        return {};
    });
    if (!s) return make_error("curve point: " + s.error().message);
    if (!id || !step || !metric || !time || !server_time) return make_error("curve point lacks a field");
    return r;
}

}  // namespace explsched::wire
