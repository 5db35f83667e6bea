#define BOOST_TEST_MODULE test_sched_engine
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "core/sched/engine.hpp"
#include "engine_fixture.hpp"

using namespace explsched;
using namespace enginetest;

namespace {

Engine make(EngineSettings s = EngineSettings{}) {
    auto e = Engine::create(s);
    BOOST_REQUIRE(e.ok());
    return std::move(e.value());
}

// The extrapolation rules alone: milestones only rank, no trial is stopped for a negligible
// expected gain (the cases below that test the price, preemption and half-run rules in isolation).
EngineSettings classic(EngineSettings s = EngineSettings{}) {
    s.milestone_stop_probability = 0.0;
    s.min_expected_gain = 0.0;
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(engine)

namespace {

// An accuracy curve that idles near 0.1 until `drop_step`, then jumps to `after` (a plateau that
// ends, as a learning-rate drop or the demo's best trial do); points every 100 steps.
std::vector<CurvePoint> plateau_then_jump(int n, double drop_step, double after, double wobble) {
    std::vector<CurvePoint> pts;
    for (int i = 1; i <= n; ++i) {
        const double step = 100.0 * i;
        const double level = step < drop_step ? 0.1 + 0.01 * std::log(step / 100.0) : after;
        pts.push_back({step, level + wobble * ((i % 3) - 1), 10.0 * i, kNaN});
    }
    return pts;
}

// Ten trials of group g, their curves cut at n points, in one round of engine e; returns the
// width of trial 1's interval.
double interval_width(Engine& e, const std::string& group, bool jumps, int n, double now,
                      double* widened = nullptr) {
    std::vector<std::vector<CurvePoint>> curves;
    for (int t = 0; t < 10; ++t) {
        curves.push_back(jumps ? plateau_then_jump(n, 1000.0 + 100.0 * t, 0.8 + 0.01 * t, 0.002)
                               : rising(n, 0.9 + 0.005 * t));
    }
    std::vector<JobView> jobs;
    for (int t = 0; t < 10; ++t) jobs.push_back(view(static_cast<std::uint32_t>(t + 1), group, curves[t]));
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(now, 16), out).ok());
    BOOST_REQUIRE(std::isfinite(out[0].prediction.upper));
    if (widened != nullptr) *widened = out[0].prediction.widened;
    return out[0].prediction.upper - out[0].prediction.lower;
}

}  // namespace

// The forecast audit: a sweep whose curves beat the engine's forecasts (plateaus that end) gets
// wider intervals, a sweep whose curves follow them keeps its own; nothing changes before
// calibration_min_audits forecasts came due, nor with the audit off.
BOOST_AUTO_TEST_CASE(forecast_audit_widens_the_intervals_of_sweeps_whose_curves_beat_them) {
    for (bool jumps : {true, false}) {
        EngineSettings on;
        EngineSettings off;
        off.calibration_min_audits = 0;
        Engine audited = make(on), plain = make(off);
        // Round 1 at 800 steps: every trial gets a forecast for step 1600, none due yet.
        const double w1 = interval_width(audited, "g", jumps, 8, 100);
        BOOST_TEST(w1 == interval_width(plain, "g", jumps, 8, 100));
        // Round 2 at 1700 steps: ten forecasts came due (the jumping curves beat theirs).
        double factor = 0.0, plain_factor = 0.0;
        const double w2 = interval_width(audited, "g", jumps, 17, 200, &factor);
        const double w2_plain = interval_width(plain, "g", jumps, 17, 200, &plain_factor);
        BOOST_TEST(plain_factor == 1.0);
        BOOST_TEST(w2 == factor * w2_plain, boost::test_tools::tolerance(1e-9));  // what the assessment says
        if (jumps) {
            BOOST_TEST(factor > 1.5);
            BOOST_TEST(w2 > 1.5 * w2_plain, "audited " << w2 << " vs " << w2_plain);
            // ... and at most calibration_max_widen times wider
            BOOST_TEST(w2 <= on.calibration_max_widen * w2_plain * (1.0 + 1e-9));
        } else {
            BOOST_TEST(w2 == w2_plain);
        }
    }
}

// A trial hopeless even with the widened interval says so with the interval the rule read (the
// one SystemComment's pred= shows), not the interval as fitted.
BOOST_AUTO_TEST_CASE(a_hopeless_reason_quotes_the_widened_interval) {
    EngineSettings s;
    s.hopeless_min_progress = 0.0;
    Engine e = make(s);
    interval_width(e, "g", true, 8, 100);  // round 1: forecasts made
    std::vector<std::vector<CurvePoint>> curves;
    for (int t = 0; t < 10; ++t)
        curves.push_back(plateau_then_jump(20, 1000.0 + 100.0 * t, 0.8 + 0.01 * t, 0.002));
    curves[9] = plateau_then_jump(20, 1.0e9, 0.0, 0.002);  // still on its plateau at 2000 steps
    std::vector<JobView> jobs;
    for (int t = 0; t < 10; ++t) jobs.push_back(view(static_cast<std::uint32_t>(t + 1), "g", curves[t]));
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(200, 16), out).ok());
    const Assessment& a = out[9];
    BOOST_REQUIRE_MESSAGE((a.reason.code == ReasonCode::hopeless), explain(a));
    BOOST_TEST(a.prediction.widened > 1.0);
    BOOST_TEST(a.reason.b == a.prediction.lower);
    BOOST_TEST(a.reason.c == a.prediction.upper);
}

