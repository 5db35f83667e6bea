#define BOOST_TEST_MODULE test_curves_curve_budget
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

#include "core/curves/curve_budget.hpp"
#include "core/curves/curve_ensemble.hpp"
#include "core/curves/trial.hpp"

using namespace explsched;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
CurvePoint pt(double step, double metric, double wall = kNaN) { return CurvePoint{step, metric, wall, kNaN}; }
double loss(double step) { return 0.5 + 2.0 * std::pow(step, -0.5); }
}  // namespace

BOOST_AUTO_TEST_SUITE(curve_budget)

BOOST_AUTO_TEST_CASE(short_curves_are_kept_as_reported) {
    BoundedCurve c(100);
    for (int i = 1; i <= 100; ++i) c.push_back(pt(i, loss(i)));
    BOOST_TEST(c.size() == 100u);
    BOOST_TEST(c.points()[41].step == 42.0);
    BOOST_TEST(c.reported() == 100u);
}

BOOST_AUTO_TEST_CASE(stays_within_budget_and_keeps_the_newest_as_reported) {
    BoundedCurve c(200);
    const int n = 100000;
    for (int i = 1; i <= n; ++i) {
        c.push_back(pt(i, loss(i), 10.0 * i));
        BOOST_REQUIRE(c.size() <= 200u);
    }
    BOOST_TEST(c.reported() == static_cast<std::uint64_t>(n));
    const auto& p = c.points();
    // never drops the last point, and the newest points are as reported
    BOOST_TEST(p.back().step == static_cast<double>(n));
    for (std::size_t k = 0; k < std::min<std::size_t>(kDenseTail, 50); ++k) {
        BOOST_TEST(p[p.size() - 1 - k].step == static_cast<double>(n - static_cast<int>(k)));
    }
    // steps stay strictly increasing (what clean_curve needs) and bins hold means
    BOOST_TEST(validate_points(PointSpan(p)).ok());
    for (std::size_t k = 1; k < p.size(); ++k) BOOST_TEST(p[k].step > p[k - 1].step);
    // a bin's metric is the mean of a convex curve over its steps: not below the curve at its
    // mean step, and close to it
    for (const CurvePoint& q : p) {
        BOOST_TEST(q.metric >= loss(q.step) - 1e-12);
        BOOST_TEST(q.metric - loss(q.step) < 0.05);
    }
    // the first bin starts at the first steps
    BOOST_TEST(p.front().step < 1000.0);
}

BOOST_AUTO_TEST_CASE(divergence_survives_binning) {
    BoundedCurve c(64);
    for (int i = 1; i <= 40; ++i) c.push_back(pt(i, loss(i)));
    c.push_back(pt(41, std::numeric_limits<double>::infinity()));
    for (int i = 42; i <= 200; ++i) c.push_back(pt(i, loss(i)));
    bool diverged = false;
    for (const CurvePoint& q : c.points()) diverged = diverged || !std::isfinite(q.metric);
    BOOST_TEST(diverged);
}

BOOST_AUTO_TEST_CASE(shrinking_the_budget_compacts_now) {
    BoundedCurve c(1000);
    for (int i = 1; i <= 1000; ++i) c.push_back(pt(i, loss(i)));
    c.set_max_points(100);
    BOOST_TEST(c.size() <= 100u);
    BOOST_TEST(c.points().back().step == 1000.0);
    c.set_max_points(1);  // clamped to the minimum
    BOOST_TEST(c.max_points() == kMinCurvePoints);
}

// The fit of a long, noisy curve read through the budget predicts its end as well as the fit of
// every point (the prediction benchmark shows the same on the shared real curves).
BOOST_AUTO_TEST_CASE(bounded_fit_predicts_like_the_full_fit) {
    std::vector<CurvePoint> full;
    BoundedCurve bounded(kMinCurvePoints * 2);
    unsigned seed = 12345;
    for (int i = 1; i <= 20000; ++i) {
        seed = seed * 1103515245u + 12345u;
        const double noise = (static_cast<double>((seed >> 8) & 0xffff) / 65536.0 - 0.5) * 0.02;
        const CurvePoint q = pt(i, loss(i) + noise);
        full.push_back(q);
        bounded.push_back(q);
    }
    FitSettings s;
    CurvePredictor a(Direction::minimize, s), b(Direction::minimize, s);
    a.assign(*clean_curve(PointSpan(full)));
    b.assign(*clean_curve(PointSpan(bounded.points())));
    BOOST_REQUIRE(a.fitted());
    BOOST_REQUIRE(b.fitted());
    const double truth = loss(80000);
    const double ea = std::fabs(a.predict(80000).value - truth);
    const double eb = std::fabs(b.predict(80000).value - truth);
    BOOST_TEST_MESSAGE("error at 4x the observed steps: full " << ea << ", bounded " << eb);
    BOOST_TEST(eb < 0.01);
    BOOST_TEST(eb < ea + 0.005);
}

BOOST_AUTO_TEST_SUITE_END()
