// The figures a simulation is judged by (doc/results.md defines each one precisely):
//  profit            Σ over sweeps of the normalised quality of the best metric any of its trials
//                    reported (quality 0 = the application's untrained level, 1 = the best
//                    report in its curve library), so a sweep yields at most 1;
//  profit/GPU-h      profit divided by all GPU-hours the trials held (restart costs included);
//  non-best GPU-h    GPU-hours spent on trials other than their sweep's true best (the trials
//                    an omniscient scheduler would stop at once: every such hour is exploration);
//  stopped GPU-h     GPU-hours of the trials the policy itself stopped;
//  time to best      per sweep, from its first arrival until a trial reports within 0.01 of the
//                    best trial's final quality (sweeps that never get there are counted apart);
//                    its bound: the same had the sweep's quickest trial to get there run from its
//                    arrival on the fastest GPUs, never waiting (no policy does better);
//  JCT               end - arrival of each trial that ended (finished or stopped);
//  makespan          last end - first arrival;
//  decision time     the policy's wall time per round.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/simulator.hpp"
#include "sim/workload.hpp"

namespace explsched::sim {

struct Metrics {
    std::string policy;
    std::uint64_t seed = 0;
    std::size_t trials = 0, sweeps = 0;
    std::size_t finished = 0, stopped = 0, unfinished = 0;
    double profit = 0.0;
    double profit_bound = 0.0;  // Σ sweeps' best quality: the most any policy can get
    double gpu_hours = 0.0;
    double profit_per_gpu_hour = 0.0;
    double non_best_gpu_hours = 0.0;
    double stopped_gpu_hours = 0.0;
    double sweeps_reaching_best = 0.0;  // fraction
    double time_to_best_mean_h = 0.0;   // over sweeps that reached it
    double time_to_best_median_h = 0.0;
    // SimResult::sweep_time_to_best_bound, mean over the sweeps this policy got to their best
    // (so time_to_best_mean_h >= this for every policy), and over every sweep that has one (the
    // same for all policies on one workload: the least mean time to best a policy that gets
    // every sweep to its best can have).
    double time_to_best_bound_h = 0.0;
    double time_to_best_bound_all_h = 0.0;
    double jct_mean_h = 0.0, jct_p99_h = 0.0;
    double makespan_h = 0.0;
    double utilisation = 0.0;  // GPU-hours / (GPUs × makespan)
    std::size_t preemptions = 0;
    std::size_t pauses = 0;   // freeze-thaw: trials paused with their checkpoint
    std::size_t resumes = 0;  // ... and resumed
    std::size_t rounds = 0;
    double decision_ms_mean = 0.0, decision_ms_p99 = 0.0, decision_ms_max = 0.0;
    double wall_s = 0.0;
};

Metrics compute_metrics(const Workload& workload, const SimResult& result, std::uint32_t cluster_gpus);

// p-quantile (0..1) of `values` by linear interpolation (NaN if empty); reorders `values`.
double quantile(std::vector<double>& values, double p);

}  // namespace explsched::sim