// The audit keeps a sweep's newest kMaxCalibrationAudits checked forecasts: once enough of its
// curves followed their forecasts, early misses no longer widen its intervals.
BOOST_AUTO_TEST_CASE(forecast_audit_follows_the_newest_forecasts) {
    // 40 trials whose jumps beat their forecasts, then kMaxCalibrationAudits trials that follow
    // theirs: kept whole, the 40 misses (over a tenth) would still widen the intervals.
    Engine e = make();
    const int jumpy = 40, smooth = static_cast<int>(kMaxCalibrationAudits);
    std::vector<std::vector<CurvePoint>> curves[4];
    for (int t = 0; t < jumpy; ++t) {
        curves[0].push_back(plateau_then_jump(8, 1000.0 + 20.0 * t, 0.8, 0.002));
        curves[1].push_back(plateau_then_jump(17, 1000.0 + 20.0 * t, 0.8, 0.002));
    }
    for (int t = 0; t < smooth; ++t) {
        curves[2].push_back(rising(8, 0.9 + 0.0001 * t));
        curves[3].push_back(rising(17, 0.9 + 0.0001 * t));
    }
    std::vector<Assessment> out;
    double widened[4] = {};
    for (int r = 0; r < 4; ++r) {
        std::vector<JobView> jobs;
        for (std::size_t t = 0; t < curves[r].size(); ++t) {
            jobs.push_back(view(static_cast<std::uint32_t>((r < 2 ? 1 : 1000) + t), "g", curves[r][t]));
        }
        BOOST_REQUIRE(e.evaluate(jobs, cluster(100.0 * (r + 1), 16), out).ok());
        widened[r] = out[0].prediction.widened;
    }
    BOOST_TEST(widened[1] > 1.5);   // the jumps beat their forecasts
    BOOST_TEST(widened[2] > 1.5);   // ... and still count while the smooth trials start
    BOOST_TEST(widened[3] == 1.0);  // the newest forecasts held
}

BOOST_AUTO_TEST_CASE(forecast_audit_needs_enough_checked_forecasts) {
    EngineSettings few;
    few.calibration_min_audits = 11;  // ten trials give ten checked forecasts by round 2
    EngineSettings off;
    off.calibration_min_audits = 0;
    Engine audited = make(few), plain = make(off);
    interval_width(audited, "g", true, 8, 100);
    interval_width(plain, "g", true, 8, 100);
    BOOST_TEST(interval_width(audited, "g", true, 17, 200) == interval_width(plain, "g", true, 17, 200));
}

BOOST_AUTO_TEST_CASE(rejects_bad_settings_and_bad_rounds) {
    EngineSettings bad;
    bad.interval_level = 2.0;
    BOOST_TEST(!Engine::create(bad).ok());
    Engine e = make();
    const auto pts = rising(10, 0.9);
    std::vector<JobView> jobs = {view(1, "g", pts), view(1, "g", pts)};
    std::vector<Assessment> out;
    auto r = e.evaluate(jobs, cluster(100, 8), out);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message == "engine round: job 1 listed twice");
    jobs.pop_back();
    r = e.evaluate(jobs, cluster(100, 0), out);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message.find("total_gpus is 0") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(non_exploratory_jobs_keep_a_plain_rank) {
    Engine e = make();
    JobView plain = view(7, "", {}, JobState::pending);
    plain.submit_time = 0;
    std::vector<JobView> jobs = {plain};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(3600, 8), out).ok());
    BOOST_REQUIRE(out.size() == 1u);
    BOOST_TEST(!out[0].exploratory);
    BOOST_TEST((out[0].decision == Decision::run));
    BOOST_TEST((out[0].reason.code == ReasonCode::nonexploratory));
    BOOST_TEST(out[0].utility == 0.0);
    BOOST_TEST(out[0].priority > 1u);
    BOOST_TEST(explain(out[0]).rfind("run: not an exploratory trial", 0) == 0u);
    BOOST_TEST(e.cached_trials() == 0u);
}

BOOST_AUTO_TEST_CASE(a_trial_that_cannot_catch_up_is_hopeless) {
    const auto good = rising(40, 0.95);
    const auto poor = rising(40, 0.55);  // plateaus far below what the other already has
    for (HopelessAction action :
         {HopelessAction::terminate, HopelessAction::requeue_hold, HopelessAction::none}) {
        Engine e = make();
        std::vector<JobView> jobs = {view(1, "g", good), view(2, "g", poor)};
        jobs[1].has_hopeless_action = true;
        jobs[1].hopeless_action = action;
        std::vector<Assessment> out;
        BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 8), out).ok());
        BOOST_TEST((out[0].state == TrialState::promising));
        BOOST_TEST((out[1].state == TrialState::hopeless));
        BOOST_TEST((out[1].reason.code == ReasonCode::hopeless));
        const Decision expected = action == HopelessAction::terminate      ? Decision::terminate
                                  : action == HopelessAction::requeue_hold ? Decision::requeue_hold
                                                                           : Decision::preemptable;
        BOOST_TEST((out[1].decision == expected));
        BOOST_TEST(out[1].priority < out[0].priority);
        BOOST_TEST(explain(out[1]).find("cannot beat the group's best") != std::string::npos);
        BOOST_TEST(out[0].prediction.extrapolated);
        BOOST_TEST(out[0].prediction.lower <= out[0].prediction.value);
        BOOST_TEST(out[0].prediction.value <= out[0].prediction.upper);
    }
}

