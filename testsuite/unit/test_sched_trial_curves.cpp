#define BOOST_TEST_MODULE test_sched_trial_curves
#include <boost/test/unit_test.hpp>

#include <limits>

#include "core/sched/trial_curves.hpp"

using namespace explsched;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
CurvePoint at(double step, double server_time) { return CurvePoint{step, 1.0 / step, server_time, kNaN}; }
}  // namespace

BOOST_AUTO_TEST_SUITE(trial_curves)

BOOST_AUTO_TEST_CASE(a_reused_job_id_never_reads_the_old_curve) {
    TrialCurves c;
    for (int s = 1; s <= 10; ++s) c.add(42, 1000, 1001, at(s, 1000 + s));
    BOOST_TEST(c.curve(42, 1000).size == 10u);
    BOOST_TEST(c.curve(42, 5000).size == 0u);  // another instance with the same id
    c.add(42, 5000, 1001, at(1, 5001));
    BOOST_TEST(c.curve(42, 5000).size == 1u);
    BOOST_TEST(c.curve(42, 1000).size == 10u);
}

BOOST_AUTO_TEST_CASE(legacy_rows_only_after_submit_and_only_without_real_instances) {
    TrialCurves c;
    for (int s = 1; s <= 5; ++s) c.add(7, 0, 1001, at(s, 100 + s));   // an old job's rows
    for (int s = 1; s <= 3; ++s) c.add(7, 0, 1001, at(s, 1000 + s));  // the current job's
    BOOST_TEST(c.curve(7, 1000).size == 3u);
    BOOST_TEST(c.curve(7, 2000).size == 0u);
    c.add(7, 1000, 1001, at(4, 1004));  // the store now names instances: legacy rows are ignored
    BOOST_TEST(c.curve(7, 1000).size == 1u);
}

BOOST_AUTO_TEST_CASE(a_requeued_job_keeps_its_curve) {
    TrialCurves c;
    for (int s = 1; s <= 5; ++s) c.add(9, 1000, 1001, at(s, 1000 + s));
    for (int s = 6; s <= 8; ++s) c.add(9, 2000, 1001, at(s, 2000 + s));
    c.adopt_earlier(9, 2000, 1001);
    const PointSpan p = c.curve(9, 2000);
    BOOST_TEST(p.size == 8u);
    BOOST_TEST(p[0].step == 1.0);
    BOOST_TEST(p[7].step == 8.0);
    BOOST_TEST(c.instances() == 1u);
}

BOOST_AUTO_TEST_CASE(a_requeued_job_waiting_to_run_again_has_its_earlier_curve) {
    TrialCurves c;
    for (int s = 1; s <= 5; ++s) c.add(9, 1000, 1001, at(s, 1000 + s));
    c.adopt_earlier(9, 2000, 1001);  // requeued (submit 2000), no report of this run yet
    BOOST_TEST(c.curve(9, 2000).size == 5u);
    BOOST_TEST(c.instances() == 1u);
    c.adopt_earlier(9, 2000, 1001);  // next round: nothing to do
    BOOST_TEST(c.curve(9, 2000).size == 5u);
    c.add(9, 2000, 1001, at(6, 2006));  // its first report after the restart
    BOOST_TEST(c.curve(9, 2000).size == 6u);
    // another user's earlier job with the id is never taken, even alone
    TrialCurves other;
    for (int s = 1; s <= 5; ++s) other.add(9, 1000, 1002, at(s, 1000 + s));
    other.adopt_earlier(9, 2000, 1001);
    BOOST_TEST(other.curve(9, 2000).size == 0u);
    BOOST_TEST(other.curve(9, 1000).size == 5u);
}

