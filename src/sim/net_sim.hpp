// `explsched-sim net`: distributed jobs sharing nodes' network links (DeepShare's scenario).
// Round-based like DeepShare's simulator: every round (300 s) all jobs are placed afresh in the
// policy's order on a cluster of nodes x GPUs, each multi-node job progresses at its isolated
// throughput for its shape times the contention ratio of the ground-truth rule, and finishes
// mid-round when its samples are done. "aware" runs choose nodes and shape with the core's
// contention-aware placement (core/sched/net_placement.hpp); the others take DeepShare's first fit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "core/sched/net_contention.hpp"
#include "core/sched/net_placement.hpp"
#include "core/sched/net_plan.hpp"
#include "core/sched/net_table.hpp"

namespace explsched::sim {

struct NetJob {
    std::uint32_t id = 0;
    std::string model;
    int gpus = 0;
    double samples = 0.0;  // to train
    double arrival = 0.0;  // s
};

// DeepShare's trace JSON {"id": {"model", "gpu_demand", "total_samples_to_train"}}.
Result<std::vector<NetJob>> read_net_trace(const std::string& path);

enum class NetPolicy { fifo, las, srtf };
Result<NetPolicy> parse_net_policy(const std::string& s);
const char* net_policy_name(NetPolicy p);

struct NetSimSettings {
    int nodes = 4;
    int gpus_per_node = 8;
    double round_s = 300.0;
    NetPolicy policy = NetPolicy::las;
    bool aware = false;
    net::ModelSettings truth{net::Rule::min_pairwise, 0.35};     // what the simulated cluster does
    net::ModelSettings predict{net::Rule::link_additive, 0.35};  // what aware placement believes
    bool backfill = false;  // DeepShare stops at the first job that does not fit
    // Aware runs only. A plan is one greedy pass over the queue that takes, among the policy's next
    // W jobs, the one with the least predicted loss per GPU (DeepShare's RL also picks among queued
    // candidates); with several windows (ascending) each is planned and the plan with the most
    // predicted useful GPUs (GPUs x ratio x shape speed) runs, ties to the smaller window. A job
    // whose predicted useful GPUs (gpus * ratio * shape speed - the running jobs' loss) fall below
    // min_gain * gpus is held.
    std::vector<std::size_t> windows{1};
    double min_gain = 0.0;
    double arrival_gap_s = 0.0;  // 0: every job queued at time 0 (DeepShare's traces)
    std::uint64_t seed = 0;      // shuffles the arrival order
    // What aware placement reads instead of the simulated cluster's table (ablations); null = same.
    const net::PairTable* predict_table = nullptr;
};

struct NetSimResult {
    std::vector<double> jct;  // s, per job
    double avg_jct = 0.0, p95_jct = 0.0, makespan = 0.0;
    double lost_fraction = 0.0;     // busy GPU-time lost to contention / busy GPU-time
    double mean_ratio = 0.0;        // GPU-weighted contention ratio over busy GPU-time
    double decision_us_mean = 0.0;  // placement time per round (aware or first fit), microseconds
    double decision_us_max = 0.0;
    int rounds = 0;
};

// One round's plan, as `explsched-sim net` schedules (and `--bench` times at scale): the core's
// (core/sched/net_plan.hpp), which slurmctld's placement round runs too.
using net::plan_round;
using net::Planned;
using net::PlanSettings;
using net::RoundPlan;

Result<NetSimResult> run_net_sim(const std::vector<NetJob>& jobs, const net::PairTable& table,
                                 const NetSimSettings& settings);

// Node counts tried for a job of `gpus` on nodes of `gpus_per_node`: DeepShare's order (most
// nodes first, single node never: it has no isolated throughput for one node).
std::vector<int> net_shapes(int gpus, int nodes, int gpus_per_node);

}  // namespace explsched::sim