BOOST_AUTO_TEST_CASE(a_sweep_remembers_the_best_of_trials_that_ended) {
    // The sweep's best trial finishes (leaves the queue) before a poor sibling has run long
    // enough to be judged: the sibling must still be measured against the finished best.
    const auto good = rising(40, 0.95);
    const auto poor_early = rising(10, 0.55);
    const auto poor = rising(40, 0.55);
    EngineSettings s = classic();
    s.early_stop_probability = 0.0;  // the rule at hopeless_min_progress alone
    Engine e = make(s);
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate({view(1, "g", good), view(2, "g", poor_early)}, cluster(1000, 8), out).ok());
    BOOST_TEST((out[1].state != TrialState::hopeless));  // too early to say
    // Trial 1 has ended; trial 2 goes on alone.
    BOOST_REQUIRE(e.evaluate({view(2, "g", poor)}, cluster(2000, 8), out).ok());
    BOOST_TEST((out[0].state == TrialState::hopeless));
    BOOST_TEST(explain(out[0]).find("cannot beat the group's best") != std::string::npos, explain(out[0]));
    // Another sweep is not affected by it.
    BOOST_REQUIRE(e.evaluate({view(3, "other", poor)}, cluster(3000, 8), out).ok());
    BOOST_TEST((out[0].state != TrialState::hopeless));
}

// A trial's last reports often come after the last round saw it (a round every
// PriorityCalcPeriod), and a short trial may start and end between two rounds: the host hands
// the engine the trials that ended with their final curves (record_ended), so that their sweep
// measures the others against what they reached, not what the last round saw.
BOOST_AUTO_TEST_CASE(a_sweep_records_the_final_curves_of_trials_that_ended) {
    const auto seen = rising(10, 0.95);   // what round 1 saw of trial 1: best 0.76
    const auto final = rising(60, 0.95);  // all it reported before it ended: best 0.8725
    const auto other = rising(40, 0.85);  // its sibling, predicted to end at 0.7725
    EngineSettings s = classic();
    s.early_stop_probability = 0.0;
    for (const bool told : {false, true}) {
        BOOST_TEST_CONTEXT("record_ended " << told) {
            Engine e = make(s);
            std::vector<Assessment> out;
            BOOST_REQUIRE(
                e.evaluate({view(1, "g", seen), view(2, "g", rising(10, 0.85))}, cluster(1000, 8), out).ok());
            if (told) e.record_ended({view(1, "g", final, JobState::pending)});
            BOOST_REQUIRE(e.evaluate({view(2, "g", other)}, cluster(2000, 8), out).ok());
            BOOST_TEST((out[0].state == TrialState::hopeless) == told, explain(out[0]));
            if (told)
                BOOST_TEST(explain(out[0]).find("group's best 0.8725") != std::string::npos, explain(out[0]));
            BOOST_TEST(e.cached_trials() == 1u);  // trial 1's fit is gone either way
        }
    }
}

// A trial no round saw (it started and ended between two) is recorded too; views without a
// sweep or points, and a bad curve, record nothing and break nothing.
BOOST_AUTO_TEST_CASE(a_trial_no_round_saw_is_recorded_and_bad_ones_are_not) {
    const auto best = rising(60, 0.95), other = rising(40, 0.85);
    std::vector<CurvePoint> bad = rising(60, 0.99);
    bad[3].step = -5.0;  // steps must not decrease
    EngineSettings s = classic();
    s.early_stop_probability = 0.0;
    Engine e = make(s);
    const auto ungrouped = rising(60, 0.99);
    JobView no_group = view(7, "", ungrouped);  // points are a view: the curve lives above
    e.record_ended({no_group, view(8, "h", {}), view(9, "h", bad)});
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate({view(6, "h", other)}, cluster(1000, 8), out).ok());
    BOOST_TEST((out[0].state != TrialState::hopeless), explain(out[0]));  // nothing recorded
    e.record_ended({view(5, "h", best, JobState::pending)});
    BOOST_REQUIRE(e.evaluate({view(6, "h", other)}, cluster(2000, 8), out).ok());
    BOOST_TEST((out[0].state == TrialState::hopeless), explain(out[0]));
    BOOST_TEST(explain(out[0]).find("group's best 0.8725") != std::string::npos, explain(out[0]));
    BOOST_TEST(e.cached_trials() == 1u);
}

// Their refits count against the round's budget (max_refits_per_round): a flood of ended trials
// costs at most that many fits; past it a trial no round saw records nothing, and the live
// trials still get a refit.
BOOST_AUTO_TEST_CASE(recording_ended_trials_is_bounded_by_the_refit_budget) {
    EngineSettings s = classic();
    s.early_stop_probability = 0.0;
    s.max_refits_per_round = 1;
    Engine e = make(s);
    // the first fits (best 0.7225, below the sibling's forecast); the second, better, is past the budget
    e.record_ended({view(5, "h", rising(60, 0.80)), view(7, "h", rising(60, 0.95))});
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate({view(6, "h", rising(40, 0.85))}, cluster(1000, 8), out).ok());
    BOOST_TEST(e.last_round().fitted == 1u);
    BOOST_TEST((out[0].state != TrialState::hopeless), explain(out[0]));
    BOOST_TEST(explain(out[0]).find("0.8725") == std::string::npos, explain(out[0]));
}