BOOST_AUTO_TEST_CASE(a_requeued_job_never_adopts_another_users_earlier_instance) {
    TrialCurves c;
    // Job id 9 belonged to user 1002 (a steep curve), then was reused by user 1001's job, which
    // was requeued: only 1001's own runs make its curve.
    for (int s = 1; s <= 5; ++s) c.add(9, 500, 1002, at(s * 100, 500 + s));
    for (int s = 1; s <= 3; ++s) c.add(9, 1000, 1001, at(s, 1000 + s));
    for (int s = 4; s <= 6; ++s) c.add(9, 2000, 1001, at(s, 2000 + s));
    c.adopt_earlier(9, 2000, 1001);
    const PointSpan p = c.curve(9, 2000);
    BOOST_TEST_REQUIRE(p.size == 6u);
    BOOST_TEST(p[0].step == 1.0);
    BOOST_TEST(p[5].step == 6.0);
    BOOST_TEST(c.curve(9, 500).size == 5u);  // left alone, to be retired when it is gone
}

// explschedd caches a job's submit time (owner_cache_ttl): after a requeue the restarted run's
// first reports may still name the earlier instance. Round after round (adopt_earlier each round)
// the curve stays whole: a live test saw a resumed trial's curve cut to the last round's three
// points, so that it was never judged again.
BOOST_AUTO_TEST_CASE(a_restarted_runs_reports_under_the_earlier_instance_keep_the_curve_whole) {
    TrialCurves c;
    for (int s = 1; s <= 17; ++s) c.add(9, 1000, 1001, at(10 * s, 1000 + s));  // the first run
    c.adopt_earlier(9, 2000, 1001);                                            // requeued
    BOOST_TEST(c.curve(9, 2000).size == 17u);
    for (int round = 0; round < 5; ++round) {
        for (int k = 0; k < 3; ++k) {
            const double step = 180 + 10 * (3 * round + k);
            c.add(9, 1000, 1001, at(step, 3000 + step));  // the restarted run, filed under the old instance
        }
        c.adopt_earlier(9, 2000, 1001);
        BOOST_TEST(c.curve(9, 2000).size == 17u + 3u * static_cast<unsigned>(round + 1));
    }
    c.add(9, 2000, 1001, at(330, 3330));  // the cache expired: its own instance
    c.adopt_earlier(9, 2000, 1001);
    const PointSpan p = c.curve(9, 2000);
    BOOST_TEST_REQUIRE(p.size == 33u);
    for (std::size_t i = 0; i < p.size; ++i) BOOST_TEST(p[i].step == 10.0 * static_cast<double>(i + 1));
    BOOST_TEST(c.instances() == 1u);
}

// A run restarted from a checkpoint older than its predecessor's last report: from that step on
// the new run's points replace the abandoned ones.
BOOST_AUTO_TEST_CASE(a_run_from_an_earlier_checkpoint_replaces_the_abandoned_points) {
    TrialCurves c;
    for (int s = 1; s <= 8; ++s) c.add(9, 1000, 1001, at(10 * s, 1000 + s));
    for (int s = 6; s <= 9; ++s) c.add(9, 2000, 1001, CurvePoint{10.0 * s, 2.0 / s, 2000.0 + s, kNaN});
    c.adopt_earlier(9, 2000, 1001);
    const PointSpan p = c.curve(9, 2000);
    BOOST_TEST_REQUIRE(p.size == 9u);
    BOOST_TEST(p[4].metric == 1.0 / 50.0);  // the first run up to its checkpoint
    BOOST_TEST(p[5].metric == 2.0 / 6.0);   // the second run from there
    BOOST_TEST(p[8].step == 90.0);
}

BOOST_AUTO_TEST_CASE(retain_drops_dead_instances_and_budget_applies) {
    TrialCurves c(kMinCurvePoints);
    for (int s = 1; s <= 1000; ++s) c.add(1, 10, 1001, at(s, 10 + s));
    c.add(2, 20, 1001, at(1, 21));
    BOOST_TEST(c.curve(1, 10).size <= kMinCurvePoints);
    c.retain([](uint32_t id, int64_t) { return id == 2; });
    BOOST_TEST(c.instances() == 1u);
    BOOST_TEST(c.curve(1, 10).size == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
