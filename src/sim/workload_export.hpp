// The workload a seed generates, written out so that tools outside the simulator (the Optuna
// replay, contrib/optuna_replay.py) run exactly the trials the simulator's policies run: per trial
// its sweep, arrival, GPUs, speed on each GPU type, and its curve (steps, metrics and their
// normalised quality); per sweep its best trial and the quality that counts as reaching it.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/sched/throughput_table.hpp"
#include "sim/cluster.hpp"
#include "sim/curve_library.hpp"
#include "sim/workload.hpp"

namespace explsched::sim {

// One seed's workload as JSON: {"seed", "sweeps": [...], "trials": [...]}. A trial's "speed" maps
// each GPU type of `cluster` to steps per second there (the simulator's own speed rule), its
// "quality" is null where the metric is NaN (diverged).
nlohmann::json workload_json(const Workload& workload, const CurveLibrary& library,
                             const ThroughputTable& throughputs, const ClusterSpec& cluster,
                             const std::string& reference_gpu, std::uint64_t seed);

// Steps per second of `trial` on GPU type `type`: its curve's length over its duration on the
// reference type, scaled by the throughput table's ratio (1 where the table does not know).
double trial_speed(const SimTrial& trial, const Application& app, const ThroughputTable& throughputs,
                   const std::string& reference_gpu, const std::string& type);

}  // namespace explsched::sim