BOOST_AUTO_TEST_CASE(before_hopeless_min_progress_only_decisive_evidence_stops) {
    const auto good = rising(40, 0.95), poor = rising(40, 0.55);
    EngineSettings half_run = classic();
    half_run.early_stop_probability = 0.0;
    Engine e = make(half_run);
    BOOST_TEST(e.settings().hopeless_min_progress == 0.35);
    std::vector<JobView> jobs = {view(1, "g", good), view(2, "g", poor)};
    jobs[1].max_steps = 12000;  // 4000 of 12000 steps done
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 8), out).ok());
    BOOST_TEST((out[1].state != TrialState::hopeless));
    // The defaults: a noiseless curve 0.4 short of the best is decisive evidence from
    // early_stop_progress (0.1) on, and that stop is final even with pausing on.
    Engine d = make(classic());
    BOOST_TEST(d.settings().early_stop_progress == 0.1);
    BOOST_TEST(d.settings().early_stop_probability == 0.001);
    BOOST_TEST(d.settings().pause_probability > 0.0);
    BOOST_REQUIRE(d.evaluate(jobs, cluster(1000, 8), out).ok());
    BOOST_TEST((out[1].state == TrialState::hopeless), explain(out[1]));
    BOOST_TEST((out[1].reason.code == ReasonCode::hopeless_early), explain(out[1]));
    BOOST_TEST((out[1].decision == Decision::requeue_hold),
               explain(out[1]));  // the site's action, not a pause
    BOOST_TEST(out[1].reason.e < 0.001);
    BOOST_TEST(explain(out[1]).find("below early_stop_probability") != std::string::npos, explain(out[1]));
    // ... but not before early_stop_progress: 4000 of 60000 steps
    jobs[1].max_steps = 60000;
    Engine d2 = make(classic());
    BOOST_REQUIRE(d2.evaluate(jobs, cluster(1000, 8), out).ok());
    BOOST_TEST((out[1].state != TrialState::hopeless), explain(out[1]));
    // without max_steps, progress is measured against the group's furthest trial
    auto longer = rising(120, 0.95);
    jobs[0].points = longer;
    jobs[0].max_steps = 0;
    jobs[1].max_steps = 0;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1001, 8), out).ok());
    BOOST_TEST((out[1].state != TrialState::hopeless));
    Engine d3 = make(classic());
    BOOST_REQUIRE(d3.evaluate(jobs, cluster(1001, 8), out).ok());
    BOOST_TEST((out[1].reason.code == ReasonCode::hopeless_early), explain(out[1]));  // 4000 of 12000
}

BOOST_AUTO_TEST_CASE(site_default_hopeless_action_applies) {
    EngineSettings s;
    s.hopeless_action = HopelessAction::terminate;
    Engine e = make(s);
    const auto good = rising(40, 0.95), poor = rising(40, 0.55);
    std::vector<JobView> jobs = {view(1, "g", good), view(2, "g", poor)};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 8), out).ok());
    BOOST_TEST((out[1].decision == Decision::terminate));
}

BOOST_AUTO_TEST_CASE(diverged_and_invalid_reports) {
    Engine e = make();
    auto nan_curve = rising(10, 0.9);
    nan_curve[7].metric = kNaN;
    auto bad = rising(10, 0.9);
    bad[5].step = 1.0;  // goes backwards
    std::vector<JobView> jobs = {view(1, "g", nan_curve), view(2, "g", bad)};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 8), out).ok());
    BOOST_TEST((out[0].state == TrialState::hopeless));
    BOOST_TEST((out[0].reason.code == ReasonCode::diverged));
    BOOST_TEST(out[0].reason.a == 800.0);
    BOOST_TEST((out[0].decision == Decision::requeue_hold));
    BOOST_TEST((out[1].reason.code == ReasonCode::invalid_report));
    BOOST_TEST(out[1].error.find("point 5: step 1") != std::string::npos);
    BOOST_TEST(explain(out[1]).find("decreases") != std::string::npos);
    BOOST_TEST((out[1].decision == Decision::keep));
    BOOST_TEST(e.last_round().invalid == 1u);
}

BOOST_AUTO_TEST_CASE(price_rule_at_low_and_high_load) {
    EngineSettings s = classic();
    s.min_run_s = 600;
    s.protect_leader = false;  // the price rule alone (the weaker one leads the sweep: next test)
    Engine e = make(s);
    const auto a = rising(20, 0.95, 0.6), b = rising(20, 0.93, 0.3), c = rising(20, 0.94, 0.45);
    std::vector<JobView> jobs = {view(1, "g", a, JobState::pending), view(2, "g", b), view(3, "g", c)};
    std::vector<Assessment> out;
    // low load: the price is at its floor L, every useful trial runs
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 100), out).ok());
    BOOST_TEST(e.last_round().utilisation == 0.02, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(e.last_round().price_lower > 0.0);
    for (const auto& x : out) BOOST_TEST(x.utility > 0.0);
    BOOST_TEST((out[0].decision == Decision::run));
    BOOST_TEST((out[1].decision == Decision::keep));
    // full cluster: the price is near U; the weaker running trial becomes preemptable
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 2), out).ok());
    BOOST_TEST(e.last_round().price_now > e.last_round().price_lower);
    const Assessment& weakest = out[1].utility < out[2].utility ? out[1] : out[2];
    BOOST_TEST((weakest.decision == Decision::preemptable));
    BOOST_TEST((weakest.reason.code == ReasonCode::below_price));
    BOOST_TEST(explain(weakest).find("below the GPU price") != std::string::npos);
    // but not while it is in its grace period
    jobs[1].start_time = 4900;
    jobs[2].start_time = 4900;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 2), out).ok());
    const Assessment& graced = out[1].utility < out[2].utility ? out[1] : out[2];
    BOOST_TEST((graced.decision == Decision::keep));
    BOOST_TEST((graced.reason.code == ReasonCode::in_grace));
}

