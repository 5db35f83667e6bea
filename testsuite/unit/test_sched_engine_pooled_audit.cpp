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
// Owned sweeps (`group` of `owner`, trial ids first_id..first_id+4) may be added to the round.
struct OwnedSweep {
    std::string group;
    std::uint32_t owner, first_id;
    int n;  // points of each curve this round
};

// How the poor trial (id 5) of sweep "s" stands this round: running with no pause spent (the
// default), running with its pauses spent, or pending (released from a pause, not restarted yet).
enum class Poor { running, pauses_spent, pending };

std::vector<Assessment> smooth_round(Engine& e, int n, double now, bool jump,
                                     const std::vector<OwnedSweep>& more = {}, Poor poor = Poor::running) {
    std::vector<std::vector<CurvePoint>> curves;  // the views below point into these
    for (std::uint32_t t = 0; t < 5; ++t) {
        curves.push_back(jump && t < 4 ? plateau_then_jump(n, 900.0 + 100.0 * t, 0.9)
                                       : smooth(n, t == 4 ? 0.3 : 0.9 + 0.01 * t));
    }
    for (const OwnedSweep& m : more) {
        for (std::uint32_t t = 0; t < 5; ++t) curves.push_back(smooth(m.n, t == 4 ? 0.3 : 0.9 + 0.01 * t));
    }
    std::vector<JobView> jobs;
    for (std::size_t k = 0; k < 1 + more.size(); ++k) {
        for (std::uint32_t t = 0; t < 5; ++t) {
            JobView v;
            v.key = TrialKey{k == 0 ? t + 1 : more[k - 1].first_id + t, TrialKey::kNoArrayTask};
            v.group = k == 0 ? "s" : more[k - 1].group;
            v.owner = k == 0 ? 1000 : more[k - 1].owner;
            v.job_type = "mlp";
            v.direction = Direction::maximize;
            v.max_steps = 6000;
            v.state = JobState::running;
            v.start_time = 1;
            v.points = curves[5 * k + t];
            if (k == 0 && t == 4 && poor == Poor::pauses_spent) v.pauses = 1;
            if (k == 0 && t == 4 && poor == Poor::pending) {
                v.pauses = 1;
                v.state = JobState::pending;
                v.start_time = 0;
            }
            jobs.push_back(v);
        }
    }
    ClusterView cluster;
    cluster.now = now;
    cluster.total_gpus = 64;
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
// decisive early stop, which would catch a trial this far behind, is off here). The verdict is
// not final before 35 %: paused, giving way, or waiting, never cancelled. Not
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
            // the verdict names how it came so early (20 % of the run), and only when it did
            const std::string said = describe(r2[4].decision, r2[4].reason);
            BOOST_TEST((said.find("judged at 20% of its run as its sweep's checked forecasts have held") !=
                        std::string::npos) == c.judged,
                       said);
            BOOST_TEST(std::isfinite(r2[4].reason.held_at) == c.judged);
            if (c.judged) {
                BOOST_TEST(said.find("cannot beat the group's best") != std::string::npos);
                BOOST_TEST(r2[4].reason.held_at == 0.2, boost::test_tools::tolerance(1e-9));
                // Judged early, never cancelled before hopeless_min_progress: paused (costs
                // nothing), or, its pause spent, it gives way; pending, it waits.
                BOOST_TEST((r2[4].decision == Decision::pause));
                const auto spent = smooth_round(e, 12, 2000, c.jump, {}, Poor::pauses_spent);
                BOOST_TEST((spent[4].state == TrialState::hopeless));
                BOOST_TEST((spent[4].decision == Decision::preemptable));
                const auto pending = smooth_round(e, 12, 2000, c.jump, {}, Poor::pending);
                BOOST_TEST((pending[4].state == TrialState::hopeless));
                BOOST_TEST((pending[4].decision == Decision::wait));
                // from hopeless_min_progress (35 %) on the verdict is final again
                const auto late = smooth_round(e, 22, 3000, c.jump, {}, Poor::pauses_spent);
                BOOST_TEST((late[4].decision == Decision::requeue_hold));
                BOOST_TEST(std::isnan(late[4].reason.held_at));  // final: no longer "judged early"
                BOOST_TEST(describe(late[4].decision, late[4].reason).find("have held") == std::string::npos);
            }
            for (int t = 0; t < 4; ++t)
                BOOST_TEST((r2[static_cast<std::size_t>(t)].state != TrialState::hopeless));
        }
    }
}

// Earned trust stays with its owner: once user 1000's sweep "s" has held forecasts, a new sweep of
// the same user and model with no checks of its own reads the pooled audit and is judged from
// 15 %; another user's sweep of the same model and name (keyed uid:GROUP by the host, as the
// plugin does) has no pool of its own and waits.
BOOST_AUTO_TEST_CASE(held_forecasts_are_pooled_per_owner) {
    EngineSettings s;
    s.early_stop_probability = 0.0;
    auto made = Engine::create(s);
    BOOST_REQUIRE(made.ok());
    Engine e = std::move(made.value());
    smooth_round(e, 6, 1000, false);
    smooth_round(e, 12, 2000, false);  // "s" of user 1000: its forecasts held
    const std::vector<OwnedSweep> late = {{"t", 1000, 100, 13}, {"2000:s", 2000, 200, 13}};
    const auto r = smooth_round(e, 13, 3000, false, late);  // 22 % of their runs, no checks yet
    BOOST_TEST((r[4].state == TrialState::hopeless));       // "s" itself
    BOOST_TEST((r[9].state == TrialState::hopeless));       // same owner, pooled
    BOOST_TEST((r[14].state != TrialState::hopeless));      // another owner
    for (std::size_t j : {5u, 6u, 7u, 8u, 10u, 11u, 12u, 13u})
        BOOST_TEST((r[j].state != TrialState::hopeless));
}

BOOST_AUTO_TEST_SUITE_END()
