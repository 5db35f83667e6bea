// Trial decisions: what the price rule, the hopeless rule and the ASHA fallback conclude for one
// trial, and whether one job may preempt another. Pure functions of their inputs; the engine
// gathers the inputs each round.
#pragma once

#include <cstddef>
#include <vector>

#include "core/sched/decision.hpp"
#include "core/sched/engine_types.hpp"
#include "core/sched/engine_settings.hpp"

namespace explsched {

// The decision for a hopeless (or diverged) trial under its hopeless action.
Decision hopeless_decision(HopelessAction action, JobState state);

// The price rule: a pending trial runs when its utility is at least the price at the load it
// would create; a running one keeps its GPUs when its utility is at least the price at the
// current load, and below it becomes preemptable, unless it (re)started less than min_run_s ago
// (preempting a trial that has not yet amortised its start-up and checkpoint cost is waste).
void decide_by_price(JobState state, double utility, double price, double load, double running_s,
                     const EngineSettings& settings, Assessment& out);

// ASHA milestones (successive halving rungs) for a trial: its own milestones if it gave any,
// else asha_min_step * eta^k, else max_steps / eta^(rungs - k); empty if none can be derived.
std::vector<double> asha_rungs(const std::vector<double>& milestones, double max_steps,
                               const EngineSettings& settings);

// The metric a curve had at `step`: the value of its last point at or before it (NaN if none).
double metric_at(const std::vector<double>& steps, const std::vector<double>& metrics, double step);

struct AshaRank {
    std::size_t rank = 0;   // 1 = best
    std::size_t of = 0;     // trials of the group that reached the rung
    bool promoted = false;  // within the top ceil(of / eta)
};

// Rank of `value` among `values_at_rung` (which includes it), direction-aware; ties rank best.
AshaRank asha_rank(double value, const std::vector<double>& values_at_rung, Direction direction, double eta);

// The same over values sorted ascending, in O(log n) (the engine ranks whole sweeps each round).
AshaRank asha_rank_sorted(double value, const std::vector<double>& sorted_values, Direction direction,
                          double eta);

// Preemption between two assessed jobs (see Engine::can_preempt).
PreemptVerdict preempt_verdict(const Assessment& preemptor, const Assessment& preemptee,
                               const EngineSettings& settings);

}  // namespace explsched