BOOST_AUTO_TEST_CASE(protect_leader_marks_the_running_trial_holding_its_sweeps_best) {
    EngineSettings s = classic();
    s.protect_leader = true;
    Engine e = make(s);
    // b holds the sweep's best observed metric (0.863 at step 2000; a 0.816, c 0.839)
    const auto a = rising(20, 0.95, 0.6), b = rising(20, 0.93, 0.3), c = rising(20, 0.94, 0.45);
    std::vector<JobView> jobs = {view(1, "g", a, JobState::pending), view(2, "g", b), view(3, "g", c)};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 2), out).ok());
    BOOST_REQUIRE((out[1].decision == Decision::preemptable));  // full cluster: below the price
    BOOST_TEST((out[1].reason.code == ReasonCode::leads_sweep));
    BOOST_TEST(out[1].reason.d == b.back().metric, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(out[1].reason.e == c.back().metric, boost::test_tools::tolerance(1e-12));
    BOOST_TEST((out[2].reason.code != ReasonCode::leads_sweep));
    // the assessments name their sweep
    BOOST_TEST(out[0].group == "g");
    BOOST_TEST(out[1].group == "g");
    // a waiting trial below its own price: of another sweep, it does not take the leader's GPUs
    BOOST_REQUIRE(out[0].utility < out[0].price);
    Assessment other = out[0];
    other.group = "h";
    const auto v = e.can_preempt(other, out[1], 3600.0);
    BOOST_TEST(!v.allowed);
    BOOST_TEST(v.reason.find("protect_leader") != std::string::npos, v.reason);
    // of its own sweep, with a forecast and below its own price, it does not either
    const TrialKey k1{1, TrialKey::kNoArrayTask}, k2{2, TrialKey::kNoArrayTask};
    const auto sibling = e.can_preempt(k1, k2);
    BOOST_TEST(!sibling.allowed);
    BOOST_TEST(sibling.reason.find("a trial of its own sweep with a forecast") != std::string::npos,
               sibling.reason);
    // off: the same round marks nobody
    EngineSettings off = classic();
    off.protect_leader = false;
    Engine plain = make(off);
    BOOST_REQUIRE(plain.evaluate(jobs, cluster(5000, 2), out).ok());
    for (const auto& x : out) BOOST_TEST((x.reason.code != ReasonCode::leads_sweep));
}

BOOST_AUTO_TEST_CASE(preemption_between_assessed_jobs) {
    // the utility rule alone: weak holds the sweep's best metric so far, and under protect_leader
    // its sibling below its own price would not take its GPUs (the test above)
    EngineSettings s = classic();
    s.protect_leader = false;
    Engine e = make(s);
    // strong: still far from a higher ceiling; weak: near its lower one
    const auto strong = rising(20, 0.99, 0.8), weak = rising(20, 0.90, 0.2);
    std::vector<JobView> jobs = {view(1, "g", strong, JobState::pending), view(2, "g", weak),
                                 view(3, "", {})};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 2), out).ok());
    BOOST_REQUIRE(out[0].utility > 1.25 * out[1].utility);
    BOOST_REQUIRE((out[1].decision == Decision::preemptable));
    const TrialKey k1{1, TrialKey::kNoArrayTask}, k2{2, TrialKey::kNoArrayTask},
        k3{3, TrialKey::kNoArrayTask}, k9{9, TrialKey::kNoArrayTask};
    BOOST_TEST(e.can_preempt(k1, k2).allowed);
    BOOST_TEST(!e.can_preempt(k2, k1).allowed);
    BOOST_TEST(!e.can_preempt(k1, k3).allowed);  // non-exploratory
    auto missing = e.can_preempt(k9, k2);
    BOOST_TEST(!missing.allowed);
    BOOST_TEST(missing.reason == "job 9 was not assessed");
    BOOST_REQUIRE(e.find(k2) != nullptr);
    BOOST_TEST(e.find(k2)->utility == out[1].utility);
}

BOOST_AUTO_TEST_CASE(asha_decides_while_curves_are_short) {
    EngineSettings s = classic();
    s.min_points_to_fit = 6;
    Engine e = make(s);
    // three points each, milestone at step 200: ranks by the metric there
    std::vector<std::vector<CurvePoint>> curves;
    for (int k = 0; k < 6; ++k) curves.push_back(rising(3, 0.80 + 0.02 * k));
    std::vector<JobView> jobs;
    for (std::uint32_t k = 0; k < 6; ++k) {
        jobs.push_back(view(k + 1, "sweep", curves[k]));
        jobs.back().milestones = {200.0};
    }
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 16), out).ok());
    for (std::size_t k = 0; k < 6; ++k) {
        BOOST_TEST((out[k].state == TrialState::unknown));
        const bool top = k >= 4;  // the best two of six survive eta = 3
        BOOST_TEST((out[k].reason.code == (top ? ReasonCode::asha_promoted : ReasonCode::asha_behind)));
        BOOST_TEST((out[k].decision == (top ? Decision::keep : Decision::preemptable)));
    }
    BOOST_TEST(out[5].priority > out[0].priority);
    BOOST_TEST(explain(out[0]).find("outside the top 1/3") != std::string::npos);
    // the same round again answers the same (from the group's memo) ...
    std::vector<Assessment> again;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5001, 16), again).ok());
    for (std::size_t k = 0; k < 6; ++k) BOOST_TEST((again[k].reason.code == out[k].reason.code));
    // ... and a trial whose curve changes is re-ranked: trial 1 now leads at the milestone
    curves[0] = rising(3, 0.99);
    jobs[0].points = curves[0];
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5002, 16), again).ok());
    BOOST_TEST((again[0].reason.code == ReasonCode::asha_promoted));
    BOOST_TEST((again[4].reason.code == ReasonCode::asha_behind));
    // before any milestone: too few points, runs to learn more
    auto one = rising(1, 0.9);
    std::vector<JobView> fresh = {view(50, "new", one, JobState::pending)};
    BOOST_REQUIRE(e.evaluate(fresh, cluster(5000, 16), out).ok());
    BOOST_TEST((out[0].reason.code == ReasonCode::too_few_points));
    BOOST_TEST((out[0].decision == Decision::run));
}

