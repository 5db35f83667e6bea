#define BOOST_TEST_MODULE sim_simulator
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <functional>
#include <string>

#include "sim/report.hpp"
#include "sim_test_support.hpp"

using namespace simtest;

namespace {

// A policy that follows a script: at each round it calls `step` with the input and the plan.
class ScriptedPolicy final : public Policy {
public:
    explicit ScriptedPolicy(std::function<void(const RoundInput&, RoundPlan&)> step)
        : step_(std::move(step)) {}
    std::string_view name() const override { return "scripted"; }
    Status schedule(const RoundInput& input, RoundPlan& plan) override {
        step_(input, plan);
        return {};
    }

private:
    std::function<void(const RoundInput&, RoundPlan&)> step_;
};

bool has_pending(const RoundInput& in, std::uint32_t id) {
    for (const ObservedTrial* t : in.pending) {
        if (t->id == id) return true;
    }
    return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sim_simulator)

BOOST_AUTO_TEST_CASE(fifo_by_hand) {
    const CurveLibrary lib = toy_library();
    const Workload w =
        make_workload(lib, {{0, 2, 100, "good", ""}, {0, 1, 100, "good", ""}, {10, 1, 100, "mid", ""}});
    const ClusterSpec cluster = homogeneous_cluster(2, "v100", 2);
    SimSettings settings = small_settings();
    settings.record = true;
    const Run run = run_policy("fifo", lib, w, cluster, settings);
    const auto& t = run.result.trials;
    BOOST_TEST(t[0].first_start == 0.0);
    BOOST_TEST(t[0].end == 100.0, boost::test_tools::tolerance(1e-6));
    BOOST_TEST(t[1].first_start == 100.0);
    BOOST_TEST(t[2].first_start == 100.0);
    BOOST_TEST(t[1].end == 200.0, boost::test_tools::tolerance(1e-6));
    BOOST_TEST(t[2].end == 200.0, boost::test_tools::tolerance(1e-6));
    for (const TrialOutcome& o : t) {
        BOOST_TEST(static_cast<int>(o.status) == static_cast<int>(TrialStatus::finished));
        BOOST_TEST(o.reported == 10u);
        BOOST_TEST(o.points.size() == 10u);
    }
    // reports carry the trial's own run time and its measured speed (10 steps / 100 s)
    BOOST_TEST(t[1].points[0].wall_time == 10.0, boost::test_tools::tolerance(1e-6));
    BOOST_TEST(t[1].points[0].throughput == 0.1, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(run.metrics.gpu_hours == 400.0 / 3600.0, boost::test_tools::tolerance(1e-6));
    BOOST_TEST(run.metrics.jct_mean_h == (100.0 + 200.0 + 190.0) / 3.0 / 3600.0,
               boost::test_tools::tolerance(1e-6));
    BOOST_TEST(run.metrics.makespan_h == 200.0 / 3600.0, boost::test_tools::tolerance(1e-6));
    // every trial is its own sweep; mid's best is below the application's best
    BOOST_TEST(run.metrics.profit == 2.0 + w.trials[2].best_quality, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(run.metrics.profit == run.metrics.profit_bound, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(run.metrics.non_best_gpu_hours == 0.0);
    BOOST_TEST(run.metrics.preemptions == 0u);
    BOOST_TEST(run.result.trials[0].marks.front().what == "start");
    BOOST_TEST(run.result.trials[0].marks.back().what == "finish");
}

BOOST_AUTO_TEST_CASE(preemption_keeps_progress_and_costs_requeue_delay_and_restart) {
    const CurveLibrary lib = toy_library();
    const Workload w = make_workload(lib, {{0, 1, 100, "good", ""}});
    const ClusterSpec cluster = homogeneous_cluster(1);
    ScriptedPolicy policy([](const RoundInput& in, RoundPlan& plan) {
        if (in.now == 0.0 || (in.now >= 60.0 && has_pending(in, 1))) plan.start.push_back({1, ""});
        if (in.now == 50.0) plan.preempt.push_back(1);
    });
    auto result = simulate(w, lib, ThroughputTable{}, cluster, policy, small_settings());
    BOOST_REQUIRE_MESSAGE(result.ok(), (result.ok() ? std::string() : result.error().message));
    const TrialOutcome& o = result->trials[0];
    // 50 s of work, preempted at 50, eligible again at 60, 20 s restart, 50 s more work
    BOOST_TEST(o.end == 130.0, boost::test_tools::tolerance(1e-6));
    BOOST_TEST(o.gpu_seconds == 120.0, boost::test_tools::tolerance(1e-6));
    BOOST_TEST(o.preemptions == 1u);
    BOOST_TEST(o.reported == 10u);
}

BOOST_AUTO_TEST_CASE(bad_plans_are_errors_not_crashes) {
    const CurveLibrary lib = toy_library();
    const Workload w = make_workload(lib, {{0, 1, 100, "good", ""}, {0, 1, 100, "good", ""}});
    const ClusterSpec cluster = homogeneous_cluster(1);
    ScriptedPolicy too_many([](const RoundInput&, RoundPlan& plan) {
        plan.start.push_back({1, ""});
        plan.start.push_back({2, ""});
    });
    auto r1 = simulate(w, lib, ThroughputTable{}, cluster, too_many, small_settings());
    BOOST_REQUIRE(!r1.ok());
    BOOST_TEST(r1.error().message.find("job 2: start without enough free GPUs") != std::string::npos,
               r1.error().message);
    ScriptedPolicy early([](const RoundInput& in, RoundPlan& plan) {
        if (in.now == 0.0) plan.start.push_back({1, ""});
        if (in.now == 10.0) plan.preempt.push_back(1);
        if (in.now == 10.0) plan.start.push_back({1, ""});
    });
    auto r2 = simulate(w, lib, ThroughputTable{}, cluster, early, small_settings());
    BOOST_REQUIRE(!r2.ok());
    BOOST_TEST(r2.error().message.find("requeue delay") != std::string::npos, r2.error().message);
    ScriptedPolicy unknown([](const RoundInput&, RoundPlan& plan) { plan.stop.push_back(99); });
    BOOST_TEST(!simulate(w, lib, ThroughputTable{}, cluster, unknown, small_settings()).ok());
    const Workload big = make_workload(lib, {{0, 4, 100, "good", ""}});
    ScriptedPolicy idle([](const RoundInput&, RoundPlan&) {});
    auto r3 = simulate(big, lib, ThroughputTable{}, cluster, idle, small_settings());
    BOOST_REQUIRE(!r3.ok());
    BOOST_TEST(r3.error().message.find("asks for 4 GPUs, the cluster has 1") != std::string::npos,
               r3.error().message);
    // 4 GPUs in all, but at most 2 of one type: it could never start
    auto r4 = simulate(big, lib, ThroughputTable{}, *parse_cluster_spec("v100:1x2,k80:1x2"), idle,
                       small_settings());
    BOOST_REQUIRE(!r4.ok());
    BOOST_TEST(r4.error().message.find("at most 2 of one type") != std::string::npos, r4.error().message);
}

BOOST_AUTO_TEST_CASE(same_seed_same_result_for_every_policy) {
    const CurveLibrary lib = toy_library();
    std::vector<Row> rows;
    for (int i = 0; i < 24; ++i)
        rows.push_back({37.0 * i, static_cast<std::uint32_t>(1 + i % 2), 900.0 + 50 * i, "", ""});
    Trace trace = make_trace(rows);
    for (TraceJob& j : trace.jobs) j.variant.clear();
    WorkloadOptions options;
    options.seed = 11;
    options.sweep_size = 6;
    const Workload w = *build_workload(trace, lib, options);
    const ClusterSpec cluster = homogeneous_cluster(4, "v100", 4);
    for (const std::string& name : policy_names()) {
        const Run a = run_policy(name, lib, w, cluster, small_settings());
        const Run b = run_policy(name, lib, w, cluster, small_settings());
        BOOST_TEST_CONTEXT("policy " << name) {
            BOOST_TEST(a.metrics.profit == b.metrics.profit);
            BOOST_TEST(a.metrics.gpu_hours == b.metrics.gpu_hours);
            BOOST_TEST(a.metrics.preemptions == b.metrics.preemptions);
            for (std::size_t i = 0; i < w.trials.size(); ++i) {
                BOOST_TEST(static_cast<int>(a.result.trials[i].status) ==
                           static_cast<int>(b.result.trials[i].status));
                BOOST_TEST(a.result.trials[i].gpu_seconds == b.result.trials[i].gpu_seconds);
                BOOST_TEST((a.result.trials[i].end == b.result.trials[i].end ||
                            (std::isnan(a.result.trials[i].end) && std::isnan(b.result.trials[i].end))));
            }
            // no policy gets a sweep to its best sooner than its bound
            for (std::size_t k = 0; k < w.sweeps.size(); ++k) {
                const double got = a.result.sweep_time_to_best[k];
                if (std::isfinite(got)) BOOST_TEST(got >= a.result.sweep_time_to_best_bound[k] - 1e-6);
            }
            BOOST_TEST(a.metrics.time_to_best_bound_all_h > 0.0);
            // nothing is left behind when the clock runs to the end
            BOOST_TEST(a.metrics.unfinished == 0u);
            BOOST_TEST(a.metrics.finished + a.metrics.stopped == w.trials.size());
        }
    }
}

// The time-to-best bound: the sweep's quickest trial to within 0.01 of its best, trained from its
// arrival and never queued. Quality 0 is the worst first report ("bad"'s, 0.167), so "good" gets
// within 0.01 of its final quality 1 only at step 10 (step 9: 0.98999), "bad" within 0.01 of its
// own final 0.181 at step 8 (0.1736; step 7: 0.1680).
BOOST_AUTO_TEST_CASE(time_to_best_bound_by_hand) {
    const CurveLibrary lib = toy_library();
    // one sweep: A from 0 at 10 s per step (step 10 at 100 s), B from 10 at 5 s per step (at 60 s);
    // "mid" never gets near the best; a second sweep of one "bad" trial arriving at 1000
    const Workload w = make_workload(lib, {{0, 1, 100, "good", "s"},
                                           {10, 1, 50, "good", "s"},
                                           {0, 1, 10, "mid", "s"},
                                           {1000, 1, 100, "bad", "t"}});
    BOOST_REQUIRE(w.sweeps.size() == 2u);
    const Run run = run_policy("fifo", lib, w, homogeneous_cluster(1), small_settings());
    const auto& bound = run.result.sweep_time_to_best_bound;
    BOOST_REQUIRE(bound.size() == 2u);
    const std::size_t s = w.sweeps[0].name == "s" ? 0 : 1;
    BOOST_TEST(bound[s] == 60.0, boost::test_tools::tolerance(1e-9));
    // "bad" is its own sweep's best, 10 s per step from its arrival (its sweep's first)
    BOOST_TEST(bound[1 - s] == 80.0, boost::test_tools::tolerance(1e-9));
    // one GPU, fifo: A and "mid" arrived first; A runs 0-100 and gets there at 100, B waits
    BOOST_TEST(run.result.sweep_time_to_best[s] > bound[s]);
    BOOST_TEST(run.result.sweep_time_to_best[1 - s] >= bound[1 - s]);
    BOOST_TEST(run.metrics.time_to_best_bound_all_h == (60.0 + 80.0) / 2.0 / 3600.0,
               boost::test_tools::tolerance(1e-9));
    BOOST_TEST(run.metrics.time_to_best_bound_h == run.metrics.time_to_best_bound_all_h,
               boost::test_tools::tolerance(1e-12));
    BOOST_TEST(run.metrics.time_to_best_mean_h >= run.metrics.time_to_best_bound_h);
    // explsched-sim --output gives both per sweep, in hours
    const nlohmann::json sweeps = sweeps_json(w, run.result);
    BOOST_REQUIRE(sweeps.size() == 2u);
    BOOST_TEST(sweeps[s]["name"] == "s");
    BOOST_TEST(sweeps[s]["trials"] == 3u);
    BOOST_TEST(sweeps[s]["time_to_best_bound_h"].get<double>() == 60.0 / 3600.0,
               boost::test_tools::tolerance(1e-12));
    BOOST_TEST(sweeps[s]["time_to_best_h"].get<double>() == run.result.sweep_time_to_best[s] / 3600.0,
               boost::test_tools::tolerance(1e-12));
}

// Time to best against a baseline, over the sweeps both got to their best: a sweep only one of
// them reached (NaN for the other) counts for neither.
BOOST_AUTO_TEST_CASE(common_time_to_best_ratio_by_hand) {
    const auto run = [](const char* policy, std::uint64_t seed, std::vector<double> ttb) {
        RunRecord r;
        r.seed = seed;
        r.metrics.policy = policy;
        r.sweep_time_to_best = std::move(ttb);
        return r;
    };
    const std::vector<RunRecord> runs = {
        run("explsched", 0, {100, 200, 5000}),
        run("asha", 0, {200, 200, NAN}),  // 300 / 400
        run("explsched", 1, {NAN, 50, 10}),
        run("asha", 1, {10, 150, 40}),  // 60 / 190
        run("explsched", 2, {NAN}),
        run("asha", 2, {10}),  // none shared
    };
    const std::vector<double> r = common_time_to_best_ratios(runs, "explsched", "asha");
    BOOST_REQUIRE(r.size() == 3u);
    BOOST_TEST(r[0] == 0.75, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(r[1] == 60.0 / 190.0, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(std::isnan(r[2]));
    BOOST_TEST(common_time_to_best_ratios(runs, "explsched", "oracle").empty());
}

BOOST_AUTO_TEST_CASE(max_time_cuts_the_clock) {
    const CurveLibrary lib = toy_library();
    const Workload w = make_workload(lib, {{0, 1, 1000, "good", ""}, {5000, 1, 100, "good", ""}});
    SimSettings settings = small_settings();
    settings.max_time_s = 500.0;
    const Run run = run_policy("fifo", lib, w, homogeneous_cluster(1), settings);
    BOOST_TEST(run.metrics.unfinished == 2u);
    BOOST_TEST(run.result.trials[0].gpu_seconds == 500.0, boost::test_tools::tolerance(1e-6));
    BOOST_TEST(run.result.trials[0].reported == 5u);
    BOOST_TEST(static_cast<int>(run.result.trials[1].status) == static_cast<int>(TrialStatus::future));
}

BOOST_AUTO_TEST_CASE(idle_gaps_are_skipped_without_changing_times) {
    const CurveLibrary lib = toy_library();
    const Workload w = make_workload(lib, {{0, 1, 100, "good", ""}, {1000005, 1, 100, "good", ""}});
    const Run run = run_policy("fifo", lib, w, homogeneous_cluster(1), small_settings());
    BOOST_TEST(run.result.trials[1].first_start == 1000010.0);  // the first round after it arrived
    BOOST_TEST(run.result.rounds < 40u);                        // not 100,000 empty rounds
}

BOOST_AUTO_TEST_SUITE_END()
