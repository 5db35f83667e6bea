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

BOOST_AUTO_TEST_SUITE_END()