BOOST_AUTO_TEST_CASE(behind_at_a_milestone_short_curves_are_stopped_when_asked) {
    // milestone_stop_unpredicted (and no progress floor): too short to predict and behind its
    // sweep at a milestone, a trial is stopped as ASHA stops it; the top 1/eta go on.
    EngineSettings s;
    s.min_points_to_fit = 6;
    s.milestone_stop_unpredicted = true;
    s.hopeless_min_progress = 0.0;
    s.pause_probability = 0.0;  // with pause on they are paused instead (test_sched_pause)
    Engine e = make(s);
    std::vector<std::vector<CurvePoint>> curves;
    for (int k = 0; k < 6; ++k) curves.push_back(rising(3, 0.80 + 0.02 * k));
    std::vector<JobView> jobs;
    for (std::uint32_t k = 0; k < 6; ++k) {
        jobs.push_back(view(k + 1, "sweep", curves[k], k == 1 ? JobState::pending : JobState::running));
        jobs.back().milestones = {200.0};
    }
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 16), out).ok());
    for (std::size_t k = 0; k < 6; ++k) {
        const bool top = k >= 4;
        BOOST_TEST((out[k].state == (top ? TrialState::unknown : TrialState::hopeless)), k);
        BOOST_TEST(
            (out[k].reason.code == (top ? ReasonCode::asha_promoted : ReasonCode::behind_at_milestone)), k);
        BOOST_TEST((out[k].decision == (top ? Decision::keep : Decision::requeue_hold)), k);
    }
    BOOST_TEST(explain(out[0]).find("rank 6 of 6") != std::string::npos, explain(out[0]));
    BOOST_TEST(explain(out[0]).find("too early to predict") != std::string::npos, explain(out[0]));
    BOOST_TEST(out[0].priority < out[5].priority);
    // The default: the ranking at a milestone alone only makes a trial preemptable (a slow
    // starter is often a sweep's best)
    EngineSettings d;
    d.min_points_to_fit = 6;
    Engine off = make(d);
    BOOST_REQUIRE(off.evaluate(jobs, cluster(5000, 16), out).ok());
    BOOST_TEST((out[0].reason.code == ReasonCode::asha_behind));
    BOOST_TEST((out[0].decision == Decision::preemptable));
}

BOOST_AUTO_TEST_CASE(behind_at_a_milestone_is_stopped_only_when_the_prediction_agrees) {
    EngineSettings s;
    s.milestone_stop_probability = 0.2;  // the rule is off by default (the aggressive profile's)
    s.min_expected_gain = 0.0;           // the milestone rule alone
    s.hopeless_min_progress = 0.0;       // a third of the run is enough here
    s.hopeless_probability = 0.0;        // not the extrapolation rule
    Engine e = make(s);
    // At step 1000 the leader is ahead of both others; the late bloomer learns faster and is
    // predicted to end above the leader's best; the poor one is not.
    const auto leader = rising(20, 0.95, 0.3), bloomer = rising(20, 1.10, 1.2), poor = rising(20, 0.80, 0.3);
    std::vector<JobView> jobs = {view(1, "g", leader), view(2, "g", bloomer), view(3, "g", poor)};
    for (auto& j : jobs) j.milestones = {1000.0};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 16), out).ok());
    BOOST_TEST((out[0].state == TrialState::promising));
    BOOST_TEST((out[1].state == TrialState::promising), explain(out[1]));
    BOOST_TEST((out[2].state == TrialState::hopeless));
    BOOST_TEST((out[2].reason.code == ReasonCode::behind_at_milestone));
    BOOST_TEST(out[2].reason.e < s.milestone_stop_probability);
    BOOST_TEST(explain(out[2]).find("rank 3 of 3") != std::string::npos, explain(out[2]));
    BOOST_TEST(explain(out[2]).find("chance of") != std::string::npos, explain(out[2]));
    // Before hopeless_min_progress the classic rule alone would not stop it (without the early rule),
    // nor would the milestone rule under the default settings: what stops it there is the decisive
    // early rule (a noiseless curve far behind), not its rank.
    EngineSettings half_run = classic();
    half_run.early_stop_probability = 0.0;
    Engine off = make(half_run);
    BOOST_REQUIRE(off.evaluate(jobs, cluster(5000, 16), out).ok());
    BOOST_TEST((out[2].state != TrialState::hopeless));
    Engine defaults = make();
    BOOST_REQUIRE(defaults.evaluate(jobs, cluster(5000, 16), out).ok());
    BOOST_TEST((out[2].reason.code == ReasonCode::hopeless_early), explain(out[2]));
    BOOST_TEST((out[1].state == TrialState::promising), explain(out[1]));
}

BOOST_AUTO_TEST_CASE(a_milestone_ranks_against_trials_that_ended) {
    EngineSettings s;
    s.milestone_stop_probability = 0.2;
    s.min_expected_gain = 0.0;
    s.hopeless_min_progress = 0.0;
    s.hopeless_probability = 0.0;
    Engine e = make(s);
    const auto good = rising(20, 0.95, 0.3), poor = rising(12, 0.80, 0.3);
    std::vector<JobView> first = {view(1, "g", good)};
    first[0].milestones = {1000.0};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(first, cluster(1000, 16), out).ok());
    // Trial 1 has ended; trial 2 reaches the milestone alone and still ranks behind it.
    std::vector<JobView> second = {view(2, "g", poor)};
    second[0].milestones = {1000.0};
    BOOST_REQUIRE(e.evaluate(second, cluster(2000, 16), out).ok());
    BOOST_TEST((out[0].reason.code == ReasonCode::behind_at_milestone), explain(out[0]));
    BOOST_TEST(explain(out[0]).find("rank 2 of 2") != std::string::npos, explain(out[0]));
}

