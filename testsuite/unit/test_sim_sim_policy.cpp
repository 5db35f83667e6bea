// Each policy on a tiny trace whose outcome can be worked out by hand (times in seconds; the toy
// curves report at steps 1..10, so a trial of duration D reports every D/10 s).
#define BOOST_TEST_MODULE sim_sim_policy
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "explsched_config.h"  // HAVE_GLPK
#include "sim/sim_options.hpp"
#include "sim_test_support.hpp"

using namespace simtest;
namespace tt = boost::test_tools;

namespace {

TrialStatus status_of(const Run& run, std::size_t i) { return run.result.trials[i].status; }

bool is(TrialStatus a, TrialStatus b) { return static_cast<int>(a) == static_cast<int>(b); }

// A round on a 4-GPU cluster: running trials hold their GPUs in `cluster`.
struct RankRound {
    Cluster cluster{homogeneous_cluster(4)};
    std::vector<ObservedTrial> trials;
    RoundInput input;
    RoundPlan plan;

    explicit RankRound(std::vector<std::pair<std::uint32_t, TrialStatus>> gpus_and_status) {
        trials.resize(gpus_and_status.size());
        for (std::size_t i = 0; i < trials.size(); ++i) {
            ObservedTrial& t = trials[i];
            t.id = static_cast<std::uint32_t>(i + 1);
            t.index = static_cast<std::uint32_t>(i);
            t.gpus = gpus_and_status[i].first;
            t.status = gpus_and_status[i].second;
            if (t.status == TrialStatus::running) {
                t.gpu_type = "v100";
                BOOST_REQUIRE(!cluster.allocate("v100", t.gpus).empty());
                input.running.push_back(&t);
            } else {
                input.pending.push_back(&t);
            }
        }
        input.cluster = &cluster;
    }
    // Trials by id.
    std::vector<ObservedTrial*> ids(std::initializer_list<std::uint32_t> list) {
        std::vector<ObservedTrial*> out;
        for (std::uint32_t id : list) out.push_back(&trials[id - 1]);
        return out;
    }
    std::vector<std::uint32_t> started() const {
        std::vector<std::uint32_t> out;
        for (const StartOrder& s : plan.start) out.push_back(s.id);
        return out;
    }
};

using Ids = std::vector<std::uint32_t>;

// asha on a sweep of three trials ("good", "mid", "bad", one GPU each, 3 GPUs) with one rung at
// max_step / reduction.
Run asha_one_rung(double reduction) {
    const CurveLibrary lib = toy_library();
    const Workload w =
        make_workload(lib, {{0, 1, 100, "good", "s"}, {0, 1, 100, "mid", "s"}, {0, 1, 100, "bad", "s"}});
    PolicySettings ps;
    ps.asha_rungs = 1;
    ps.asha_reduction = reduction;
    return run_policy("asha", lib, w, homogeneous_cluster(3, "v100", 3), small_settings(), ps);
}

// explsched-sim's command line ARGS, parsed.
Result<SimOptions> parse_args(std::vector<std::string> args) {
    args.insert(args.begin(), "explsched-sim");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    return parse_sim_options(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sim_sim_policy)

BOOST_AUTO_TEST_CASE(registry_knows_every_policy_and_rejects_others) {
    const CurveLibrary lib = toy_library();
    const Workload w = make_workload(lib, {{0, 1, 100, "good", ""}});
    const ClusterSpec cluster = homogeneous_cluster(1);
    PolicyContext context;
    context.library = &lib;
    const ThroughputTable table;
    context.throughputs = &table;
    context.cluster = &cluster;
#ifdef HAVE_GLPK
    BOOST_TEST(policy_names().size() == 9u);
#else
    BOOST_TEST(policy_names().size() == 8u);  // no gavel without GLPK (test_sim_policy_registry)
#endif
    for (const std::string& name : policy_names()) {
        auto p = make_policy(name, context, w);
        BOOST_REQUIRE_MESSAGE(p.ok(), name);
        BOOST_TEST((*p)->name() == name);
    }
    auto bad = make_policy("lottery", context, w);
    BOOST_REQUIRE(!bad.ok());
    BOOST_TEST(bad.error().message.find("'lottery' is not one of fifo") != std::string::npos,
               bad.error().message);
}

BOOST_AUTO_TEST_CASE(plan_by_rank_preempts_running_trials_ranked_below_the_cut) {
    // 1 and 2 run on 2 GPUs each; 3 waits for 2. Ranked 3, 1, 2: 3 and 1 fit, 2 makes room.
    RankRound r({{2, TrialStatus::running}, {2, TrialStatus::running}, {2, TrialStatus::pending}});
    plan_by_rank(r.input, r.ids({3, 1, 2}), {}, r.plan);
    BOOST_TEST(r.plan.preempt == Ids{2}, tt::per_element());
    BOOST_TEST(r.started() == Ids{3}, tt::per_element());
    BOOST_REQUIRE(r.plan.start.size() == 1u);
    BOOST_TEST(r.plan.start[0].gpu_type == "v100");
    BOOST_TEST(r.plan.stop.empty());
}

BOOST_AUTO_TEST_CASE(plan_by_rank_keeps_pinned_trials_whatever_their_rank) {
    // The same round with 2 pinned (in its grace period): 1 is preempted instead.
    RankRound r({{2, TrialStatus::running}, {2, TrialStatus::running}, {2, TrialStatus::pending}});
    plan_by_rank(r.input, r.ids({3, 1, 2}), r.ids({2}), r.plan);
    BOOST_TEST(r.plan.preempt == Ids{1}, tt::per_element());
    BOOST_TEST(r.started() == Ids{3}, tt::per_element());
}

BOOST_AUTO_TEST_CASE(plan_by_rank_preempts_nothing_when_nothing_starts) {
    // 3 wants all 4 GPUs and ranks first, but 1 is pinned: 3 cannot fit and 2 fits in what is
    // left. Nothing starts, so nothing is preempted.
    RankRound r({{2, TrialStatus::running}, {2, TrialStatus::running}, {4, TrialStatus::pending}});
    plan_by_rank(r.input, r.ids({3, 2, 1}), r.ids({1}), r.plan);
    BOOST_TEST(r.plan.preempt.empty());
    BOOST_TEST(r.plan.start.empty());
    // Unpinned, 3 ranks first and takes the whole cluster: both running trials make room.
    RankRound all({{2, TrialStatus::running}, {2, TrialStatus::running}, {4, TrialStatus::pending}});
    plan_by_rank(all.input, all.ids({3, 2, 1}), {}, all.plan);
    BOOST_TEST(all.plan.preempt == (Ids{1, 2}), tt::per_element());
    BOOST_TEST(all.started() == Ids{3}, tt::per_element());
}

BOOST_AUTO_TEST_CASE(plan_by_rank_backfills_smaller_trials_below_one_that_does_not_fit) {
    // Nothing runs; 1 (3 GPUs), 2 (2 GPUs), 3 (1 GPU) pending, ranked 1, 2, 3: 1 and 3 start.
    RankRound r({{3, TrialStatus::pending}, {2, TrialStatus::pending}, {1, TrialStatus::pending}});
    plan_by_rank(r.input, r.ids({1, 2, 3}), {}, r.plan);
    BOOST_TEST(r.plan.preempt.empty());
    BOOST_TEST(r.started() == (Ids{1, 3}), tt::per_element());
}

BOOST_AUTO_TEST_CASE(tiresias_short_newcomer_preempts_a_job_past_the_threshold) {
    const CurveLibrary lib = toy_library();
    const Workload w = make_workload(lib, {{0, 1, 10000, "good", ""}, {4000, 1, 100, "good", ""}});
    const Run run = run_policy("tiresias", lib, w, homogeneous_cluster(1), small_settings());
    const auto& t = run.result.trials;
    // job 1 has 4000 GPU-s > 3600 at t=4000: low queue; job 2 (high queue) takes the GPU
    BOOST_TEST(t[1].first_start == 4000.0);
    BOOST_TEST(t[1].end == 4100.0, tt::tolerance(1e-6));
    BOOST_TEST(t[0].preemptions == 1u);
    // job 1 restarts at 4100 (eligible since 4010), pays 20 s, needs 6000 s more
    BOOST_TEST(t[0].end == 10120.0, tt::tolerance(1e-6));
    BOOST_TEST(is(status_of(run, 0), TrialStatus::finished));
}

BOOST_AUTO_TEST_CASE(gandiva_time_slices_round_robin) {
    const CurveLibrary lib = toy_library();
    const Workload w = make_workload(lib, {{0, 1, 3000, "good", ""}, {0, 1, 3000, "good", ""}});
    const Run run = run_policy("gandiva", lib, w, homogeneous_cluster(1), small_settings());
    const auto& t = run.result.trials;
    // 0-1800 job 1, 1800-3600 job 2, 3600-4820 job 1 (20 s restart + 1200 s), then job 2
    BOOST_TEST(t[1].first_start == 1800.0);
    BOOST_TEST(t[0].end == 4820.0, tt::tolerance(1e-6));
    BOOST_TEST(t[1].end == 6040.0, tt::tolerance(1e-6));
    BOOST_TEST(t[0].preemptions == 1u);
    BOOST_TEST(t[1].preemptions == 1u);
}

#ifdef HAVE_GLPK  // gavel solves LPs with GLPK
BOOST_AUTO_TEST_CASE(gavel_moves_the_type_sensitive_job_to_the_fast_gpu) {
    // "fast" runs 4x faster on a v100 than on a k80, "flat" only 1.25x. fifo gives the v100 to
    // whoever came first (flat) and leaves fast on the k80; gavel's LP shares the v100.
    const CurveLibrary lib = toy_library({toy_application("flat", "flat"), toy_application("fast", "fast")});
    ThroughputTable table;
    table.set("fast", "v100", 4.0);
    table.set("fast", "k80", 1.0);
    table.set("flat", "v100", 1.25);
    table.set("flat", "k80", 1.0);
    Row flat{0, 1, 10000, "good", "", "flat"};
    Row fast{0, 1, 10000, "good", "", "fast"};
    const Workload w = make_workload(lib, {flat, fast});
    const ClusterSpec cluster = *parse_cluster_spec("v100:1x1,k80:1x1");
    const Run fifo = run_policy("fifo", lib, w, cluster, small_settings(), PolicySettings{}, table);
    const Run gavel = run_policy("gavel", lib, w, cluster, small_settings(), PolicySettings{}, table);
    BOOST_TEST(fifo.result.trials[1].end == 40000.0, tt::tolerance(1e-6));  // fast stuck on the k80
    BOOST_TEST(fifo.result.trials[0].end == 10000.0, tt::tolerance(1e-6));
    BOOST_TEST(gavel.result.trials[1].end < 0.6 * 40000.0);
    // max-min fairness: neither job is left far behind
    BOOST_TEST(gavel.result.trials[0].end < 2.0 * 10000.0);
    BOOST_TEST(gavel.metrics.makespan_h < fifo.metrics.makespan_h);
}
#endif

BOOST_AUTO_TEST_CASE(asha_keeps_the_top_third_at_the_rung) {
    // one rung at max_step / 3 = 3.3: reached by the report at step 4 (t=40)
    const Run run = asha_one_rung(3.0);
    BOOST_TEST(is(status_of(run, 0), TrialStatus::finished));
    BOOST_TEST(is(status_of(run, 1), TrialStatus::stopped));
    BOOST_TEST(is(status_of(run, 2), TrialStatus::stopped));
    BOOST_TEST(run.result.trials[1].end == 40.0);
    BOOST_TEST(run.result.trials[2].gpu_seconds == 40.0, tt::tolerance(1e-6));
    BOOST_TEST(run.metrics.profit == 1.0, tt::tolerance(1e-12));
}

// asha's reduction factor and rungs (explsched-sim --asha-reduction, --asha-rungs; the trade-off
// runs of contrib/bench_frontier.py): parsed and bounded, and they change what asha keeps.
BOOST_AUTO_TEST_CASE(asha_reduction_and_rungs_are_options) {
    auto parse = [](std::vector<std::string> args) {
        args.insert(args.end(), {"--trace", "t.csv", "--curves", "c"});
        return parse_args(std::move(args));
    };
    auto ok = parse({"--asha-reduction", "2", "--asha-rungs", "4"});
    BOOST_REQUIRE(ok.ok());
    BOOST_TEST(ok->policy.asha_reduction == 2.0);
    BOOST_TEST(ok->policy.asha_rungs == 4u);
    BOOST_TEST(ok->describe()["asha_reduction"].get<double>() == 2.0);
    BOOST_TEST(ok->describe()["asha_rungs"].get<std::size_t>() == 4u);
    for (const char* bad : {"1", "0.5", "nan", "101", "x"}) {
        auto r = parse({"--asha-reduction", bad});
        BOOST_REQUIRE(!r.ok());
        BOOST_TEST(r.error().message.find("--asha-reduction") != std::string::npos, r.error().message);
    }
    for (const char* bad : {"0", "11", "-1"}) {
        auto r = parse({"--asha-rungs", bad});
        BOOST_REQUIRE(!r.ok());
        BOOST_TEST(r.error().message.find("--asha-rungs") != std::string::npos, r.error().message);
    }
    // reduction 1.5: the one rung at max_step 10 / 1.5 = step 6.7, reached by the report at step 7
    // (t=70), not at step 4 as with 3 (asha_keeps_the_top_third_at_the_rung); asynchronous, each
    // trial is judged on the values recorded so far, so "mid" (below "good" there) stops all the same
    const Run run = asha_one_rung(1.5);
    BOOST_TEST(is(status_of(run, 0), TrialStatus::finished));
    BOOST_TEST(is(status_of(run, 1), TrialStatus::stopped));
    BOOST_TEST(is(status_of(run, 2), TrialStatus::stopped));
    BOOST_TEST(run.result.trials[1].end == 70.0);
    BOOST_TEST(run.result.trials[2].gpu_seconds == 70.0, tt::tolerance(1e-6));
}

BOOST_AUTO_TEST_CASE(slaq_gives_a_new_trial_the_gpu_after_the_grace) {
    const CurveLibrary lib = toy_library();
    // job 1 reports every 100 s, so by 600 it has the points the predictor needs and a finite
    // predicted gain; job 2 arrives at 300 with no points (largest predicted gain: SLAQ runs new
    // jobs first). Job 1 is in its 600 s grace until 600, also a re-ranking time (0, 300, 600).
    const Workload w = make_workload(lib, {{0, 1, 1000, "good", ""}, {300, 1, 2000, "good", ""}});
    const Run run = run_policy("slaq", lib, w, homogeneous_cluster(1), small_settings());
    BOOST_TEST(run.result.trials[1].first_start == 600.0);
    BOOST_TEST(run.result.trials[0].preemptions >= 1u);
    BOOST_TEST(is(status_of(run, 0), TrialStatus::finished));
    BOOST_TEST(is(status_of(run, 1), TrialStatus::finished));  // slaq never stops a trial
}

BOOST_AUTO_TEST_CASE(oasis_admits_cheap_work_and_rejects_what_never_pays) {
    const CurveLibrary lib = toy_library();
    // job 1: 1 GPU of 10 for 100 s (load 0.1, price L); job 2 wants the whole cluster for 20000 s:
    // at full load the price is U, far above its value; after the patience it is rejected
    const Workload w = make_workload(lib, {{0, 1, 100, "good", ""}, {10, 10, 20000, "good", ""}});
    PolicySettings ps;
    ps.oasis_patience_s = 3600.0;
    const Run run = run_policy("oasis", lib, w, homogeneous_cluster(10, "v100", 10), small_settings(), ps);
    BOOST_TEST(is(status_of(run, 0), TrialStatus::finished));
    BOOST_TEST(run.result.trials[0].first_start == 0.0);
    BOOST_TEST(is(status_of(run, 1), TrialStatus::stopped));
    BOOST_TEST(run.result.trials[1].gpu_seconds == 0.0);
    BOOST_TEST(run.result.trials[1].end == 3610.0);
}

BOOST_AUTO_TEST_CASE(explsched_terminates_diverged_and_hopeless_trials) {
    const CurveLibrary lib = toy_library();
    // one sweep: a good trial, a bad one, one that diverges at step 6 (t=600); 100 s per report
    const Workload w =
        make_workload(lib, {{0, 1, 1000, "good", "s"}, {0, 1, 1000, "bad", "s"}, {0, 1, 1000, "nan", "s"}});
    SimSettings settings = small_settings();
    settings.record = true;
    // Milestones off: this is about the divergence and extrapolation rules (the next case has them on).
    PolicySettings ps;
    ps.engine.milestone_stop_probability = 0.0;
    const Run run = run_policy("explsched", lib, w, homogeneous_cluster(3, "v100", 3), settings, ps);
    const auto& t = run.result.trials;
    BOOST_TEST(is(t[0].status, TrialStatus::finished));
    BOOST_TEST(is(t[2].status, TrialStatus::stopped));
    BOOST_TEST(t[2].end >= 600.0);
    BOOST_TEST(t[2].end <= 900.0);  // the next re-ranking after the NaN report
    BOOST_TEST(t[2].marks.back().note.find("diverged") != std::string::npos, t[2].marks.back().note);
    BOOST_TEST(is(t[1].status, TrialStatus::stopped));
    BOOST_TEST(t[1].end < 1000.0);
    BOOST_TEST(t[1].marks.back().note.find("cannot beat") != std::string::npos, t[1].marks.back().note);
    BOOST_TEST(run.metrics.profit == 1.0, tt::tolerance(1e-12));
    BOOST_TEST(run.metrics.non_best_gpu_hours < 2.0 * 1000.0 / 3600.0);
    BOOST_TEST(!t[0].detail.empty());  // the engine's last assessment is recorded
}

BOOST_AUTO_TEST_CASE(explsched_stops_trials_behind_at_a_milestone_early) {
    const CurveLibrary lib = toy_library();
    // The same sweep with milestone_stop_unpredicted and no progress floor: the trial behind the
    // good one at a milestone is stopped there, before it has enough points to be extrapolated
    // (ASHA's rule), so the sweep spends less on it than with milestones off.
    const Workload w =
        make_workload(lib, {{0, 1, 1000, "good", "s"}, {0, 1, 1000, "bad", "s"}, {0, 1, 1000, "nan", "s"}});
    SimSettings settings = small_settings();
    settings.record = true;
    PolicySettings on;
    on.engine.milestone_stop_unpredicted = true;
    on.engine.hopeless_min_progress = 0.0;
    on.engine.pause_probability = 0.0;  // stopped, not paused
    const Run run = run_policy("explsched", lib, w, homogeneous_cluster(3, "v100", 3), settings, on);
    PolicySettings off;
    off.engine.milestone_stop_probability = 0.0;
    const Run without = run_policy("explsched", lib, w, homogeneous_cluster(3, "v100", 3), settings, off);
    const auto& t = run.result.trials;
    BOOST_TEST(is(t[0].status, TrialStatus::finished));
    BOOST_TEST(is(t[1].status, TrialStatus::stopped));
    BOOST_TEST(t[1].marks.back().note.find("milestone step") != std::string::npos, t[1].marks.back().note);
    BOOST_TEST(t[1].end < without.result.trials[1].end);
    // "nan" ties with "good" at every milestone (it is "good" until it diverges)
    BOOST_TEST(is(t[2].status, TrialStatus::stopped));
    BOOST_TEST(run.metrics.profit == 1.0, tt::tolerance(1e-12));
    BOOST_TEST(run.metrics.non_best_gpu_hours < without.metrics.non_best_gpu_hours);
}

BOOST_AUTO_TEST_CASE(params_set_explscheds_engine_settings) {
    const auto parse = parse_args;
    auto ok = parse({"--trace", "t.csv", "--curves", "c", "--params", "min_expected_gain=0.02,min_run=300"});
    BOOST_REQUIRE(ok.ok());
    BOOST_TEST(ok->policy.engine.min_expected_gain == 0.02);
    BOOST_TEST(ok->policy.min_run_s == 300.0);  // one grace for every policy
    BOOST_TEST(ok->policy.engine.min_run_s == 300.0);
    // --min-run wins over --params min_run, in either order
    auto both = parse({"--min-run", "120", "--trace", "t.csv", "--curves", "c", "--params", "min_run=300"});
    BOOST_REQUIRE(both.ok());
    BOOST_TEST(both->policy.engine.min_run_s == 120.0);
    BOOST_TEST(both->policy.min_run_s == 120.0);
    // a bad key or value is an error naming the option and the key
    auto bad = parse({"--trace", "t.csv", "--curves", "c", "--params", "min_expected_gain=2"});
    BOOST_REQUIRE(!bad.ok());
    BOOST_TEST(bad.error().message.find("--params") != std::string::npos, bad.error().message);
    BOOST_TEST(bad.error().message.find("min_expected_gain") != std::string::npos, bad.error().message);
    auto unknown = parse({"--trace", "t.csv", "--curves", "c", "--params", "nope=1"});
    BOOST_REQUIRE(!unknown.ok());
    BOOST_TEST(unknown.error().message.find("nope") != std::string::npos, unknown.error().message);
}

BOOST_AUTO_TEST_CASE(oracle_runs_only_each_sweeps_best_trial) {
    const CurveLibrary lib = toy_library();
    const Workload w =
        make_workload(lib, {{0, 1, 100, "mid", "s"}, {5, 1, 100, "good", "s"}, {6, 1, 100, "bad", "s"}});
    const Run run = run_policy("oracle", lib, w, homogeneous_cluster(3, "v100", 3), small_settings());
    BOOST_TEST(is(status_of(run, 0), TrialStatus::stopped));
    BOOST_TEST(is(status_of(run, 2), TrialStatus::stopped));
    BOOST_TEST(run.result.trials[0].gpu_seconds == 0.0);
    BOOST_TEST(is(status_of(run, 1), TrialStatus::finished));  // its best report is its last
    BOOST_TEST(run.metrics.profit == run.metrics.profit_bound);
    BOOST_TEST(run.metrics.non_best_gpu_hours == 0.0);
    BOOST_TEST(run.metrics.gpu_hours == 100.0 / 3600.0, tt::tolerance(1e-6));
    // no policy gets more profit for fewer GPU-hours on this sweep
    for (const std::string& name : policy_names()) {
        const Run other = run_policy(name, lib, w, homogeneous_cluster(3, "v100", 3), small_settings());
        BOOST_TEST_CONTEXT(name) {
            BOOST_TEST(other.metrics.profit <= run.metrics.profit + 1e-12);
            if (other.metrics.profit >= run.metrics.profit - 1e-12) {
                BOOST_TEST(other.metrics.gpu_hours >= run.metrics.gpu_hours - 1e-9);
            }
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
