// Learning the pair table online in slurmctld (placement_learn=yes): from the throughput the
// running multi-node trials already report (steps/s), a job's speed while other multi-node jobs
// share its nodes, against its own speed while it had its nodes alone.
//
// Per round, for each running multi-node job with a curve: the set of jobs sharing a node with it
// (its "company"). When the company changes, the points reported so far are set aside (the
// change settles); later points (by step, which only grows) are averaged into one observation
// per round. Alone: the job's own alone speed (and its type's) is a running mean. With company:
// ratio = speed / alone speed (the job's own, else its type's), bounded below by the model's
// floor and ignored above `max_ratio`, goes to NetPairEstimator::observe_ratio for the pairs
// (job type, each sharer's type).
//
// Trust: the speed is what the user's process reports. A user can make their own jobs look
// sensitive (others are then placed away from their nodes when another feasible set exists) but
// not below the floor (0.35, DeepShare's): the same harm a real bad pair does, and placement
// never delays a job's start. The table grows by at most EstimatorSettings::max_types types.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/curve_point.hpp"
#include "core/sched/net_round.hpp"
#include "core/sched/net_table.hpp"

namespace explsched::net {

struct LearnSettings {
    double floor = 0.35;  // a ratio below this is taken as this
    EstimatorSettings estimator;
};

class NetLearner {
public:
    NetLearner(PairTable prior, LearnSettings settings = {});

    // One round. `running`: the running multi-node jobs (RoundRunning: model, GPUs, nodes);
    // `curve(id)`: the job's reported points (empty for jobs that report nothing). Returns one
    // line per observation used ("JobId=7 Victim,4,2 beside Bully,4,2: 0.33 of alone"), for
    // the log. Jobs no longer running are forgotten.
    std::vector<std::string> round(const std::vector<RoundRunning>& running,
                                   const std::function<PointSpan(std::uint32_t)>& curve);

    const PairTable& table() const { return estimator_.table(); }
    std::size_t observations() const { return observations_; }

private:
    struct Tracked {
        std::vector<std::uint32_t> company;  // sorted ids
        double settled_after = -1.0;         // points at steps <= this are before the change
        double used_through = -1.0;          // points at steps <= this were used
        double alone = 0.0;                  // its own speed alone (running mean), 0 = unknown
        std::size_t alone_n = 0;
    };
    LearnSettings settings_;
    NetPairEstimator estimator_;
    std::unordered_map<std::uint32_t, Tracked> jobs_;
    std::unordered_map<std::string, std::pair<double, std::size_t>> type_alone_;  // key -> mean, n
    std::size_t observations_ = 0;
};

}  // namespace explsched::net
