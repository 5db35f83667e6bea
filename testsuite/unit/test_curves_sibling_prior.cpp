#define BOOST_TEST_MODULE test_curves_sibling_prior
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <vector>

#include "core/curves/curve_ensemble.hpp"
#include "core/curves/sibling_prior.hpp"

using namespace explsched;

namespace {

// An accuracy curve that rises as a power law until `drop` (a fraction of its run of `length`
// steps), then jumps by `jump` (a learning-rate drop no smooth fit foresees); `level` shifts it.
struct Run {
    std::vector<double> steps, metrics;
};

Run curve(int points, double length, double level, double drop, double jump) {
    Run r;
    for (int i = 1; i <= points; ++i) {
        const double step = length * i / 50.0;
        const double u = step / length;
        r.steps.push_back(step);
        r.metrics.push_back(level + 0.3 - 0.25 * std::pow(u * 50.0, -0.5) + (u >= drop ? jump : 0.0));
    }
    return r;
}

SiblingCurve sibling(const Run& r, double length) {
    SiblingCurve s;
    thin_curve(r.steps, r.metrics, kSiblingCurvePoints, s.steps, s.metrics);
    s.length = length;
    s.ended = r.steps.back() >= length;
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sibling_prior)

BOOST_AUTO_TEST_CASE(thin_curve_keeps_the_ends_and_the_bound) {
    const Run r = curve(50, 5000, 0.0, 2.0, 0.0);
    std::vector<double> s, m;
    thin_curve(r.steps, r.metrics, 10, s, m);
    BOOST_TEST(s.size() == 10u);
    BOOST_TEST(s.front() == r.steps.front());
    BOOST_TEST(s.back() == r.steps.back());
    BOOST_TEST(m.back() == r.metrics.back());
    thin_curve(r.steps, r.metrics, 100, s, m);
    BOOST_TEST(s.size() == 50u);
}

// Siblings that ended show the drop at 60 % of the run; a trial at 30 % of its run cannot see it
// in its own curve, but its siblings' forecast carries it. Siblings of another length (another
// batch size) line up by fraction of the run.
BOOST_AUTO_TEST_CASE(ended_siblings_carry_a_jump_the_trial_has_not_reached) {
    const Run trial = curve(15, 5000, 0.0, 0.6, 0.2);
    const double truth = curve(50, 5000, 0.0, 0.6, 0.2).metrics.back();
    std::vector<SiblingCurve> sibs;
    for (int k = 0; k < 4; ++k) {
        sibs.push_back(sibling(curve(50, 5000.0 * (k + 1), 0.002 * k, 0.6, 0.2), 5000.0 * (k + 1)));
    }
    std::vector<const SiblingCurve*> view;
    for (const auto& s : sibs) view.push_back(&s);
    const SiblingForecast f =
        sibling_forecast(trial.steps, trial.metrics, Direction::maximize, 5000, false, view);
    BOOST_TEST(f.n_eff > 2.0);
    BOOST_TEST(std::fabs(f.mean - truth) < 0.02, "forecast " << f.mean << " truth " << truth);

    FitSettings settings = calibrated_fit_settings();
    settings.sibling_prior_weight = 1.5;  // the benchmarked weight (off in the engine by default)
    std::vector<CurvePoint> pts;
    for (std::size_t i = 0; i < trial.steps.size(); ++i) pts.push_back({trial.steps[i], trial.metrics[i]});
    auto own = predict_curve(pts, Direction::maximize, 5000, settings);
    BOOST_REQUIRE(own.ok());
    BOOST_REQUIRE(own->extrapolated);
    const Prediction mixed =
        prior_forecast(*own, trial.steps, trial.metrics, Direction::maximize, 5000, view, settings);
    BOOST_TEST(std::fabs(mixed.value - truth) < 0.5 * std::fabs(own->value - truth),
               "own " << own->value << " mixed " << mixed.value << " truth " << truth);
    BOOST_TEST(mixed.lower <= mixed.value);
    BOOST_TEST(mixed.upper >= mixed.value);
    BOOST_TEST(truth >= mixed.lower);
    BOOST_TEST(truth <= mixed.upper);

    // no sibling prior: the trial's own forecast
    settings.sibling_prior_weight = 0.0;
    const Prediction plain =
        prior_forecast(*own, trial.steps, trial.metrics, Direction::maximize, 5000, view, settings);
    BOOST_TEST(plain.value == own->value);
}

// Siblings no further than the trial, or whose curves look nothing like it, say nothing.
BOOST_AUTO_TEST_CASE(siblings_behind_or_unlike_the_trial_are_ignored) {
    const Run trial = curve(15, 5000, 0.0, 0.6, 0.2);
    std::vector<SiblingCurve> behind{sibling(curve(10, 5000, 0.0, 0.6, 0.2), 5000)};
    std::vector<const SiblingCurve*> view{&behind[0]};
    BOOST_TEST(sibling_forecast(trial.steps, trial.metrics, Direction::maximize, 5000, false, view).n_eff ==
               0.0);
    // a sibling at a level ten times the trial's range away
    std::vector<SiblingCurve> far{sibling(curve(50, 5000, 5.0, 0.6, 0.2), 5000)};
    view = {&far[0]};
    BOOST_TEST(sibling_forecast(trial.steps, trial.metrics, Direction::maximize, 5000, false, view).weight <
               1e-6);
}

// The calibration scales the fitted interval about the forecast, and only the interval.
BOOST_AUTO_TEST_CASE(interval_calibration_scales_the_interval) {
    const Run trial = curve(20, 5000, 0.0, 2.0, 0.0);
    std::vector<CurvePoint> pts;
    for (std::size_t i = 0; i < trial.steps.size(); ++i) pts.push_back({trial.steps[i], trial.metrics[i]});
    FitSettings one;
    one.interval_calibration = 1.0;
    FitSettings two = one;
    two.interval_calibration = 2.0;
    auto a = predict_curve(pts, Direction::maximize, 5000, one);
    auto b = predict_curve(pts, Direction::maximize, 5000, two);
    BOOST_REQUIRE(a.ok());
    BOOST_REQUIRE(b.ok());
    BOOST_TEST(a->value == b->value);
    BOOST_TEST(b->upper - b->lower == 2.0 * (a->upper - a->lower), boost::test_tools::tolerance(1e-9));
    BOOST_TEST(calibrated_fit_settings().interval_calibration >
               1.0);                                        // what explsched predict reports widens
    BOOST_TEST(FitSettings{}.interval_calibration == 1.0);  // the engine's default: as fitted
    // too few points to fit: the data-free interval scales by fallback_calibration
    std::vector<CurvePoint> few(pts.begin(), pts.begin() + 3);
    one.fallback_calibration = 1.0;
    two.fallback_calibration = 2.0;
    auto c = predict_curve(few, Direction::maximize, 5000, one);
    auto d = predict_curve(few, Direction::maximize, 5000, two);
    BOOST_REQUIRE(c.ok());
    BOOST_REQUIRE(d.ok());
    BOOST_TEST(!c->extrapolated);
    BOOST_TEST(d->upper - d->lower == 2.0 * (c->upper - c->lower), boost::test_tools::tolerance(1e-9));
}

// --- jumps ----------------------------------------------------------------------------------

namespace {

// 48 points over a run of 4800 steps: a slow rise with ±noise, and a step of `jump` at `drop`.
Run noisy_step(double drop, double jump, double noise, double sign = 1.0) {
    Run r;
    for (int i = 1; i <= 48; ++i) {
        const double u = i / 48.0;
        const double wobble = noise * ((i * 7) % 5 - 2) / 2.0;
        r.steps.push_back(100.0 * i);
        r.metrics.push_back(sign * (0.4 + 0.1 * u + wobble + (u >= drop ? jump : 0.0)));
    }
    return r;
}

}  // namespace

// A learning-rate drop (ImageNet's: +0.15 at half the run) is found where it is, with its size.
BOOST_AUTO_TEST_CASE(curve_jumps_finds_a_step_and_its_size) {
    const Run r = noisy_step(0.5, 0.15, 0.01);
    std::vector<CurveJump> jumps;
    curve_jumps(r.steps, r.metrics, Direction::maximize, 4800.0, jumps);
    BOOST_REQUIRE_EQUAL(jumps.size(), 1u);
    BOOST_TEST(jumps[0].fraction == 0.5, boost::test_tools::tolerance(0.03));
    BOOST_TEST(jumps[0].gain > 0.11);
    BOOST_TEST(jumps[0].gain < 0.17);
    // a loss that drops by as much: the same jump, in metric units
    const Run loss = noisy_step(0.5, 0.15, 0.01, -1.0);
    curve_jumps(loss.steps, loss.metrics, Direction::minimize, 4800.0, jumps);
    BOOST_REQUIRE_EQUAL(jumps.size(), 1u);
    BOOST_TEST(jumps[0].gain > 0.11);
    // read the wrong way round, a drop of accuracy is no jump
    curve_jumps(loss.steps, loss.metrics, Direction::maximize, 4800.0, jumps);
    BOOST_TEST(jumps.empty());
}

// No jump: a smooth curve, noise alone, a steady steep climb, a dip and its recovery (the
// demo's spike), a step no larger than the curve's noise, too few points, a non-finite metric.
BOOST_AUTO_TEST_CASE(curve_jumps_ignores_what_is_not_a_jump) {
    std::vector<CurveJump> jumps;
    const Run smooth = noisy_step(2.0, 0.0, 0.0);
    curve_jumps(smooth.steps, smooth.metrics, Direction::maximize, 4800.0, jumps);
    BOOST_TEST(jumps.empty());
    const Run noise = noisy_step(2.0, 0.0, 0.05);
    curve_jumps(noise.steps, noise.metrics, Direction::maximize, 4800.0, jumps);
    BOOST_TEST(jumps.empty());
    Run climb;
    for (int i = 1; i <= 48; ++i) {
        climb.steps.push_back(100.0 * i);
        climb.metrics.push_back(0.02 * i + 0.004 * (i % 2));
    }
    curve_jumps(climb.steps, climb.metrics, Direction::maximize, 4800.0, jumps);
    BOOST_TEST(jumps.empty());
    Run dip = noisy_step(2.0, 0.0, 0.005);
    dip.metrics[20] -= 0.3;  // one bad evaluation, then back where it was
    curve_jumps(dip.steps, dip.metrics, Direction::maximize, 4800.0, jumps);
    BOOST_TEST(jumps.empty());
    const Run small = noisy_step(0.5, 0.05, 0.04);  // a step inside the noise
    curve_jumps(small.steps, small.metrics, Direction::maximize, 4800.0, jumps);
    BOOST_TEST(jumps.empty());
    const Run r = noisy_step(0.5, 0.15, 0.01);
    const std::vector<double> few_steps(r.steps.begin(), r.steps.begin() + 6),
        few_metrics(r.metrics.begin(), r.metrics.begin() + 6);
    curve_jumps(few_steps, few_metrics, Direction::maximize, 4800.0, jumps);
    BOOST_TEST(jumps.empty());
    Run bad = r;
    bad.metrics[3] = std::nan("");
    curve_jumps(bad.steps, bad.metrics, Direction::maximize, 4800.0, jumps);
    BOOST_TEST(jumps.empty());
    curve_jumps(r.steps, r.metrics, Direction::maximize, 0.0, jumps);  // no run length
    BOOST_TEST(jumps.empty());
}

// Trials line up by their jumps: a sibling that jumped at 35 % and 70 % of its run leaves a trial
// that has made neither both to meet (until 1.5 x 70 % of its run), one that made the first only
// the second; a trial past kJumpStretch x a jump's fraction no longer waits for it.
BOOST_AUTO_TEST_CASE(jump_gain_beyond_lines_trials_up_by_their_jumps) {
    SiblingCurve s;
    s.jumps = {CurveJump{0.35, 0.15}, CurveJump{0.7, 0.05}};
    BOOST_TEST(jump_gain_beyond(s, 0.3, 0) == 0.2, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(jump_gain_beyond(s, 0.45, 0) == 0.2, boost::test_tools::tolerance(1e-12));  // a slower trial
    BOOST_TEST(jump_gain_beyond(s, 0.45, 1) == 0.05, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(jump_gain_beyond(s, 0.6, 0) == 0.05, boost::test_tools::tolerance(1e-12));  // 0.35 x 1.5 < 0.6
    BOOST_TEST(jump_gain_beyond(s, 0.3, 2) == 0.0);
    BOOST_TEST(jump_gain_beyond(s, 1.06, 0) == 0.0);  // past 1.5 x 0.7
    BOOST_TEST(jump_gain_beyond(SiblingCurve{}, 0.1, 0) == 0.0);
}

// The best track: a trial is compared, at the same fractions of their runs, with the sibling that
// did best from the trial's point on, if that one reached the sweep's best (within the
// tolerance). Lines up siblings of another length by fraction; a sibling that has not reached
// the trial's fraction, or whose best falls short of the sweep's, is no reference.
BOOST_AUTO_TEST_CASE(best_track_lead_measures_the_lead_over_the_best_path) {
    const Run best = curve(50, 5000, 0.0, 0.6, 0.2);  // ended: the sweep's best
    const double sweep_best = best.metrics.back();
    const SiblingCurve ref = sibling(curve(50, 10000, 0.0, 0.6, 0.2), 10000);  // twice the steps
    const Run ahead = curve(20, 5000, 0.04, 0.6, 0.2), behind = curve(20, 5000, -0.04, 0.6, 0.2);
    const std::vector<const SiblingCurve*> sibs{&ref};
    const TrackLead a =
        best_track_lead(ahead.steps, ahead.metrics, Direction::maximize, 5000, sibs, sweep_best, 0.01);
    BOOST_TEST(a.points >= kTrackMinPoints);
    BOOST_TEST(a.reference == &ref);
    BOOST_TEST(a.lead == 0.04, boost::test_tools::tolerance(1e-6));
    BOOST_TEST(a.sd < 1e-6);
    BOOST_TEST(a.fraction == 0.4, boost::test_tools::tolerance(1e-9));
    const TrackLead b =
        best_track_lead(behind.steps, behind.metrics, Direction::maximize, 5000, sibs, sweep_best, 0.01);
    BOOST_TEST(b.lead == -0.04, boost::test_tools::tolerance(1e-6));
    // minimised: the same curves negated, the lead keeps its sign
    std::vector<double> neg(ahead.metrics.size());
    for (std::size_t i = 0; i < neg.size(); ++i) neg[i] = -ahead.metrics[i];
    SiblingCurve ref_neg = ref;
    for (double& m : ref_neg.metrics) m = -m;
    const TrackLead m =
        best_track_lead(ahead.steps, neg, Direction::minimize, 5000, {&ref_neg}, -sweep_best, 0.01);
    BOOST_TEST(m.lead == 0.04, boost::test_tools::tolerance(1e-6));
    // no reference: the sweep's best is beyond the sibling's (it is not the best's path) ...
    const TrackLead none =
        best_track_lead(ahead.steps, ahead.metrics, Direction::maximize, 5000, sibs, sweep_best + 0.1, 0.01);
    BOOST_TEST(none.points == 0u);
    BOOST_TEST(std::isnan(none.lead));
    BOOST_TEST(none.reference == nullptr);
    // ... the sibling has not reached the trial's fraction of its run ...
    const SiblingCurve short_ref = sibling(curve(10, 5000, 0.0, 0.6, 0.2), 5000);
    BOOST_TEST(best_track_lead(ahead.steps, ahead.metrics, Direction::maximize, 5000, {&short_ref},
                               short_ref.metrics.back(), 0.01)
                   .points == 0u);
    // ... or the trial has too few points
    const Run two = curve(2, 5000, 0.04, 0.6, 0.2);
    BOOST_TEST(
        best_track_lead(two.steps, two.metrics, Direction::maximize, 5000, sibs, sweep_best, 0.01).points ==
        0u);
}

// The behind track: a trial is compared with the path of the sibling that reached the sweep's
// best, over the last tenth of the runs both have made (as fractions of each), if the sibling
// has got to within a tenth of the trial's fraction and has made no more jumps by then than the
// trial. The slope says whether the gap closes.
BOOST_AUTO_TEST_CASE(behind_track_gap_measures_the_gap_to_the_best_path) {
    const Run best = curve(50, 10000, 0.0, 0.6, 0.2);
    const double sweep_best = best.metrics.back();
    const SiblingCurve ref = sibling(best, 10000);  // ended, twice the trial's steps
    const std::vector<const SiblingCurve*> sibs{&ref};
    const Run behind = curve(20, 5000, -0.04, 0.6, 0.2);  // 40 % of its run, 0.04 below the path
    const TrackLead b =
        behind_track_gap(behind.steps, behind.metrics, Direction::maximize, 5000, sibs, sweep_best, 0.01, 0);
    BOOST_TEST(b.points >= kTrackMinPoints);
    BOOST_TEST(b.reference == &ref);
    BOOST_TEST(b.lead == -0.04, boost::test_tools::tolerance(1e-6));
    BOOST_TEST(b.sd < 1e-6);
    BOOST_TEST(std::fabs(b.slope) < 1e-6);
    BOOST_TEST(b.fraction == 0.4, boost::test_tools::tolerance(1e-9));
    // a gap closing at 0.5 of the metric per run: the slope says so
    Run closing = behind;
    for (std::size_t i = 0; i < closing.steps.size(); ++i)
        closing.metrics[i] += 0.5 * closing.steps[i] / 5000.0;
    const TrackLead c = behind_track_gap(closing.steps, closing.metrics, Direction::maximize, 5000, sibs,
                                         sweep_best, 0.01, 0);
    BOOST_TEST(c.slope == 0.5, boost::test_tools::tolerance(1e-6));
    // minimised: the same curves negated, the gap keeps its sign
    std::vector<double> neg(behind.metrics.size());
    for (std::size_t i = 0; i < neg.size(); ++i) neg[i] = -behind.metrics[i];
    SiblingCurve ref_neg = ref;
    for (double& m : ref_neg.metrics) m = -m;
    BOOST_TEST(
        behind_track_gap(behind.steps, neg, Direction::minimize, 5000, {&ref_neg}, -sweep_best, 0.01, 0)
                .lead == -0.04,
        boost::test_tools::tolerance(1e-6));
    // no reference: no sibling reached the sweep's best ...
    const TrackLead none = behind_track_gap(behind.steps, behind.metrics, Direction::maximize, 5000, sibs,
                                            sweep_best + 0.1, 0.01, 0);
    BOOST_TEST(none.points == 0u);
    BOOST_TEST(std::isnan(none.lead));
    BOOST_TEST(none.reference == nullptr);
    // ... the sibling lags more than a tenth of the run behind the trial (it is at 30 %, the
    // trial at 44 %); at 36 % the window ends where the sibling is
    const SiblingCurve lagging = sibling(curve(15, 10000, 0.0, 0.6, 0.2), 10000);
    const Run far = curve(22, 5000, -0.04, 0.6, 0.2), near = curve(18, 5000, -0.04, 0.6, 0.2);
    BOOST_TEST(behind_track_gap(far.steps, far.metrics, Direction::maximize, 5000, {&lagging},
                                lagging.metrics.back(), 0.01, 0)
                   .points == 0u);
    const TrackLead n = behind_track_gap(near.steps, near.metrics, Direction::maximize, 5000, {&lagging},
                                         lagging.metrics.back(), 0.01, 0);
    BOOST_TEST(n.fraction == 0.3, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(n.lead == -0.04, boost::test_tools::tolerance(1e-6));
    // ... the sibling made a jump by the window's end that the trial has not made
    SiblingCurve jumped = ref;
    jumped.jumps = {CurveJump{0.3, 0.1}};
    BOOST_TEST(behind_track_gap(behind.steps, behind.metrics, Direction::maximize, 5000, {&jumped},
                                sweep_best, 0.01, 0)
                   .points == 0u);
    BOOST_TEST(behind_track_gap(behind.steps, behind.metrics, Direction::maximize, 5000, {&jumped},
                                sweep_best, 0.01, 1)
                       .lead == -0.04,
               boost::test_tools::tolerance(1e-6));
    jumped.jumps = {CurveJump{0.5, 0.1}};  // after the window: the trial has not got there yet
    BOOST_TEST(behind_track_gap(behind.steps, behind.metrics, Direction::maximize, 5000, {&jumped},
                                sweep_best, 0.01, 0)
                   .points > 0u);
    // ... or the trial has too few points
    const Run two = curve(2, 5000, -0.04, 0.6, 0.2);
    BOOST_TEST(behind_track_gap(two.steps, two.metrics, Direction::maximize, 5000, sibs, sweep_best, 0.01, 0)
                   .points == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