BOOST_AUTO_TEST_CASE(a_trial_expected_to_add_nothing_to_its_sweep_is_stopped) {
    // The leader has finished its run (and is never stopped); its near twin, two thirds
    // through, is predicted to end just below it: finishing it is expected to improve the
    // sweep's best by far less than min_expected_gain of the sweep's range.
    const auto leader = rising(60, 0.95), twin = rising(40, 0.947), better = rising(40, 1.10);
    const auto other_leader = rising(60, 0.95);  // views do not own their points
    EngineSettings on;
    on.min_expected_gain = 0.02;
    Engine e = make(on);
    std::vector<JobView> jobs = {view(1, "g", leader), view(2, "g", twin), view(3, "h", other_leader),
                                 view(4, "h", better)};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 16), out).ok());
    BOOST_TEST((out[0].state != TrialState::hopeless));
    BOOST_TEST((out[1].state == TrialState::hopeless), explain(out[1]));
    BOOST_TEST((out[1].reason.code == ReasonCode::negligible_gain));
    BOOST_TEST(out[1].reason.a < out[1].reason.b);
    BOOST_TEST(explain(out[1]).find("expected to improve the group's best") != std::string::npos,
               explain(out[1]));
    // a sibling predicted to beat the leader clearly goes on
    BOOST_TEST((out[3].state == TrialState::promising), explain(out[3]));
    // the default (0.005) stops the near twin too
    Engine dflt = make();
    BOOST_REQUIRE(dflt.evaluate(jobs, cluster(5000, 16), out).ok());
    BOOST_TEST((out[1].reason.code == ReasonCode::negligible_gain), explain(out[1]));
    BOOST_TEST((out[3].state == TrialState::promising), explain(out[3]));
    // min_expected_gain = 0: the rule is off
    EngineSettings off;
    off.min_expected_gain = 0.0;
    Engine kept = make(off);
    BOOST_REQUIRE(kept.evaluate(jobs, cluster(5000, 16), out).ok());
    BOOST_TEST((out[1].reason.code != ReasonCode::negligible_gain));
    BOOST_TEST((out[1].state != TrialState::hopeless), explain(out[1]));
}

BOOST_AUTO_TEST_CASE(a_costly_trial_with_a_small_chance_is_stopped_when_the_site_says_so) {
    // A 64-GPU trial two thirds through (4,000 of 6,000 steps at 10 steps/s: 200 s, 3.56 GPU-hours
    // left) predicted to end a little below its sweep's finished leader: a chance to win above
    // hopeless_probability, but not one worth 3.56 GPU-hours at chance_worth_gpu_hours = 1.
    const auto leader = rising(60, 0.95), trailer = rising(40, 0.947);
    std::vector<JobView> jobs = {view(1, "g", leader), view(2, "g", trailer)};
    jobs[0].gpus = 64;
    jobs[1].gpus = 64;
    std::vector<Assessment> out;
    // the cost rule alone (the trailer's expected gain is below the default min_expected_gain)
    Engine defaults = make(classic());
    BOOST_REQUIRE(defaults.evaluate(jobs, cluster(5000, 128), out).ok());
    BOOST_TEST((out[1].state == TrialState::promising), explain(out[1]));

    EngineSettings on = classic();
    on.chance_worth_gpu_hours = 1.0;
    Engine e = make(on);
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 128), out).ok());
    BOOST_TEST((out[0].state != TrialState::hopeless), explain(out[0]));  // the leader runs on
    BOOST_TEST((out[1].state == TrialState::hopeless), explain(out[1]));
    BOOST_TEST((out[1].reason.code == ReasonCode::costly_chance), explain(out[1]));
    BOOST_TEST(out[1].reason.a > on.hopeless_probability);
    BOOST_TEST(out[1].reason.a < on.pause_probability);
    BOOST_TEST(out[1].reason.b == 2000.0 / 10.0 * 64.0 / 3600.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(explain(out[1]).find("its run still needs") != std::string::npos, explain(out[1]));

    // worth more than its remaining GPU-hours buy at its chance: kept
    on.chance_worth_gpu_hours = 3.56 / out[1].reason.a * 1.5;
    Engine worth = make(on);
    BOOST_REQUIRE(worth.evaluate(jobs, cluster(5000, 128), out).ok());
    BOOST_TEST((out[1].state == TrialState::promising), explain(out[1]));
}

BOOST_AUTO_TEST_CASE(finished_trials_are_kept) {
    Engine e = make();
    auto pts = rising(20, 0.9);
    JobView v = view(1, "g", pts);
    v.max_steps = 2000;
    std::vector<JobView> jobs = {v};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(100, 8), out).ok());
    BOOST_TEST((out[0].reason.code == ReasonCode::finished));
    BOOST_TEST((out[0].decision == Decision::keep));
}

