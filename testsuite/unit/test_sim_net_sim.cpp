#define BOOST_TEST_MODULE test_sim_net_sim
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "core/sched/net_table.hpp"
#include "sim/net_sim.hpp"

using namespace explsched;
using namespace explsched::sim;

namespace {

// X is slowed to 0.4 by Y; everyone else is harmless. Two 4-GPU Xs and two 4-GPU Ys on 4 nodes of
// 4 GPUs: first fit spreads everyone over all four nodes; aware placement pairs X with X.
net::PairTable table() {
    auto t = net::PairTable::from_csv(",x\n\"X,4,2\",10\n\"X,4,4\",10\n\"Y,4,2\",10\n\"Y,4,4\",10\n",
                                      ",\"X,4,2\",\"X,4,4\",\"Y,4,2\",\"Y,4,4\"\n"
                                      "\"X,4,2\",1,1,0.4,0.4\n"
                                      "\"X,4,4\",1,1,0.4,0.4\n"
                                      "\"Y,4,2\",1,1,1,1\n"
                                      "\"Y,4,4\",1,1,1,1\n");
    BOOST_REQUIRE(t.ok());
    return *t;
}

std::vector<NetJob> jobs() {
    std::vector<NetJob> v;
    for (std::uint32_t i = 0; i < 4; ++i) v.push_back({i, i % 2 ? "Y" : "X", 4, 36000.0, 0.0});
    return v;
}

// fifo on `nodes` nodes of 4 GPUs
NetSimSettings fifo_on(int nodes, bool aware) {
    NetSimSettings s;
    s.nodes = nodes;
    s.gpus_per_node = 4;
    s.policy = NetPolicy::fifo;
    s.aware = aware;
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(net_sim)

BOOST_AUTO_TEST_CASE(shapes_follow_deepshare) {
    BOOST_TEST((net_shapes(2, 4, 8) == std::vector<int>{2}));
    BOOST_TEST((net_shapes(4, 4, 8) == std::vector<int>{4, 2}));
    BOOST_TEST((net_shapes(8, 4, 8) == std::vector<int>{4, 2}));
    BOOST_TEST((net_shapes(8, 4, 2) == std::vector<int>{4}));
}

BOOST_AUTO_TEST_CASE(aware_placement_avoids_the_bad_pair_and_finishes_sooner) {
    const auto t = table();
    NetSimSettings s = fifo_on(4, false);
    auto blind = run_net_sim(jobs(), t, s);
    s.aware = true;
    auto aware = run_net_sim(jobs(), t, s);
    BOOST_REQUIRE(blind.ok());
    BOOST_REQUIRE(aware.ok());
    BOOST_TEST(blind->jct.size() == 4u);
    BOOST_TEST(aware->lost_fraction == 0.0);
    BOOST_TEST(blind->lost_fraction > 0.2);
    BOOST_TEST(aware->avg_jct < blind->avg_jct);
    // alone, X needs 3,600 s: that is the aware JCT (12 rounds of 300 s)
    BOOST_TEST(aware->avg_jct == 3600.0, boost::test_tools::tolerance(1e-9));
}

// Two nodes of 4 GPUs: two 4-GPU jobs fill them and share both nodes. In fifo order X, Y, X, Y, a
// single plan with window 1 runs X beside Y (X at 0.4); planning windows 1 and 2 runs the plan with
// more predicted useful GPUs, X beside X, then Y beside Y: nothing lost, sooner.
BOOST_AUTO_TEST_CASE(planning_several_windows_runs_the_more_useful_plan) {
    const auto t = table();
    NetSimSettings s = fifo_on(2, true);
    s.windows = {1};
    auto one = run_net_sim(jobs(), t, s);
    s.windows = {1, 2};
    auto two = run_net_sim(jobs(), t, s);
    BOOST_REQUIRE(one.ok());
    BOOST_REQUIRE(two.ok());
    BOOST_TEST(one->lost_fraction > 0.1);
    BOOST_TEST(two->lost_fraction == 0.0);
    BOOST_TEST(two->avg_jct < one->avg_jct);
    BOOST_TEST(two->makespan < one->makespan);
    // the blind baseline ignores the windows
    s.aware = false;
    auto blind = run_net_sim(jobs(), t, s);
    s.windows = {1};
    auto blind_one = run_net_sim(jobs(), t, s);
    BOOST_REQUIRE(blind.ok());
    BOOST_REQUIRE(blind_one.ok());
    BOOST_TEST(blind->jct == blind_one->jct);
}

// When no plan is more useful than the policy's own order (every pair harmless), the windows
// change nothing: ties go to the smallest window.
BOOST_AUTO_TEST_CASE(equal_plans_keep_the_policys_order) {
    auto t = net::PairTable::from_csv(",x\n\"X,4,2\",10\n\"Y,4,2\",10\n",
                                      ",\"X,4,2\",\"Y,4,2\"\n\"X,4,2\",1,1\n\"Y,4,2\",1,1\n");
    BOOST_REQUIRE(t.ok());
    std::vector<NetJob> v;
    for (std::uint32_t i = 0; i < 6; ++i) v.push_back({i, i % 2 ? "Y" : "X", 4, 1000.0 * (6 - i), 0.0});
    NetSimSettings s = fifo_on(2, true);
    s.windows = {1};
    auto one = run_net_sim(v, *t, s);
    s.windows = {1, 4, 16};
    auto many = run_net_sim(v, *t, s);
    BOOST_REQUIRE(one.ok());
    BOOST_REQUIRE(many.ok());
    BOOST_TEST(one->jct == many->jct);
}

// plan_round leaves the running jobs as they were, and its plan fits the free GPUs.
BOOST_AUTO_TEST_CASE(a_round_plan_leaves_the_state_as_it_was) {
    const auto t = table();
    const net::ContentionModel model(t, {net::Rule::link_additive, 0.35});
    net::NetState state(4);
    state.add(1, t.find("Y,4,2"), 4, {0, 1});
    const std::vector<int> free = {2, 2, 4, 4};
    std::vector<net::PlacementRequest> queue;
    for (int k = 0; k < 5; ++k) queue.push_back({k % 2 ? "Y" : "X", 4, {2}});
    PlanSettings ps;
    ps.windows = {1, 4};
    const RoundPlan plan = plan_round(model, state, free, queue, ps);
    BOOST_TEST(state.size() == 1u);
    for (int v = 0; v < 4; ++v) BOOST_TEST(state.on_node(v).size() == (v < 2 ? 1u : 0u));
    std::vector<int> used(4, 0);
    for (const Planned& p : plan.placed)
        for (int v : p.choice.nodes) used[static_cast<std::size_t>(v)] += 2;
    for (std::size_t v = 0; v < 4; ++v) BOOST_TEST(used[v] <= free[v]);
    // 12 free GPUs, 4 per job: three jobs, both Xs (hurt by Y) on n3,n4, Y on n1,n2. The policy's
    // own order already does that, so window 4's plan is no better: the tie goes to window 1.
    BOOST_TEST(plan.placed.size() == 3u);
    BOOST_TEST(plan.window == 1u);
    for (const Planned& p : plan.placed)
        if (queue[p.index].model == "X") BOOST_TEST((p.choice.nodes == std::vector<int>{2, 3}));
    BOOST_TEST(plan.evaluations >= plan.placed.size());
    // with node costs carried from an earlier round, the same plan, and the state as it was
    net::NodeCosts carried;
    for (int round = 0; round < 3; ++round) {
        const RoundPlan again = plan_round(model, state, free, queue, ps, &carried);
        BOOST_TEST(again.placed.size() == plan.placed.size());
        for (std::size_t i = 0; i < again.placed.size() && i < plan.placed.size(); ++i) {
            BOOST_TEST(again.placed[i].index == plan.placed[i].index);
            BOOST_TEST(again.placed[i].choice.nodes == plan.placed[i].choice.nodes);
        }
        BOOST_TEST(again.useful == plan.useful, boost::test_tools::tolerance(1e-12));
        BOOST_TEST(state.size() == 1u);
    }
    BOOST_TEST(carried.kept_rebinds() == 2u);
}

BOOST_AUTO_TEST_CASE(reads_deepshare_traces_and_rejects_bad_ones) {
    const auto dir = std::filesystem::temp_directory_path() / "explsched_net_sim_test";
    std::filesystem::create_directories(dir);
    {
        std::ofstream(dir / "ok.json")
            << R"({"1": {"model": "X", "gpu_demand": 4, "total_samples_to_train": 5.5},
                                               "0": {"model": "Y", "gpu_demand": 2, "total_samples_to_train": 1}})";
        std::ofstream(dir / "bad.json") << R"({"a": {"model": "X"}})";
    }
    auto ok = read_net_trace((dir / "ok.json").string());
    BOOST_REQUIRE(ok.ok());
    BOOST_TEST(ok->size() == 2u);
    BOOST_TEST((*ok)[0].model == "Y");
    BOOST_TEST((*ok)[1].samples == 5.5);
    BOOST_TEST(!read_net_trace((dir / "bad.json").string()).ok());
    BOOST_TEST(!read_net_trace((dir / "missing.json").string()).ok());
    std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
