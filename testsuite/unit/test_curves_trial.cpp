#define BOOST_TEST_MODULE test_curves_trial
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

#include "core/curves/trial.hpp"

using namespace explsched;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
CurvePoint pt(double step, double metric) { return CurvePoint{step, metric, kNaN, kNaN}; }
}  // namespace

BOOST_AUTO_TEST_SUITE(trial)

BOOST_AUTO_TEST_CASE(direction_parses_and_rejects) {
    BOOST_TEST((*parse_direction("min") == Direction::minimize));
    BOOST_TEST((*parse_direction("maximize") == Direction::maximize));
    auto bad = parse_direction("up");
    BOOST_REQUIRE(!bad);
    BOOST_TEST(bad.error().message.find("'up'") != std::string::npos);
    BOOST_TEST(std::string(to_string(Direction::minimize)) == "min");
}

BOOST_AUTO_TEST_CASE(key_formats_array_tasks_like_slurm) {
    BOOST_TEST(to_string(TrialKey{1234, TrialKey::kNoArrayTask}) == "1234");
    BOOST_TEST(to_string(TrialKey{1234, 7}) == "1234_7");
    BOOST_TEST((TrialKey{1, 2} < TrialKey{1, 3}));
    BOOST_TEST((TrialKey{1, 2} != TrialKey{1, 3}));
    BOOST_TEST(TrialKeyHash()(TrialKey{1, 2}) != TrialKeyHash()(TrialKey{2, 1}));
}

BOOST_AUTO_TEST_CASE(clean_curve_keeps_good_points_and_merges_exact_repeats) {
    std::vector<CurvePoint> pts = {pt(0, 1.0), pt(10, 0.5), pt(10, 0.5), pt(20, 0.4)};
    auto c = clean_curve(pts);
    BOOST_REQUIRE(c);
    BOOST_TEST(c->steps.size() == 3u);
    BOOST_TEST(c->metrics.back() == 0.4);
    BOOST_TEST(!c->diverged);
}

BOOST_AUTO_TEST_CASE(decreasing_step_is_an_error_naming_the_point) {
    std::vector<CurvePoint> pts = {pt(0, 1.0), pt(10, 0.5), pt(5, 0.4)};
    auto c = clean_curve(pts);
    BOOST_REQUIRE(!c);
    BOOST_TEST(c.error().message.find("point 2") != std::string::npos);
    BOOST_TEST(c.error().message.find("step 5") != std::string::npos);
    BOOST_TEST(c.error().message.find("decreases") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(repeated_step_with_other_value_is_an_error) {
    std::vector<CurvePoint> pts = {pt(0, 1.0), pt(10, 0.5), pt(10, 0.6)};
    auto c = clean_curve(pts);
    BOOST_REQUIRE(!c);
    BOOST_TEST(c.error().message.find("metric 0.6") != std::string::npos);
    BOOST_TEST(c.error().message.find("step 10") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(non_finite_and_absurd_fields_are_errors) {
    BOOST_TEST(!clean_curve(std::vector<CurvePoint>{pt(kNaN, 1.0)}).ok());
    BOOST_TEST(!clean_curve(std::vector<CurvePoint>{pt(-1, 1.0)}).ok());
    BOOST_TEST(!clean_curve(std::vector<CurvePoint>{pt(1e16, 1.0)}).ok());
    BOOST_TEST(!clean_curve(std::vector<CurvePoint>{pt(1, 1e16)}).ok());
    std::vector<CurvePoint> wall = {CurvePoint{1, 1, std::numeric_limits<double>::infinity(), kNaN}};
    auto w = clean_curve(wall);
    BOOST_REQUIRE(!w);
    BOOST_TEST(w.error().message.find("wall_time") != std::string::npos);
    std::vector<CurvePoint> thr = {CurvePoint{1, 1, 5, -2}};
    auto t = validate_points(thr);
    BOOST_REQUIRE(!t);
    BOOST_TEST(t.error().message.find("throughput -2") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(nan_metric_is_divergence_not_an_error) {
    std::vector<CurvePoint> pts = {pt(0, 2.0), pt(10, 1.5), pt(20, kNaN), pt(30, 1.0)};
    auto c = clean_curve(pts);
    BOOST_REQUIRE(c);
    BOOST_TEST(c->diverged);
    BOOST_TEST(c->diverged_at_step == 20.0);
    BOOST_TEST(c->steps.size() == 2u);  // nothing after divergence is fitted
}

BOOST_AUTO_TEST_CASE(point_span_views_a_vector) {
    std::vector<CurvePoint> pts = {pt(0, 1), pt(1, 2)};
    PointSpan span(pts);
    BOOST_TEST(span.size == 2u);
    BOOST_TEST(span[1].metric == 2.0);
    BOOST_TEST(PointSpan().empty());
}

BOOST_AUTO_TEST_SUITE_END()
