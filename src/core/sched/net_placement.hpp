// Where a multi-node job should run: among the node sets with room for it, the one with the least
// predicted loss of throughput, counting the job's own slowdown (and a shape's slower isolated
// speed) and the slowdown it brings to the running jobs it would join.
//
// Candidates, per allowed node count n (gpus divisible by n): every node with gpus/n free GPUs is
// scored by first-order cost: the contention the job would meet there plus the GPU-weighted
// stretch it would cause the jobs there; the n cheapest form the shape's candidate, which is then
// scored exactly (ContentionModel). Cost: O(nodes x jobs per node) per decision.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/sched/net_contention.hpp"

namespace explsched::net {

struct PlacementRequest {
    std::string model;             // table key's MODEL; the type is shape_key(model, gpus, n)
    int gpus = 0;                  // total GPUs
    std::vector<int> node_counts;  // allowed node counts, in the order a blind scheduler tries
};

struct PlacementChoice {
    bool found = false;
    std::vector<int> nodes;  // ascending
    int type = PairTable::unknown;
    double ratio = 1.0;        // predicted throughput / isolated throughput on these nodes
    double shape_speed = 1.0;  // isolated throughput of this shape / the best shape's
    double others_loss = 0.0;  // GPU-weighted ratio the joined jobs lose
    double cost = 0.0;         // gpus * (1 - ratio * shape_speed) + others_loss
    int joined = 0;            // running multi-node jobs sharing a node with it
};

// Contention-aware choice.
PlacementChoice choose_placement(const ContentionModel& model, const NetState& state,
                                 const std::vector<int>& free_gpus, const PlacementRequest& request);
// The blind baseline (DeepShare's LAS/SRTF placement): the first node count in the request's
// order that fits, on the lowest-numbered nodes with room; scored with the model for reporting.
PlacementChoice first_fit_placement(const ContentionModel& model, const NetState& state,
                                    const std::vector<int>& free_gpus, const PlacementRequest& request);

// "placement: nodes n3,n4, predicted 0.97 of isolated" (names from `node_names`, indexed).
std::string placement_reason(const PlacementChoice& choice, const std::vector<std::string>& node_names);

}  // namespace explsched::net
