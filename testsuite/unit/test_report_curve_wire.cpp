#define BOOST_TEST_MODULE report_curve_wire
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <sstream>
#include <string>

#include "core/report/curve_wire.hpp"

using namespace explsched::wire;

BOOST_AUTO_TEST_SUITE(report_curve_wire)

BOOST_AUTO_TEST_CASE(a_request_round_trips_and_signs_everything_before_cred) {
    const std::string line = format_curve_request(1234, 1712345678.25, "MUNGE:abc:");
    BOOST_TEST(line == "EXPLSCHED-CURVE/1 job=1234 time=1712345678.25 cred=MUNGE:abc:\n");
    BOOST_TEST(is_curve_request(line));
    BOOST_TEST(!is_curve_request("EXPLSCHED-REPORT/1 job=1 step=1 metric=1 time=1 cred=x"));
    auto r = parse_curve_request(line.substr(0, line.size() - 1));
    BOOST_TEST_REQUIRE(r.ok());
    BOOST_TEST(r->curve);
    BOOST_TEST(r->body.job_id == 1234u);
    BOOST_TEST(r->body.client_time == 1712345678.25);
    BOOST_TEST(r->signed_text == format_curve_signed_text(1234, 1712345678.25));
    BOOST_TEST(r->credential == "MUNGE:abc:");
}

BOOST_AUTO_TEST_CASE(bad_requests_are_refused_with_a_code) {
    struct Case {
        const char* line;
        Code code;
    } cases[] = {
        {"EXPLSCHED-CURVE/1 job=0 time=1 cred=x", Code::invalid_value},
        {"EXPLSCHED-CURVE/1 job=1 cred=x", Code::bad_request},
        {"EXPLSCHED-CURVE/1 job=1 time=1", Code::bad_request},
        {"EXPLSCHED-CURVE/1 job=1 job=2 time=1 cred=x", Code::bad_request},
        {"EXPLSCHED-CURVE/1 job=1 time=nan cred=x", Code::bad_request},
        {"EXPLSCHED-CURVE/1 job=1 time=1 step=3 cred=x", Code::bad_request},
        {"EXPLSCHED-CURVE/2 job=1 time=1 cred=x", Code::bad_version},
        {"EXPLSCHED-CURVE/1 job=1 time=1 cred=a b", Code::bad_request},
    };
    for (const auto& c : cases) {
        Code code = Code::none;
        auto r = parse_curve_request(c.line, &code);
        BOOST_TEST(!r.ok(), c.line);
        BOOST_TEST((code == c.code), c.line << " gave " << to_string(code));
    }
    Code code = Code::none;
    BOOST_TEST(!parse_curve_request(std::string(5000, 'x'), &code).ok());
}

BOOST_AUTO_TEST_CASE(an_answer_round_trips_exactly) {
    std::vector<CurveRow> rows = {{17, 10, 0.9, 100.0, 1712345000.5, 1712345000.625},
                                  {18, 20, 1.0 / 3.0, std::nullopt, 1712345010.5, 1712345010.75}};
    const std::string text = format_curve_reply(42, 1712300000, rows);
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);
    auto h = parse_curve_header(line);
    BOOST_TEST_REQUIRE(h.ok());
    BOOST_TEST(h->job_id == 42u);
    BOOST_TEST(h->submit == 1712300000);
    BOOST_TEST_REQUIRE(h->points == 2u);
    for (const CurveRow& want : rows) {
        std::getline(in, line);
        BOOST_TEST(line.size() < kMaxLineBytes);
        auto p = parse_curve_point(line);
        BOOST_TEST_REQUIRE(p.ok());
        BOOST_TEST(p->id == want.id);
        BOOST_TEST(p->step == want.step);
        BOOST_TEST(p->metric == want.metric);  // bit-exact: shortest round-trip text
        BOOST_TEST((p->throughput == want.throughput));
        BOOST_TEST(p->client_time == want.client_time);
        BOOST_TEST(p->server_time == want.server_time);
    }
    BOOST_TEST(!std::getline(in, line));
    // A refusal is not a header; garbage points are errors.
    BOOST_TEST(!parse_curve_header("EXPLSCHED-REPLY/1 refused code=forbidden job=42 msg=no").ok());
    BOOST_TEST(!parse_curve_header("EXPLSCHED-CURVE/1 job=42 submit=1 points=999999999").ok());
    BOOST_TEST(!parse_curve_point("POINT id=1 step=2 metric=inf time=1 server_time=1").ok());
    BOOST_TEST(!parse_curve_point("POINT id=1 step=2 time=1 server_time=1").ok());
}

BOOST_AUTO_TEST_SUITE_END()
