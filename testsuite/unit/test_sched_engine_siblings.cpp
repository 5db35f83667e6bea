#define BOOST_TEST_MODULE test_sched_engine_siblings
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/sched/engine.hpp"

using namespace explsched;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMaxSteps = 6000.0;

// An accuracy curve that idles near 0.1 until step 3000 (half its run), then jumps to `after` (a
// learning-rate drop); n points every 100 steps; `offset` shifts the plateau.
std::vector<CurvePoint> drop_at_half(int n, double after, double offset = 0.0) {
    std::vector<CurvePoint> pts;
    for (int i = 1; i <= n; ++i) {
        const double step = 100.0 * i;
        const double level = step < 3000.0 ? offset + 0.1 + 0.01 * std::log(step / 100.0) : after;
        pts.push_back({step, level + 0.002 * ((i % 3) - 1), 10.0 * i, kNaN});
    }
    return pts;
}

JobView job(std::uint32_t id, const std::vector<CurvePoint>& points) {
    JobView v;
    v.key = TrialKey{id, TrialKey::kNoArrayTask};
    v.group = "g";
    v.job_type = "resnet";
    v.direction = Direction::maximize;
    v.max_steps = kMaxSteps;
    v.state = JobState::running;
    v.start_time = 1;
    v.points = points;
    return v;
}

