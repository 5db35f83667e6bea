// One round's plan of which pending multi-node jobs start where: the simulator's scheduler
// (`explsched-sim net`, its `--bench`) and slurmctld's placement round (net_round.hpp) share it.
//
// `queue`: the pending jobs in the policy's (priority) order. A greedy plan with window W takes,
// among the next W jobs of the queue not yet taken, the one whose placement costs least per GPU
// (aware: choose_placement; blind: first fit with W = 1), until the head does not fit (or, with
// backfill, the queue ends: a blocked head is passed and the window moves on). Each window of
// `windows` is planned and the plan with the most predicted useful GPUs (GPUs x ratio x shape
// speed) is returned, ties to the smaller window. Jobs of one kind (the same request, and for the
// hooks the same nodes and needs) share a score on one state. Within a plan a candidate's score is
// kept from one pick to the next; when a pick lands on one of its nodes or on a node of a job it
// would join it turns stale and serves as a bound (more jobs only add contention and take room):
// the cheapest candidate is scored again until the cheapest is fresh (lazy greedy). The scores
// before the first pick are shared by all windows. `state` and `free` are the running jobs and free
// GPUs; both are as they were on return.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "core/sched/net_contention.hpp"
#include "core/sched/net_placement.hpp"

namespace explsched::net {

struct PlanSettings {
    std::vector<std::size_t> windows{1};
    bool aware = true;
    bool backfill = false;
    double min_gain = 0.0;  // hold a job whose useful GPUs less the others' loss < min_gain x GPUs
};

struct Planned {
    std::size_t index = 0;  // in the queue
    PlacementChoice choice;
};

struct RoundPlan {
    std::vector<Planned> placed;  // in the order picked
    double useful = 0.0;
    std::size_t window = 1;
    std::size_t evaluations = 0;  // placements scored, over all windows
};

// What a caller with more than GPUs to count (slurmctld: CPUs, memory, partitions) adds; all
// optional. `mask(k, free)`: the GPUs queue job k may use on each node now (free's size; -1 = not
// this node), given the plan's free GPUs so far; called before each score of k, the reference
// read before the next call of a hook. `kind[k]`: jobs of one kind are scored once per state
// (they must have the same request and mask); empty: the kind is the request's (model, GPUs, node
// counts). `picked(k, nodes)`: job k was taken onto `nodes` (the caller takes its other resources
// there; only those nodes' masks change). `reset()`: a plan is being undone (before each window's
// plan but the first, and before returning): every pick's resources are free again, so on return
// the caller's resources are as they were.
struct PlanHooks {
    std::function<const std::vector<int>&(std::size_t, const std::vector<int>&)> mask;
    std::vector<std::size_t> kind;
    std::function<void(std::size_t, const std::vector<int>&)> picked;
    std::function<void()> reset;
    // `carry` is bound to this model and state already (the caller rebound it): not rebound again.
    bool costs_bound = false;
};

// `carry` (optional): node costs kept from the last round (NodeCosts::rebind); same plan.
RoundPlan plan_round(const ContentionModel& model, NetState& state, const std::vector<int>& free,
                     const std::vector<PlacementRequest>& queue, const PlanSettings& settings,
                     NodeCosts* carry = nullptr, const PlanHooks* hooks = nullptr);

}  // namespace explsched::net
