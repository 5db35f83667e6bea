// explsched-sim: replays a job trace on a simulated GPU cluster under several scheduling
// policies, over several seeds, and prints the comparison (doc/results.md explains every column).
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "sim/net_main.hpp"
#include "sim/report.hpp"
#include "sim/sim_options.hpp"
#include "sim/simulator.hpp"
#include "sim/workload_export.hpp"

namespace {

using namespace explsched;
using namespace explsched::sim;

// --export-workload: every seed's workload, for replays outside the simulator.
int export_workloads(const SimOptions& options, const Trace& trace, const CurveLibrary& library,
                     const ThroughputTable& throughputs) {
    nlohmann::json seeds = nlohmann::json::array();
    for (std::uint64_t seed : options.seeds) {
        WorkloadOptions wopts = options.workload;
        wopts.seed = seed;
        auto workload = build_workload(trace, library, wopts);
        if (!workload) {
            std::fprintf(stderr, "explsched-sim: %s: %s\n", options.trace.c_str(),
                         workload.error().message.c_str());
            return 1;
        }
        seeds.push_back(workload_json(workload.value(), library, throughputs, options.cluster,
                                      options.sim.reference_gpu, seed));
    }
    const nlohmann::json out = {
        {"config", options.describe()}, {"tolerance", kBestTolerance}, {"seeds", std::move(seeds)}};
    std::ofstream file(options.export_workload);
    file << out.dump() << "\n";
    if (!file) {
        std::fprintf(stderr, "explsched-sim: %s: cannot write: %s\n", options.export_workload.c_str(),
                     std::strerror(errno));
        return 1;
    }
    return 0;
}

int run(const SimOptions& options) {
    auto trace = read_trace(options.trace, options.trace_format);
    if (!trace) {
        std::fprintf(stderr, "explsched-sim: %s\n", trace.error().message.c_str());
        return 1;
    }
    auto library = CurveLibrary::load(options.curves);
    if (!library) {
        std::fprintf(stderr, "explsched-sim: %s\n", library.error().message.c_str());
        return 1;
    }
    ThroughputTable throughputs;
    if (!options.throughputs.empty()) {
        auto table = ThroughputTable::load_gavel_file(options.throughputs);
        if (!table) {
            std::fprintf(stderr, "explsched-sim: %s\n", table.error().message.c_str());
            return 1;
        }
        throughputs = std::move(table.value());
    } else if (options.cluster.types().size() > 1 && !options.quiet) {
        std::fprintf(stderr,
                     "explsched-sim: warning: several GPU types but no --throughputs: all types run "
                     "at the same speed\n");
    }
    if (!options.export_workload.empty())
        return export_workloads(options, trace.value(), library.value(), throughputs);
    std::vector<RunRecord> runs;
    nlohmann::json detail = nlohmann::json::array();
    for (std::uint64_t seed : options.seeds) {
        WorkloadOptions wopts = options.workload;
        wopts.seed = seed;
        auto workload = build_workload(trace.value(), library.value(), wopts);
        if (!workload) {
            std::fprintf(stderr, "explsched-sim: %s: %s\n", options.trace.c_str(),
                         workload.error().message.c_str());
            return 1;
        }
        if (!options.quiet && seed == options.seeds.front() && workload->skipped_rows > 0) {
            std::string apps;
            for (const std::string& a : workload->skipped_applications)
                apps += (apps.empty() ? "" : ", ") + a;
            std::fprintf(stderr,
                         "explsched-sim: note: skipped %zu trace rows of applications without curves (%s)\n",
                         workload->skipped_rows, apps.c_str());
        }
        for (const std::string& name : options.policies) {
            PolicyContext context;
            context.library = &library.value();
            context.throughputs = &throughputs;
            context.cluster = &options.cluster;
            context.reference_gpu = options.sim.reference_gpu;
            context.settings = options.policy;
            context.settings.record = !options.output.empty();
            auto policy = make_policy(name, context, workload.value());
            if (!policy) {
                std::fprintf(stderr, "explsched-sim: %s\n", policy.error().message.c_str());
                return 1;
            }
            SimSettings settings = options.sim;
            settings.record = !options.output.empty();
            auto result =
                simulate(workload.value(), library.value(), throughputs, options.cluster, **policy, settings);
            if (!result) {
                std::fprintf(stderr, "explsched-sim: seed %llu: %s\n", static_cast<unsigned long long>(seed),
                             result.error().message.c_str());
                return 1;
            }
            Metrics m = compute_metrics(workload.value(), result.value(), options.cluster.total_gpus());
            m.seed = seed;
            runs.push_back({seed, m, result->sweep_time_to_best});
            if (!options.quiet && !options.json) {
                std::fprintf(stderr, "explsched-sim: seed %llu %-9s %zu trials, %zu rounds, %.1f s\n",
                             static_cast<unsigned long long>(seed), name.c_str(), m.trials, m.rounds,
                             m.wall_s);
            }
            if (!options.output.empty()) {
                detail.push_back({{"policy", name},
                                  {"seed", seed},
                                  {"metrics", metrics_json(m)},
                                  {"trials", trials_json(workload.value(), library.value(), result.value())},
                                  {"sweeps", sweeps_json(workload.value(), result.value())}});
            }
        }
    }
    nlohmann::json summary = summary_json(runs, options.policies);
    summary["config"] = options.describe();
    if (!options.output.empty()) {
        nlohmann::json full = summary;
        full["results"] = std::move(detail);
        std::ofstream out(options.output);
        out << full.dump() << "\n";
        if (!out) {
            std::fprintf(stderr, "explsched-sim: %s: cannot write: %s\n", options.output.c_str(),
                         std::strerror(errno));
            return 1;
        }
    }
    if (options.json) {
        std::printf("%s\n", summary.dump(2).c_str());
    } else {
        std::printf("%s", format_table(runs, options.policies).c_str());
        std::printf("\n%s", format_targets(runs).c_str());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc > 1 && std::strcmp(argv[1], "net") == 0) return explsched::sim::net_main(argc - 1, argv + 1);
        auto options = explsched::sim::parse_sim_options(argc, argv);
        if (!options) {
            std::fprintf(stderr, "explsched-sim: %s\n", options.error().message.c_str());
            std::fprintf(stderr, "Try 'explsched-sim --help'.\n");
            return 2;
        }
        if (options->help) {
            std::printf("%s", explsched::sim::sim_usage());
            return 0;
        }
        return run(options.value());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "explsched-sim: internal error: %s\n", e.what());
        return 70;
    }
}
