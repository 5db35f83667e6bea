#define BOOST_TEST_MODULE test_curves_curve_ensemble
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "core/curves/curve_ensemble.hpp"

using namespace explsched;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<CurvePoint> curve(int n, double step, double (*f)(double), double noise = 0.0) {
    std::vector<CurvePoint> pts;
    for (int i = 1; i <= n; ++i) {
        const double s = i * step;
        // deterministic "noise": reproducible without a random generator
        pts.push_back(CurvePoint{s, f(s) + noise * std::sin(12.9898 * i), kNaN, kNaN});
    }
    return pts;
}

// accuracy-like: rises to 0.9
double acc(double s) { return 0.9 - 0.6 * std::pow(s / 100.0, -0.6); }
// loss-like: falls to 0.2
double loss(double s) { return 0.2 + 2.0 * std::exp(-s / 300.0); }

CleanCurve clean(const std::vector<CurvePoint>& pts) { return *clean_curve(pts); }

}  // namespace

BOOST_AUTO_TEST_SUITE(curve_ensemble)

BOOST_AUTO_TEST_CASE(power_law_curve_predicts_its_known_final_value) {
    const auto all = curve(100, 100.0, acc);
    const std::vector<CurvePoint> seen(all.begin(), all.begin() + 30);
    auto p = predict_curve(seen, Direction::maximize, all.back().step);
    BOOST_REQUIRE(p);
    const double truth = acc(all.back().step);
    BOOST_TEST(p->extrapolated);
    BOOST_TEST(std::fabs(p->value - truth) < 0.02);
    BOOST_TEST(p->lower <= truth);
    BOOST_TEST(p->upper >= truth);
    // and better than assuming the curve stops where it is
    BOOST_TEST(std::fabs(p->value - truth) < std::fabs(seen.back().metric - truth));
}

BOOST_AUTO_TEST_CASE(falling_loss_is_predicted_towards_its_floor) {
    const auto all = curve(60, 25.0, loss);
    const std::vector<CurvePoint> seen(all.begin(), all.begin() + 20);
    auto p = predict_curve(seen, Direction::minimize, all.back().step);
    BOOST_REQUIRE(p);
    const double truth = loss(all.back().step);
    BOOST_TEST(p->value < seen.back().metric);  // keeps falling
    BOOST_TEST(p->value > 0.0);                 // a loss is never predicted negative
    BOOST_TEST(std::fabs(p->value - truth) < 0.5 * std::fabs(seen.back().metric - truth));
    BOOST_TEST(p->lower <= p->value);
    BOOST_TEST(p->value <= p->upper);
}

BOOST_AUTO_TEST_CASE(one_to_three_points_fall_back_to_the_last_value) {
    for (int n = 1; n <= 3; ++n) {
        const auto pts = curve(n, 10.0, acc);
        auto p = predict_curve(pts, Direction::maximize, 1000.0);
        BOOST_REQUIRE(p);
        BOOST_TEST(!p->extrapolated);
        BOOST_TEST(p->value == pts.back().metric);
        BOOST_TEST(p->lower < p->value);
        BOOST_TEST(p->upper > p->value);
        BOOST_TEST(p->observed == static_cast<std::size_t>(n));
    }
}

BOOST_AUTO_TEST_CASE(flat_curve_stays_flat_with_a_finite_interval) {
    auto flat = [](double) { return 0.5; };
    const auto pts = curve(20, 10.0, flat);
    auto p = predict_curve(pts, Direction::maximize, 1000.0);
    BOOST_REQUIRE(p);
    BOOST_TEST(std::fabs(p->value - 0.5) < 1e-6);
    BOOST_TEST(std::isfinite(p->lower));
    BOOST_TEST(std::isfinite(p->upper));
}

BOOST_AUTO_TEST_CASE(noisy_curve_gives_a_sane_prediction) {
    const auto all = curve(100, 100.0, acc);
    const auto noisy = curve(40, 100.0, acc, 0.03);
    auto p = predict_curve(noisy, Direction::maximize, all.back().step);
    BOOST_REQUIRE(p);
    BOOST_TEST(std::isfinite(p->value));
    BOOST_TEST(std::fabs(p->value - acc(all.back().step)) < 0.1);
    BOOST_TEST(p->upper - p->lower > 0.0);
}