// The engine's forecast of trial 100's final metric after three rounds: its siblings 1..5 ran
// their whole curves (listed in rounds 1 and 2, ended in round 3); trial 100 is at 40 % of its
// run, on the plateau its siblings left at 50 %, one point further each round.
std::vector<Prediction> forecasts(const EngineSettings& s) {
    auto made = Engine::create(s);
    BOOST_REQUIRE(made.ok());
    Engine e = std::move(made.value());
    std::vector<std::vector<CurvePoint>> sibs;
    for (int t = 0; t < 5; ++t) sibs.push_back(drop_at_half(60, 0.8 + 0.01 * t));
    std::vector<Prediction> out;
    for (int r = 0; r < 3; ++r) {
        const auto mine = drop_at_half(24 + r, 0.0);
        std::vector<JobView> jobs;
        if (r < 2) {
            for (int t = 0; t < 5; ++t) jobs.push_back(job(static_cast<std::uint32_t>(t + 1), sibs[t]));
        }
        jobs.push_back(job(100, mine));
        ClusterView cluster;
        cluster.now = 100.0 * (r + 1);
        cluster.total_gpus = 32;
        std::vector<Assessment> a;
        BOOST_REQUIRE(e.evaluate(jobs, cluster, a).ok());
        out.push_back(a.back().prediction);
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(engine_siblings)

// The trial's own fit sees only the plateau and forecasts about where it is; its siblings went
// from that plateau to 0.8 and more, so with the sibling prior (the default) its forecast moves up
// toward theirs, whether the siblings are running (round 2) or ended (round 3). Its optimistic
// bound is never below its own fit's. Without the prior (sibling_prior_weight=0) it stays put.
BOOST_AUTO_TEST_CASE(a_trial_forecast_moves_toward_its_siblings_shape) {
    EngineSettings on;
    on.sibling_prior_weight = 1.5;  // the benchmarked weight (off by default)
    on.calibration_min_audits = 0;  // no audit widening: the two runs differ in the prior alone
    EngineSettings off = on;
    off.sibling_prior_weight = 0.0;
    const auto with = forecasts(on), without = forecasts(off);
    for (std::size_t r = 1; r < 3; ++r) {
        BOOST_TEST_CONTEXT("round " << r + 1) {
            BOOST_REQUIRE(std::isfinite(without[r].value));
            BOOST_TEST(without[r].value < 0.4);                  // the own fit: the plateau goes on
            BOOST_TEST(with[r].value > without[r].value + 0.2);  // the siblings' jump
            BOOST_TEST(with[r].upper >= without[r].upper);
        }
    }
    // round 1: the trial is new (not in its sweep yet when its forecast is made): its own fit
    BOOST_TEST(with[0].value == without[0].value);
}

namespace {

// The assessment of trial 100 (at 40 % of its run, on the plateau its sweep's other trials left
// with a jump to 0.8 at half of theirs) once its siblings have ended.
Assessment plateau_trial(const EngineSettings& s, double offset = 0.0) {
    auto made = Engine::create(s);
    BOOST_REQUIRE(made.ok());
    Engine e = std::move(made.value());
    std::vector<Assessment> a;
    const auto sibs = drop_at_half(60, 0.8);  // JobView.points refers to these: kept alive
    for (int r = 0; r < 3; ++r) {
        std::vector<JobView> jobs;
        if (r < 2) {
            for (int t = 0; t < 5; ++t) jobs.push_back(job(static_cast<std::uint32_t>(t + 1), sibs));
        }
        const auto mine = drop_at_half(24 + r, 0.0, offset);
        jobs.push_back(job(100, mine));
        ClusterView cluster;
        cluster.now = 100.0 * (r + 1);
        cluster.total_gpus = 32;
        BOOST_REQUIRE(e.evaluate(jobs, cluster, a).ok());
    }
    return a.back();
}

}  // namespace

// Without sibling_jumps the plateau trial's own fit says it cannot beat its siblings' 0.8: it is
// hopeless. With it, its optimistic bound allows for the siblings' jump (about 0.7 of metric) it
// has not met yet: it stays promising, and the assessment says by how much the bound moved. Its
// utility (its priority against other jobs) still reads its own forecast.
BOOST_AUTO_TEST_CASE(sibling_jumps_keep_a_trial_before_the_jump_its_siblings_made) {
    EngineSettings off;
    off.calibration_min_audits = 0;
    off.pause_probability = 0.0;  // the hopeless rule alone
    EngineSettings on = off;
    on.sibling_jumps = true;
    const Assessment without = plateau_trial(off), with = plateau_trial(on);
    BOOST_TEST(std::string(to_string(without.state)) == "hopeless");
    BOOST_TEST(without.prediction.jump_allowance == 0.0);
    BOOST_TEST(std::string(to_string(with.state)) == "promising");
    BOOST_TEST(with.prediction.jump_allowance > 0.5);
    BOOST_TEST(with.prediction.jump_allowance < 0.8);
    BOOST_TEST(with.prediction.upper == without.prediction.upper + with.prediction.jump_allowance,
               boost::test_tools::tolerance(1e-9));
    BOOST_TEST(with.prediction.value == without.prediction.value);  // the forecast itself is its own
    BOOST_TEST(with.utility == without.utility);  // and so is its priority: the bound only saves it
}

// A trial that made the jump itself gets no allowance for it.
BOOST_AUTO_TEST_CASE(sibling_jumps_allow_nothing_for_a_jump_the_trial_made) {
    EngineSettings on;
    on.calibration_min_audits = 0;
    on.sibling_jumps = true;
    auto made = Engine::create(on);
    BOOST_REQUIRE(made.ok());
    Engine e = std::move(made.value());
    std::vector<Assessment> a;
    const auto sibs = drop_at_half(60, 0.8);
    for (int r = 0; r < 2; ++r) {
        std::vector<JobView> jobs;
        for (int t = 0; t < 5; ++t) jobs.push_back(job(static_cast<std::uint32_t>(t + 1), sibs));
        const auto mine = drop_at_half(40 + r, 0.5);  // jumped to 0.5 at half its run
        jobs.push_back(job(100, mine));
        ClusterView cluster;
        cluster.now = 100.0 * (r + 1);
        cluster.total_gpus = 32;
        BOOST_REQUIRE(e.evaluate(jobs, cluster, a).ok());
    }
    BOOST_TEST(a.back().prediction.jump_allowance == 0.0);
}

// The best track: the plateau trial whose plateau runs 0.05 above the one its siblings left for
// the sweep's best (0.8) is on course to beat that best, whatever its own fit says: with the
// default best_track_margin (0.03 of the sweep's range, about 0.02 here) it is promising, and its
// prediction says by how much it leads and the chance that gives it. The same trial on its
// siblings' plateau, or behind it, or with the rule off, is hopeless on its own forecast.
BOOST_AUTO_TEST_CASE(a_trial_ahead_of_its_sweeps_best_track_is_not_hopeless) {
    EngineSettings on;
    on.calibration_min_audits = 0;
    on.pause_probability = 0.0;  // the hopeless rule alone
    BOOST_REQUIRE(on.best_track_margin == 0.03);
    EngineSettings off = on;
    off.best_track_margin = 0.0;
    const Assessment ahead = plateau_trial(on, 0.05), ahead_off = plateau_trial(off, 0.05),
                     level = plateau_trial(on, 0.0), behind = plateau_trial(on, -0.05);
    BOOST_TEST(std::string(to_string(ahead_off.state)) == "hopeless");
    BOOST_TEST(ahead_off.prediction.track_lead == 0.0);
    BOOST_TEST(std::string(to_string(ahead.state)) == "promising");
    BOOST_TEST(ahead.prediction.track_lead == 0.05, boost::test_tools::tolerance(0.01));
    BOOST_TEST(ahead.prediction.track_chance > 0.9);
    BOOST_TEST(ahead.prediction.value == ahead_off.prediction.value);  // its own forecast is kept
    BOOST_TEST(ahead.utility > ahead_off.utility);  // its chance, read from the lead, is higher
    for (const Assessment* a : {&level, &behind}) {
        BOOST_TEST(std::string(to_string(a->state)) == "hopeless");
        BOOST_TEST(a->prediction.track_lead == 0.0);
    }
}

BOOST_AUTO_TEST_SUITE_END()
