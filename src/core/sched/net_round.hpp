// One placement round for slurmctld (or any host): the cluster's nodes, the running multi-node
// jobs and the pending ones, in plain values; the answer says, per pending job, which nodes to
// require (or that a pin of ours should be dropped) and why. Pending jobs are placed by the
// core's planner (net_plan.hpp) over the priority order: with window W it takes, among the next W
// jobs not yet placed, the one whose placement costs least per GPU (window 1: strict priority
// order), each seeing the ones placed before it, so two jobs are never sent to the same free
// GPUs; a job that fits nowhere now is skipped (backfill: Slurm decides whether the ones after it
// may start). A job the plan placed ahead of a higher-priority job that fits now but finds no room
// after the plan *passes* it: the answer names the job passed, so the caller can have Slurm start
// the placed one first. An `overdue` job (passed for too long) is placed before any plan, in
// priority order: a job is passed for a bounded time only.
// A node's free GPUs are its configured ones less the running multi-node jobs' and `busy_gpus`
// (every other job's), and a job is placed only on nodes with its CPUs and memory free
// (`free_cpus`, `free_mem_mb`), so a pin never sends a job to nodes where it cannot start now.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sched/net_placement.hpp"

namespace explsched::net {

struct RoundNode {
    std::string name;
    int gpus = 0;                   // configured
    bool usable = true;             // up, not drained
    int leaf = -1;                  // leaf switch (Topology), -1 = none known
    int busy_gpus = 0;              // GPUs held by jobs not in the round's `running` (single-node jobs)
    int free_cpus = -1;             // CPUs no job holds; -1 = not counted
    std::int64_t free_mem_mb = -1;  // memory no job holds (memory a consumable); -1 = not counted
    std::int64_t mem_mb = 0;        // the node's memory for jobs (with free_mem_mb)
};

struct RoundRunning {
    std::uint32_t id = 0;
    std::string model;
    int gpus = 0;  // total
    std::vector<int> nodes;
    int cpus_per_node = 0;             // the most it holds on one of its nodes (counted in free_cpus)
    std::int64_t mem_per_node_mb = 0;  // likewise, memory
};

struct RoundPending {
    std::uint32_t id = 0;
    std::string model;
    int gpus = 0;   // total
    int nodes = 0;  // node count it asked for (>= 2)
    double priority = 0.0;
    std::vector<bool> allowed;         // by node index: in its partition, not excluded
    int cpus_per_node = 0;             // CPUs it needs on each node (0 = not counted)
    std::int64_t mem_per_node_mb = 0;  // memory it needs on each node; -1 = the whole node's
    bool overdue = false;              // passed long enough: placed before the plan
};

struct RoundAnswer {
    std::uint32_t id = 0;
    bool pin = false;  // require `nodes`; false: no set fits now (drop a pin of ours)
    std::vector<int> nodes;
    std::string nodes_text;  // "n3,n4"
    double ratio = 1.0;
    std::string reason;  // "placement: nodes n3,n4, predicted 0.97 of isolated"; empty: no opinion
    // A placed job: its position in the plan (0 first); the highest-priority job it passes (0: none).
    // A job not placed: whether it fits now and is passed (the plan gave its room to lower ones).
    std::size_t order = 0;
    std::uint32_t passes = 0;
    bool passed = false;
};

// Migration (DeepShare's preemption, off unless asked): the running multi-node job with the lowest
// predicted ratio below `below`, when the same shape elsewhere (its own GPUs counted free) is
// predicted at least `margin` better. At most one a round; `skip` lists jobs not to move (moved
// recently). Empty when none.
struct Migration {
    std::uint32_t id = 0;
    double ratio_now = 1.0, ratio_there = 1.0;
    std::string nodes_text;  // where it would go (the next round re-places it once pending)
    std::string reason;      // "migrate: predicted 0.33 of isolated here, 1.00 on n3,n4"
};
std::optional<Migration> choose_migration(const ContentionModel& model, const std::vector<RoundNode>& nodes,
                                          const std::vector<RoundRunning>& running, double below,
                                          double margin, const std::vector<std::uint32_t>& skip,
                                          double uplink_capacity = 4.0);

// What a host placing round after round (slurmctld) keeps between rounds: the running jobs' state,
// brought up to date from each round's list (the jobs that ended removed, the new or moved ones
// added: no rebuild of a thousand jobs), and the node costs on it (NodeCosts::rebind), so nodes
// whose jobs did not change are not costed again. The state is rebuilt when the nodes, their leaf
// switches or the table's keys change; learning that changes only speeds and ratios keeps it (the
// node costs are made again). Answers are the same with or without one.
class RoundCache {
public:
    RoundCache() = default;
    // Rounds in a row that kept the running jobs' state (diagnostics, tests).
    std::size_t kept_states() const { return kept_; }
    // Model names whose table types are remembered (at most kMaxModels: they are users' words).
    std::size_t models_kept() const { return types_.models(); }
    static constexpr std::size_t kMaxModels = ShapeTypes::kMaxModels;
    const NodeCosts& costs() const { return costs_; }
    // Tests: every ranking the node costs re-rank is compared with a scan (NodeCosts).
    void check_rankings(bool on) { costs_.check_rankings(on); }

private:
    friend std::vector<RoundAnswer> placement_round(const ContentionModel&, const std::vector<RoundNode>&,
                                                    const std::vector<RoundRunning>&,
                                                    std::vector<RoundPending>, double, RoundCache*,
                                                    std::size_t);
    std::optional<NetState> state_;
    std::vector<int> leaf_;
    std::uint64_t keys_ = 0;  // PairTable::keys_fingerprint() the state's types were found in
    ShapeTypes types_;        // the running jobs' types, looked up without building a key
    // each running job as the last round listed it (the state holds the multi-node ones, and
    // their nodes)
    struct Listed {
        std::string model;
        int gpus = 0;
        int count = 0;            // nodes
        int node = -1;            // the first (a single-node job's one)
        std::uint64_t round = 0;  // the last round that listed it
    };
    IdMap<Listed> listed_;
    std::uint64_t rounds_ = 0;
    NodeCosts costs_;
    std::size_t kept_ = 0;
};

// The GPUs free on each node now, as a round counts them: configured, less `busy_gpus` and the
// running jobs' (may be negative on an over-full node).
std::vector<int> free_gpus(const std::vector<RoundNode>& nodes, const std::vector<RoundRunning>& running);

// How many jobs shaped like `p` the nodes would hold now, side by side, nodes shared: the free
// GPUs (`free`, from free_gpus) of its allowed usable nodes in units of its GPUs per node, or for
// a job without GPUs its free CPUs (a node whose CPUs are not counted holds one), over its node
// count. An upper bound, no placement made: slurmctld splits that many tasks off a job array to
// place them (doc/placement.md).
std::size_t jobs_that_fit(const RoundPending& p, const std::vector<RoundNode>& nodes,
                          const std::vector<int>& free);

// `carry` (optional): kept from round to round (RoundCache). Answers are in priority order
// (highest first, ties by id). `window`: the planner's (1: priority order).
std::vector<RoundAnswer> placement_round(const ContentionModel& model, const std::vector<RoundNode>& nodes,
                                         const std::vector<RoundRunning>& running,
                                         std::vector<RoundPending> pending, double uplink_capacity = 4.0,
                                         RoundCache* carry = nullptr, std::size_t window = 1);

}  // namespace explsched::net
