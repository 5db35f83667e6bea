// libFuzzer target for the report wire format (src/common/report_wire.cpp): the bytes a hostile
// client can send explschedd, and the replies a hostile server can send a client.
//
// Beyond "no crash, no sanitizer report" it checks properties the daemon relies on:
//  - the framer never yields a line longer than the limit and never holds more than its capacity;
//  - a parsed request's signed text is exactly the bytes before " cred=" of its line;
//  - a parsed request passes validate_body, and formatting it again parses to the same values;
//  - a parsed reply formats and parses back to the same status, code and numbers;
//  - a parsed curve request (curve_wire.hpp) signs exactly the bytes before " cred=" and formats
//    back to itself; a parsed curve header or point formats and parses back to the same values.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "core/report/curve_wire.hpp"
#include "core/report/report_wire.hpp"

using namespace explsched::wire;

namespace {

void require(bool condition) {
    if (!condition) __builtin_trap();
}

bool same_double(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || a == b; }

void check_request(std::string_view line) {
    Code code = Code::none;
    auto req = parse_request(line, &code);
    if (!req) {
        require(code != Code::none);
        require(!req.error().message.empty());
        require(req.error().message.size() < 1024);  // echoes are bounded
        return;
    }
    require(code == Code::none);
    std::string_view bare = line;
    if (!bare.empty() && bare.back() == '\r') bare.remove_suffix(1);
    require(bare.substr(0, req->signed_text.size()) == req->signed_text);
    require(bare.substr(req->signed_text.size(), 6) == " cred=");
    require(validate_body(req->body).ok());
    const std::string again = format_request(req->body, req->credential);
    require(again.size() <= kMaxLineBytes + 64);
    auto req2 = parse_request(std::string_view(again).substr(0, again.size() - 1));
    require(req2.ok());
    require(req2->body.job_id == req->body.job_id);
    require(req2->body.step == req->body.step);
    require(same_double(req2->body.metric, req->body.metric));
    require(same_double(req2->body.client_time, req->body.client_time));
    require(req2->body.throughput.has_value() == req->body.throughput.has_value());
    if (req->body.throughput) require(same_double(*req2->body.throughput, *req->body.throughput));
    require(req2->credential == req->credential);
}

void check_reply(std::string_view line) {
    auto reply = parse_reply(line);
    if (!reply) return;
    const std::string text = format_reply(*reply);
    require(text.size() <= kMaxLineBytes);
    require(text.back() == '\n');
    auto again = parse_reply(std::string_view(text).substr(0, text.size() - 1));
    require(again.ok());
    require(again->status == reply->status);
    require(again->code == reply->code);
    require(again->job_id == reply->job_id);
    require(again->step == reply->step);
    require(again->last_step == reply->last_step);
}

void check_curve(std::string_view line) {
    Code code = Code::none;
    auto req = parse_curve_request(line, &code);
    if (!req) {
        require(code != Code::none);
        require(req.error().message.size() < 1024);
    } else {
        require(req->curve);
        std::string_view bare = line;
        if (!bare.empty() && bare.back() == '\r') bare.remove_suffix(1);
        require(bare.substr(0, req->signed_text.size()) == req->signed_text);
        const std::string again =
            format_curve_request(req->body.job_id, req->body.client_time, req->credential);
        auto req2 = parse_curve_request(std::string_view(again).substr(0, again.size() - 1));
        require(req2.ok());
        require(req2->body.job_id == req->body.job_id);
        require(same_double(req2->body.client_time, req->body.client_time));
    }
    if (auto h = parse_curve_header(line)) {
        const std::string text = format_curve_reply(h->job_id, h->submit, {});
        auto h2 = parse_curve_header(std::string_view(text).substr(0, text.find('\n')));
        require(h2.ok() && h2->job_id == h->job_id && h2->submit == h->submit && h2->points == 0);
    }
    if (auto p = parse_curve_point(line)) {
        const std::string text = format_curve_reply(1, 0, {*p});
        const std::string_view point_line = std::string_view(text).substr(text.find('\n') + 1);
        auto p2 = parse_curve_point(point_line.substr(0, point_line.size() - 1));
        require(p2.ok() && p2->id == p->id && p2->step == p->step && same_double(p2->metric, p->metric) &&
                same_double(p2->client_time, p->client_time) &&
                same_double(p2->server_time, p->server_time) &&
                p2->throughput.has_value() == p->throughput.has_value());
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    // Feed the framer in chunks whose sizes come from the input itself, as TCP would split it.
    constexpr std::size_t kMaxLine = 512;  // small, so the fuzzer reaches the limit cheaply
    LineFramer framer(kMaxLine, 4 * kMaxLine);
    std::string line;
    std::size_t pos = 0;
    unsigned chunk_seed = size > 0 ? data[0] : 1;
    while (pos < input.size()) {
        chunk_seed = chunk_seed * 1103515245u + 12345u;
        std::size_t chunk = 1 + (chunk_seed >> 16) % 700;
        chunk = std::min({chunk, input.size() - pos, framer.room()});
        require(chunk > 0);
        framer.append(input.substr(pos, chunk));
        pos += chunk;
        for (;;) {
            const auto next = framer.next(line);
            if (next == LineFramer::Next::need_more) break;
            if (next == LineFramer::Next::too_long) continue;
            require(line.size() < kMaxLine);
            require(line.find('\n') == std::string::npos);
            check_request(line);
            check_reply(line);
            check_curve(line);
        }
        require(framer.room() <= 4 * kMaxLine);
    }
    // The whole input as one line too (the parser's own length limit).
    if (input.find('\n') == std::string_view::npos) {
        check_request(input);
        check_reply(input);
        check_curve(input);
        (void)parse_host_port(input);
    }
    return 0;
}
