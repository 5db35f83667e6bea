#define BOOST_TEST_MODULE report_wire
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "core/report/report_wire.hpp"

using namespace explsched;
using namespace explsched::wire;

namespace {

ReportBody body(uint32_t job = 1234, uint64_t step = 500, double metric = 0.4321) {
    ReportBody b;
    b.job_id = job;
    b.step = step;
    b.metric = metric;
    b.client_time = 1712345678.25;
    return b;
}

std::string line_of(const ReportBody& b, std::string_view cred = "MUNGE:AAAA:") {
    std::string line = format_request(b, cred);
    line.pop_back();  // the '\n'
    return line;
}

// Parses `line` expecting failure with `code`; returns the message.
std::string refuse(std::string_view line, Code expected) {
    Code code = Code::none;
    auto r = parse_request(line, &code);
    BOOST_TEST_REQUIRE(!r.ok(), "accepted: " << line);
    BOOST_TEST(to_string(code) == to_string(expected), "for: " << line << " -> " << r.error().message);
    return r.error().message;
}

// Boost builds the message even when the assertion holds: never touch error() of a success.
template <typename T>
std::string why(const Result<T>& r) {
    return r.ok() ? std::string() : r.error().message;
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_SUITE(report_wire)

BOOST_AUTO_TEST_CASE(request_round_trip_binds_the_signed_text) {
    ReportBody b = body();
    b.throughput = 812.5;
    const std::string line = line_of(b, "MUNGE:AwQDAACm9:");
    BOOST_TEST(line ==
               "EXPLSCHED-REPORT/1 job=1234 step=500 metric=0.4321 throughput=812.5 "
               "time=1712345678.25 cred=MUNGE:AwQDAACm9:");
    Code code = Code::bad_request;
    auto r = parse_request(line, &code);
    BOOST_TEST_REQUIRE(r.ok(), why(r));
    BOOST_TEST((code == Code::none));
    BOOST_TEST(r->body.job_id == 1234u);
    BOOST_TEST(r->body.step == 500u);
    BOOST_TEST(r->body.metric == 0.4321);
    BOOST_TEST_REQUIRE(r->body.throughput.has_value());
    BOOST_TEST(*r->body.throughput == 812.5);
    BOOST_TEST(r->body.client_time == 1712345678.25);
    BOOST_TEST(r->credential == "MUNGE:AwQDAACm9:");
    BOOST_TEST(r->signed_text == format_signed_text(b));
    BOOST_TEST(r->version == 1);
}

BOOST_AUTO_TEST_CASE(doubles_survive_the_text_exactly) {
    for (double v : {0.1, 1.0 / 3.0, -2.5e-300, 123456789.123456789, 1e15, -1e15, 5e-324}) {
        auto r = parse_request(line_of(body(7, 1, v)));
        BOOST_TEST_REQUIRE(r.ok(), why(r));
        BOOST_TEST(r->body.metric == v);
    }
}

BOOST_AUTO_TEST_CASE(optional_throughput_and_field_order) {
    auto r = parse_request("EXPLSCHED-REPORT/1 time=5 metric=1 step=2 job=3 cred=X\r");
    BOOST_TEST_REQUIRE(r.ok(), why(r));
    BOOST_TEST(!r->body.throughput.has_value());
    BOOST_TEST(r->signed_text == "EXPLSCHED-REPORT/1 time=5 metric=1 step=2 job=3");
    BOOST_TEST(r->body.job_id == 3u);
}

BOOST_AUTO_TEST_CASE(non_finite_and_absurd_values_are_invalid) {
    const std::string base = "EXPLSCHED-REPORT/1 job=1 step=1 ";
    BOOST_TEST(contains(refuse(base + "metric=nan time=1 cred=X", Code::invalid_value),
                        "'nan' is not a finite number"));
    BOOST_TEST(contains(refuse(base + "metric=-inf time=1 cred=X", Code::invalid_value), "metric"));
    BOOST_TEST(
        contains(refuse(base + "metric=1e400 time=1 cred=X", Code::invalid_value), "not a finite number"));
    BOOST_TEST(contains(refuse(base + "metric=2e15 time=1 cred=X", Code::invalid_value), "absurdly large"));
    BOOST_TEST(
        contains(refuse(base + "metric=1 throughput=-3 time=1 cred=X", Code::invalid_value), "'throughput'"));
    BOOST_TEST(
        contains(refuse(base + "metric=1 throughput=inf time=1 cred=X", Code::invalid_value), "throughput"));
    BOOST_TEST(
        contains(refuse(base + "metric=1 time=-1 cred=X", Code::invalid_value), "report field 'time'"));
    BOOST_TEST(contains(
        refuse("EXPLSCHED-REPORT/1 job=1 step=1000000000000001 metric=1 time=1 cred=X", Code::invalid_value),
        "'step'"));
    BOOST_TEST(contains(refuse("EXPLSCHED-REPORT/1 job=0 step=1 metric=1 time=1 cred=X", Code::invalid_value),
                        "job id"));
    refuse("EXPLSCHED-REPORT/1 job=4294967294 step=1 metric=1 time=1 cred=X", Code::invalid_value);
    BOOST_TEST(
        contains(refuse(base + "metric=0x10 time=1 cred=X", Code::bad_request), "not a decimal number"));
}

BOOST_AUTO_TEST_CASE(grammar_errors_name_what_is_wrong) {
    BOOST_TEST(contains(refuse("EXPLSCHED-REPORT/1 job=1 step=-1 metric=1 time=1 cred=X", Code::bad_request),
                        "'step'"));
    BOOST_TEST(
        contains(refuse("EXPLSCHED-REPORT/1 job=1 metric=1 time=1 cred=X", Code::bad_request), "'step'"));
    BOOST_TEST(contains(
        refuse("EXPLSCHED-REPORT/1 job=1 step=1 step=2 metric=1 time=1 cred=X", Code::bad_request), "twice"));
    BOOST_TEST(
        contains(refuse("EXPLSCHED-REPORT/1 job=1 step=1 metric=1 time=1 user=0 cred=X", Code::bad_request),
                 "'user'"));
    BOOST_TEST(
        contains(refuse("EXPLSCHED-REPORT/1 job=1 step=1 metric=1 time=1", Code::bad_request), "cred="));
    BOOST_TEST(contains(refuse("EXPLSCHED-REPORT/1 job=1 step=1 metric=1 time=1 cred=", Code::bad_request),
                        "empty"));
    BOOST_TEST(contains(refuse("EXPLSCHED-REPORT/1 job=1 step=1 metric=1 cred=X time=1", Code::bad_request),
                        "last"));
    BOOST_TEST(contains(refuse("EXPLSCHED-REPORT/1  job=1 step=1 metric=1 time=1 cred=X", Code::bad_request),
                        "key=value"));
    BOOST_TEST(contains(refuse("EXPLSCHED-REPORT/2 job=1 step=1 metric=1 time=1 cred=X", Code::bad_version),
                        "version '2'"));
    BOOST_TEST(contains(refuse("GET / HTTP/1.1", Code::bad_request), "EXPLSCHED-REPORT/1"));
    refuse("", Code::bad_request);
    refuse(std::string("EXPLSCHED-REPORT/1 job=1 step=1 metric=1 time=1 cred=X\0Y", 55), Code::bad_request);
    refuse("EXPLSCHED-REPORT/1 job=1 step=1 metric=1 time=1 cred=" + std::string(3000, 'A'),
           Code::bad_request);
    BOOST_TEST(
        contains(refuse("EXPLSCHED-REPORT/1 job=1 step=1 metric=1 time=1 cred=" + std::string(5000, 'A'),
                        Code::line_too_long),
                 "4096"));
}

BOOST_AUTO_TEST_CASE(error_messages_echo_bounded_values) {
    const std::string huge(1000, '9');
    const std::string msg =
        refuse("EXPLSCHED-REPORT/1 job=1 step=1 metric=" + huge + "x time=1 cred=X", Code::bad_request);
    BOOST_TEST(msg.size() < 200u);
    BOOST_TEST(contains(msg, "..."));
}

BOOST_AUTO_TEST_CASE(validate_body_uses_the_trial_rules) {
    BOOST_TEST(validate_body(body()).ok());
    ReportBody b = body();
    b.metric = std::numeric_limits<double>::quiet_NaN();
    BOOST_TEST(!validate_body(b).ok());
    b = body();
    b.metric = -1e16;
    BOOST_TEST(contains(validate_body(b).error().message, "metric"));
    b = body();
    b.throughput = 1e16;
    BOOST_TEST(contains(validate_body(b).error().message, "throughput"));
    b = body();
    b.client_time = std::numeric_limits<double>::infinity();
    BOOST_TEST(contains(validate_body(b).error().message, "'time'"));
}

BOOST_AUTO_TEST_CASE(replies_round_trip) {
    Reply stored;
    stored.status = ReplyStatus::stored;
    stored.job_id = 9;
    stored.step = 10;
    BOOST_TEST(format_reply(stored) == "EXPLSCHED-REPLY/1 stored job=9 step=10\n");

    Reply behind;
    behind.status = ReplyStatus::refused;
    behind.code = Code::step_behind;
    behind.job_id = 9;
    behind.step = 4;
    behind.last_step = 10;
    behind.message = "job 9 step 4 is lower than its last stored step 10\nx";
    const std::string text = format_reply(behind);
    BOOST_TEST(text.find('\n') == text.size() - 1);
    auto r = parse_reply(std::string_view(text).substr(0, text.size() - 1));
    BOOST_TEST_REQUIRE(r.ok(), why(r));
    BOOST_TEST((r->status == ReplyStatus::refused));
    BOOST_TEST((r->code == Code::step_behind));
    BOOST_TEST(*r->last_step == 10u);
    BOOST_TEST(*r->step == 4u);
    BOOST_TEST(r->message == "job 9 step 4 is lower than its last stored step 10?x");
    BOOST_TEST(!r->accepted());

    Reply retry;
    retry.status = ReplyStatus::retry;
    retry.code = Code::busy;
    retry.message = std::string(10000, 'm');
    const std::string long_text = format_reply(retry);
    BOOST_TEST(long_text.size() <= kMaxLineBytes);
    BOOST_TEST(parse_reply(long_text.substr(0, long_text.size() - 1)).ok());

    BOOST_TEST(!parse_reply("EXPLSCHED-REPLY/1 refused job=1").ok());
    BOOST_TEST(!parse_reply("EXPLSCHED-REPLY/1 maybe").ok());
    BOOST_TEST(!parse_reply("EXPLSCHED-REPLY/3 stored").ok());
    BOOST_TEST(!parse_reply("EXPLSCHED-REPLY/1 refused code=nonsense").ok());
    BOOST_TEST(parse_reply("EXPLSCHED-REPLY/1 duplicate job=1 step=2 future=field")->accepted());
    for (Code c :
         {Code::bad_request, Code::unknown_job, Code::unavailable, Code::rate_limited, Code::too_many_points})
        BOOST_TEST((parse_code(to_string(c)) == c));
}

BOOST_AUTO_TEST_CASE(framer_joins_chunks_and_strips_cr) {
    LineFramer framer(64, 256);
    std::string line;
    framer.append("abc");
    BOOST_TEST((framer.next(line) == LineFramer::Next::need_more));
    framer.append("def\r\nxy");
    BOOST_TEST((framer.next(line) == LineFramer::Next::line));
    BOOST_TEST(line == "abcdef");
    BOOST_TEST((framer.next(line) == LineFramer::Next::need_more));
    framer.append("z\n\n");
    BOOST_TEST((framer.next(line) == LineFramer::Next::line));
    BOOST_TEST(line == "xyz");
    BOOST_TEST((framer.next(line) == LineFramer::Next::line));
    BOOST_TEST(line.empty());
    BOOST_TEST(!framer.has_pending());
}

BOOST_AUTO_TEST_CASE(framer_limit_is_exact) {
    LineFramer framer(8, 64);
    std::string line;
    framer.append("1234567\n");  // 8 bytes with the '\n': allowed
    BOOST_TEST((framer.next(line) == LineFramer::Next::line));
    framer.append("12345678\nok\n");  // 9 bytes: refused, then framing resumes
    BOOST_TEST((framer.next(line) == LineFramer::Next::too_long));
    BOOST_TEST((framer.next(line) == LineFramer::Next::line));
    BOOST_TEST(line == "ok");
}

BOOST_AUTO_TEST_CASE(framer_refuses_a_megabyte_line_without_buffering_it) {
    LineFramer framer(kMaxLineBytes, 4 * kMaxLineBytes);
    const std::string chunk(1000, 'a');
    std::string line;
    int too_long = 0;
    std::size_t fed = 0;
    while (fed < 1000000) {
        BOOST_TEST_REQUIRE(framer.room() <= 4 * kMaxLineBytes);
        const std::size_t n = std::min(chunk.size(), framer.room());
        BOOST_TEST_REQUIRE(n > 0u);
        framer.append(std::string_view(chunk).substr(0, n));
        fed += n;
        for (;;) {
            auto next = framer.next(line);
            if (next == LineFramer::Next::too_long) ++too_long;
            BOOST_TEST_REQUIRE((next != LineFramer::Next::line));
            if (next != LineFramer::Next::too_long) break;
        }
    }
    BOOST_TEST(too_long == 1);  // reported once, as soon as it crossed the limit
    framer.append("tail\nEXPLSCHED\n");
    BOOST_TEST((framer.next(line) == LineFramer::Next::line));
    BOOST_TEST(line == "EXPLSCHED");
}

BOOST_AUTO_TEST_CASE(host_port) {
    auto a = parse_host_port("127.0.0.1:6828");
    BOOST_TEST_REQUIRE(a.ok());
    BOOST_TEST(a->host == "127.0.0.1");
    BOOST_TEST(a->port == 6828);
    BOOST_TEST(parse_host_port("[::1]:7")->host == "::1");
    BOOST_TEST(parse_host_port("::1:7")->host == "::1");
    BOOST_TEST(!parse_host_port("host").ok());
    BOOST_TEST(!parse_host_port("host:0").ok());
    BOOST_TEST(!parse_host_port("host:65536").ok());
    BOOST_TEST(!parse_host_port(":80").ok());
    BOOST_TEST(contains(parse_host_port("h:x").error().message, "port 'x'"));
}

BOOST_AUTO_TEST_SUITE_END()
