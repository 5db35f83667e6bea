// Command line of explsched-sim, parsed into one struct (pure: no I/O, errors as values).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/result.hpp"
#include "sim/cluster.hpp"
#include "sim/sim_policy.hpp"
#include "sim/simulator.hpp"
#include "sim/trace.hpp"
#include "sim/workload.hpp"

namespace explsched::sim {

struct SimOptions {
    std::string trace;
    TraceFormat trace_format = TraceFormat::automatic;
    std::string curves;
    std::string throughputs;  // Gavel JSON; empty = every type at reference speed
    ClusterSpec cluster;      // --gpus N (v100 nodes of 8) or --cluster SPEC
    std::vector<std::string> policies;
    std::vector<std::uint64_t> seeds = {0};
    WorkloadOptions workload;
    SimSettings sim;
    PolicySettings policy;
    bool json = false;
    bool quiet = false;
    bool help = false;
    std::string output;           // full result JSON (per-trial records)
    std::string export_workload;  // write each seed's workload as JSON here and simulate nothing
    std::string params;           // --params as given (explsched's engine settings)

    nlohmann::json describe() const;
};

Result<SimOptions> parse_sim_options(int argc, char** argv);
const char* sim_usage();

}  // namespace explsched::sim
