#define BOOST_TEST_MODULE test_sched_engine_pooled_audit
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/sched/engine.hpp"

using namespace explsched;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An accuracy curve that idles near 0.1 until `drop_step`, then jumps to `after` (a plateau that
// ends: the engine's forecasts fall short of it); points every 100 steps.
std::vector<CurvePoint> plateau_then_jump(int n, double drop_step, double after) {
    std::vector<CurvePoint> pts;
    for (int i = 1; i <= n; ++i) {
        const double step = 100.0 * i;
        const double level = step < drop_step ? 0.1 + 0.01 * std::log(step / 100.0) : after;
        pts.push_back({step, level + 0.002 * ((i % 3) - 1), 10.0 * i, kNaN});
    }
    return pts;
}

struct Sweep {
    std::string group, model;
    std::uint32_t first_id;
    int trials;
};

// One round over the sweeps, every curve cut at n points; the assessments in job order.
std::vector<Assessment> round(Engine& e, const std::vector<Sweep>& sweeps, int n, double now) {
    std::vector<std::vector<CurvePoint>> curves;
    for (const Sweep& s : sweeps) {
        for (int t = 0; t < s.trials; ++t)
            curves.push_back(plateau_then_jump(n, 1000.0 + 100.0 * t, 0.8 + 0.01 * t));
    }
    std::vector<JobView> jobs;
    std::size_t c = 0;
    for (const Sweep& s : sweeps) {
        for (int t = 0; t < s.trials; ++t) {
            JobView v;
            v.key = TrialKey{s.first_id + static_cast<std::uint32_t>(t), TrialKey::kNoArrayTask};
            v.group = s.group;
            v.job_type = s.model;
            v.direction = Direction::maximize;
            v.max_steps = 6000;
            v.state = JobState::running;
            v.start_time = 1;
            v.points = curves[c++];
            jobs.push_back(v);
        }
    }
    ClusterView cluster;
    cluster.now = now;
    cluster.total_gpus = 32;
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster, out).ok());
    return out;
}

// A smooth accuracy curve rising to `top` (time constant 500 steps), points every 100 steps: the
// engine's forecasts of it hold.
std::vector<CurvePoint> smooth(int n, double top) {
    std::vector<CurvePoint> pts;
    for (int i = 1; i <= n; ++i) {
        const double step = 100.0 * i;
        pts.push_back({step, top * (1.0 - std::exp(-step / 500.0)) + 0.001 * ((i % 3) - 1), 10.0 * i, kNaN});
    }
    return pts;
}

// One round over one sweep of five trials (ids 1..5; trial 5 tops out far below the others),
// every curve cut at n points (of 60); the assessments in job order.
std::vector<Assessment> smooth_round(Engine& e, int n, double now, bool jump) {
    std::vector<std::vector<CurvePoint>> curves;  // the views below point into these
    for (std::uint32_t t = 0; t < 5; ++t) {
        curves.push_back(jump && t < 4 ? plateau_then_jump(n, 900.0 + 100.0 * t, 0.9)
                                       : smooth(n, t == 4 ? 0.3 : 0.9 + 0.01 * t));
    }
    std::vector<JobView> jobs;
    for (std::uint32_t t = 0; t < 5; ++t) {
        JobView v;
        v.key = TrialKey{t + 1, TrialKey::kNoArrayTask};
        v.group = "s";
        v.job_type = "mlp";
        v.direction = Direction::maximize;
        v.max_steps = 6000;
        v.state = JobState::running;
        v.start_time = 1;
        v.points = curves[t];
        jobs.push_back(v);
    }
    ClusterView cluster;
    cluster.now = now;
    cluster.total_gpus = 32;
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster, out).ok());
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(engine_pooled_audit)

// A sweep of 3 trials never gets calibration_min_audits (8) checked forecasts of its own in two
// rounds; it reads the pooled audit of its application's earlier sweep (same owner, same
// --explore-model) and gets that sweep's widening. A sweep of another model does not, nor one
// without a model, nor anything with the audit off.
BOOST_AUTO_TEST_CASE(a_small_sweep_reads_its_applications_pooled_audit) {
    for (bool audit_on : {true, false}) {
        EngineSettings s;
        if (!audit_on) s.calibration_min_audits = 0;
        auto made = Engine::create(s);
        BOOST_REQUIRE(made.ok());
        Engine e = std::move(made.value());
        const Sweep big{"g", "resnet", 1, 10};
        round(e, {big}, 8, 100);
        const auto r2 = round(e, {big}, 17, 200);  // ten forecasts came due and were beaten
        const double big_widen = r2[0].prediction.widened;
        const Sweep same{"h", "resnet", 100, 3}, other{"k", "bert", 200, 3}, none{"n", "", 300, 3};
        round(e, {big, same, other, none}, 8, 300);
        const auto r4 = round(e, {big, same, other, none}, 12, 400);  // not due yet: 12 < 16 points
        // jobs 10..12: "h", 13..15: "k", 16..18: "n"
        if (audit_on) {
            BOOST_TEST(big_widen > 1.5);
            BOOST_TEST(r4[10].prediction.widened > 1.5);
            BOOST_TEST(r4[10].prediction.widened == r4[0].prediction.widened);
        } else {
            BOOST_TEST(r4[10].prediction.widened == 1.0);
        }
        BOOST_TEST(r4[13].prediction.widened == 1.0);
        BOOST_TEST(r4[16].prediction.widened == 1.0);
    }
}

// Held forecasts are read earlier: in a sweep of smooth curves, the forecasts made at 10 % of the
// runs (6 points) come due at 20 % and hold, so the trial that tops out at 0.3 (the others pass
// 0.78 by then) is judged hopeless at 20 % of its run, not at hopeless_min_progress (35 %; the
// decisive early stop, which would catch a trial this far behind, is off here). Not
// with audited_min_progress off, nor in a sweep whose curves jumped past their forecasts (a
// plateau that ended: the checks did not hold), nor with the audit off.
BOOST_AUTO_TEST_CASE(a_sweep_whose_forecasts_held_is_judged_from_audited_min_progress) {
    struct Case {
        const char* what;
        double audited;
        std::size_t min_audits;
        bool jump;
        bool judged;
    };
    for (const Case& c : {Case{"held", 0.15, 8, false, true}, Case{"off", 1.0, 8, false, false},
                          Case{"beaten", 0.15, 8, true, false}, Case{"no audit", 0.15, 0, false, false}}) {
        BOOST_TEST_CONTEXT(c.what) {
            EngineSettings s;
            s.audited_min_progress = c.audited;
            s.calibration_min_audits = c.min_audits;
            s.early_stop_probability = 0.0;  // no decisive early stop: the rule at its progress alone
            auto made = Engine::create(s);
            BOOST_REQUIRE(made.ok());
            Engine e = std::move(made.value());
            const auto r1 = smooth_round(e, 6, 1000, c.jump);  // 10 %: forecasts of 20 % made
            BOOST_TEST((r1[4].state != TrialState::hopeless));
            const auto r2 = smooth_round(e, 12, 2000, c.jump);  // 20 %: they came due
            BOOST_TEST((r2[4].state == TrialState::hopeless) == c.judged);
            if (c.judged)
                BOOST_TEST(describe(r2[4].decision, r2[4].reason).find("cannot beat the group's best") !=
                           std::string::npos);
            for (int t = 0; t < 4; ++t)
                BOOST_TEST((r2[static_cast<std::size_t>(t)].state != TrialState::hopeless));
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