BOOST_AUTO_TEST_CASE(same_rounds_same_answers_and_incremental_updates) {
    auto pts = rising(30, 0.9);
    auto other = rising(30, 0.92, 0.4);
    Engine a = make(), b = make();
    std::vector<Assessment> oa, ob;
    for (int n = 10; n <= 30; n += 5) {
        std::vector<CurvePoint> p1(pts.begin(), pts.begin() + n), p2(other.begin(), other.begin() + n);
        std::vector<JobView> jobs = {view(1, "g", p1), view(2, "g", p2, JobState::pending)};
        BOOST_REQUIRE(a.evaluate(jobs, cluster(100.0 * n, 4), oa).ok());
        BOOST_REQUIRE(b.evaluate(jobs, cluster(100.0 * n, 4), ob).ok());
        BOOST_TEST(a.last_round().fitted == 2u);
        for (std::size_t i = 0; i < oa.size(); ++i) {
            BOOST_TEST(oa[i].priority == ob[i].priority);
            BOOST_TEST(oa[i].utility == ob[i].utility);
            BOOST_TEST(oa[i].prediction.value == ob[i].prediction.value);
            BOOST_TEST((oa[i].decision == ob[i].decision));
        }
        // an unchanged round refits nothing
        BOOST_REQUIRE(a.evaluate(jobs, cluster(100.0 * n + 1, 4), oa).ok());
        BOOST_REQUIRE(b.evaluate(jobs, cluster(100.0 * n + 1, 4), ob).ok());
        BOOST_TEST(a.last_round().fitted == 0u);
    }
    // trials that leave are forgotten
    std::vector<JobView> none;
    BOOST_REQUIRE(a.evaluate(none, cluster(1e4, 4), oa).ok());
    BOOST_TEST(a.cached_trials() == 0u);
}

BOOST_AUTO_TEST_CASE(array_tasks_are_separate_trials) {
    Engine e = make();
    const auto p = rising(10, 0.9), q = rising(10, 0.8);
    JobView t0 = view(100, "arr", p), t1 = view(100, "arr", q);
    t0.key.array_task = 0;
    t1.key.array_task = 1;
    std::vector<JobView> jobs = {t0, t1};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(100, 8), out).ok());
    BOOST_TEST(e.cached_trials() == 2u);
    BOOST_TEST(e.find(TrialKey{100, 1}) != nullptr);
    BOOST_TEST(to_string(out[1].key) == "100_1");
}

BOOST_AUTO_TEST_CASE(starving_jobs_rise) {
    EngineSettings s;
    s.max_age_s = 3600;
    Engine e = make(s);
    const auto good = rising(40, 0.95), poor = rising(40, 0.93, 0.2);
    JobView old_poor = view(2, "g", poor, JobState::pending);
    old_poor.submit_time = 0;
    JobView young = view(3, "", {}, JobState::pending);
    young.submit_time = 10000;
    std::vector<JobView> jobs = {view(1, "g", good), old_poor, young};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(10000, 2), out).ok());
    // the old pending trial has waited past max_age: it ranks at least like a job at the price
    BOOST_TEST(out[1].priority >= out[2].priority);
}

BOOST_AUTO_TEST_CASE(a_faster_gpu_type_raises_utility) {
    ThroughputTable table;
    table.set("resnet", "k80", 1.0);
    table.set("resnet", "v100", 4.0);
    auto created = Engine::create(EngineSettings{}, table);
    BOOST_REQUIRE(created.ok());
    Engine e = std::move(created.value());
    const auto pts = rising(20, 0.95);
    JobView on_k80 = view(1, "g", pts, JobState::pending);
    on_k80.max_steps = 0;  // unknown: nothing caps the faster trial's progress
    on_k80.job_type = "resnet";
    on_k80.gpu_type = "k80";
    on_k80.measured_gpu_type = "k80";
    JobView on_v100 = on_k80;
    on_v100.key.job_id = 2;
    on_v100.gpu_type = "v100";
    std::vector<JobView> jobs = {on_k80, on_v100};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(100, 8), out).ok());
    // 4x the steps in the same time buys more progress (less than 4x: the curve flattens)
    BOOST_TEST(out[1].utility > 1.2 * out[0].utility);
    BOOST_TEST(out[1].gpu_type == "v100");
    BOOST_TEST((out[1].gpu_value.how == GpuValuation::scaled));
    BOOST_TEST(out[1].gpu_value.ratio == 4.0);
    BOOST_TEST(out[1].measured_gpu_type == "k80");
    BOOST_TEST((out[0].gpu_value.how == GpuValuation::same_type));
    BOOST_TEST(out[0].measured_gpu_type.empty());
    // measured on the type it is valued on: no scaling
    jobs[1].measured_gpu_type = "v100";
    BOOST_REQUIRE(e.evaluate(jobs, cluster(100, 8), out).ok());
    BOOST_TEST(out[1].utility == out[0].utility, boost::test_tools::tolerance(1e-9));
    BOOST_TEST((out[1].gpu_value.how == GpuValuation::same_type));
    // a model the table lacks: the documented fallback, no scaling, and it says so
    jobs[1].measured_gpu_type = "k80";
    jobs[1].job_type = "no such model";
    BOOST_REQUIRE(e.evaluate(jobs, cluster(100, 8), out).ok());
    BOOST_TEST(out[1].utility == out[0].utility, boost::test_tools::tolerance(1e-9));
    BOOST_TEST((out[1].gpu_value.how == GpuValuation::model_not_in_table));
}

BOOST_AUTO_TEST_CASE(more_gpus_for_the_same_progress_is_worth_less_per_gpu) {
    Engine e = make();
    const auto pts = rising(20, 0.95);
    JobView one = view(1, "g", pts), four = view(2, "g", pts);
    four.gpus = 4;
    std::vector<JobView> jobs = {one, four};
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(100, 8), out).ok());
    BOOST_TEST(out[1].utility == out[0].utility / 4, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_SUITE_END()