BOOST_AUTO_TEST_CASE(non_monotone_curve_is_not_extrapolated_wildly) {
    // rises, then over-fits and declines
    auto hump = [](double s) { return 0.7 - 0.3 * std::pow((s - 500.0) / 500.0, 2.0); };
    const auto pts = curve(20, 50.0, hump);
    auto p = predict_curve(pts, Direction::maximize, 4000.0);
    BOOST_REQUIRE(p);
    BOOST_TEST(std::isfinite(p->value));
    BOOST_TEST(p->value <= 0.75);
    BOOST_TEST(p->value >= 0.0);
}

BOOST_AUTO_TEST_CASE(same_input_same_output) {
    const auto pts = curve(45, 100.0, acc, 0.01);
    auto a = predict_curve(pts, Direction::maximize, 10000.0);
    auto b = predict_curve(pts, Direction::maximize, 10000.0);
    BOOST_REQUIRE(a);
    BOOST_REQUIRE(b);
    BOOST_TEST(a->value == b->value);
    BOOST_TEST(a->lower == b->lower);
    BOOST_TEST(a->upper == b->upper);
    // incremental: two predictors fed the same sequence agree exactly
    CurvePredictor x(Direction::maximize), y(Direction::maximize);
    for (const auto& pt : pts) {
        BOOST_REQUIRE(x.append(pt.step, pt.metric).ok());
        BOOST_REQUIRE(y.append(pt.step, pt.metric).ok());
    }
    BOOST_TEST(x.predict(10000.0).value == y.predict(10000.0).value);
}

BOOST_AUTO_TEST_CASE(incremental_updates_refit_fully_only_geometrically) {
    const auto pts = curve(100, 100.0, acc, 0.005);
    CurvePredictor p(Direction::maximize);
    for (const auto& pt : pts) BOOST_REQUIRE(p.append(pt.step, pt.metric).ok());
    BOOST_TEST(p.size() == 100u);
    BOOST_TEST(p.full_refits() < 20u);  // 6, then every +25 %: about a dozen
    BOOST_TEST(p.fitted());
    // and the incrementally maintained fit is as good as a fresh one
    CurvePredictor fresh(Direction::maximize);
    fresh.assign(clean(pts));
    const double truth = acc(20000.0);
    BOOST_TEST(std::fabs(p.predict(20000.0).value - truth) < 0.03);
    BOOST_TEST(std::fabs(fresh.predict(20000.0).value - truth) < 0.03);
}

BOOST_AUTO_TEST_CASE(append_and_extend_reject_what_does_not_continue) {
    CurvePredictor p(Direction::maximize);
    BOOST_REQUIRE(p.append(10, 0.5).ok());
    BOOST_TEST(!p.append(10, 0.6).ok());
    BOOST_TEST(!p.append(5, 0.6).ok());
    BOOST_TEST(!p.append(20, kNaN).ok());
    CleanCurve other;
    other.steps = {10, 20};
    other.metrics = {0.4, 0.6};  // disagrees with the held point
    BOOST_TEST(!p.extend(other).ok());
    other.metrics = {0.5, 0.6};
    BOOST_TEST(p.extend(other).ok());
    BOOST_TEST(p.size() == 2u);
}

BOOST_AUTO_TEST_CASE(weights_form_a_distribution) {
    const auto pts = curve(50, 100.0, acc, 0.005);
    CurvePredictor p(Direction::maximize);
    p.assign(clean(pts));
    double total = p.flat_weight();
    for (double w : p.weights()) {
        BOOST_TEST(w >= 0.0);
        total += w;
    }
    BOOST_TEST(total == 1.0, boost::test_tools::tolerance(1e-9));
    for (Family f : kAllFamilies) {
        const double v = p.predict_family(f, 10000.0);
        BOOST_TEST((std::isnan(v) || std::isfinite(v)));
    }
}

BOOST_AUTO_TEST_CASE(bad_input_is_an_error) {
    std::vector<CurvePoint> empty;
    BOOST_TEST(!predict_curve(empty, Direction::maximize, 10.0).ok());
    const auto pts = curve(10, 1.0, acc);
    BOOST_TEST(!predict_curve(pts, Direction::maximize, kNaN).ok());
    std::vector<CurvePoint> backwards = {{2, 0.1, kNaN, kNaN}, {1, 0.2, kNaN, kNaN}};
    auto r = predict_curve(backwards, Direction::maximize, 10.0);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().message.find("decreases") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(interval_z_matches_the_normal_quantiles) {
    BOOST_TEST(interval_z(0.8) == 1.2816, boost::test_tools::tolerance(1e-3));
    BOOST_TEST(interval_z(0.95) == 1.96, boost::test_tools::tolerance(1e-3));
    BOOST_TEST(interval_z(0.85) > interval_z(0.8));
}

BOOST_AUTO_TEST_SUITE_END()
