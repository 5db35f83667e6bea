// explsched kstat [--runtime-dir DIR | --endpoint PATH ...] [--json]
// Per-job statistics of the kernel schedulers (explsched-kerneld) on this node: launches seen,
// kernels admitted, launches held for admission, time spent waiting. Reads each GPU's
// published status file (kerneld.status, the daemon's, mode 0644) read-only; never disturbs the daemon.
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "kernel_sched/ksched_shm.hpp"
#include "kernel_sched/kstat_read.hpp"

namespace explsched::cli {

int cmd_kstat(int argc, char** argv) {
    std::string runtime_dir = ksched::kDefaultRuntimeDir;
    std::vector<std::string> endpoints;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::printf(
                "usage: explsched kstat [--runtime-dir DIR | --endpoint PATH ...] [--json]\n"
                "Per-job kernel scheduling statistics of this node's GPUs: launches seen, kernels\n"
                "admitted, launches held for admission and their wait. Default runtime directory:\n"
                "%s (the plugstack.conf setting of the SPANK plugin).\n",
                ksched::kDefaultRuntimeDir);
            return 0;
        } else if (arg == "--json") {
            json = true;
        } else if (arg == "--runtime-dir" && i + 1 < argc) {
            runtime_dir = argv[++i];
        } else if (arg == "--endpoint" && i + 1 < argc) {
            endpoints.emplace_back(argv[++i]);
        } else {
            std::fprintf(stderr, "explsched kstat: unknown or incomplete option '%s'\n", arg.c_str());
            return 2;
        }
    }
    if (endpoints.empty()) endpoints = ksched::find_endpoints(runtime_dir);
    if (endpoints.empty()) {
        std::fprintf(stderr, "explsched: kstat: no kernel scheduler under %s (no gpu<N>/kerneld.status)\n",
                     runtime_dir.c_str());
        return 1;
    }
    int status = 0;
    nlohmann::json out = nlohmann::json::array();
    if (!json)
        std::printf("%-4s %-8s %-5s %-24s %9s %10s %10s %8s %12s %12s %8s %8s\n", "GPU", "daemon", "state",
                    "job", "priority", "launches", "admitted", "held", "wait_us_avg", "wait_us_max",
                    "dropped", "refused");
    for (const std::string& e : endpoints) {
        auto g = ksched::read_kstat(e);
        if (!g) {
            std::fprintf(stderr, "explsched: kstat: %s\n", g.error().message.c_str());
            status = 1;
            continue;
        }
        for (const ksched::KstatJob& j : g->jobs) {
            const double avg =
                j.held > 0 ? static_cast<double>(j.wait_ns_total) / 1e3 / static_cast<double>(j.held) : 0.0;
            if (json) {
                out.push_back({{"gpu", g->gpu_index},
                               {"daemon_pid", g->daemon_pid},
                               {"alive", g->alive},
                               {"job", j.job},
                               {"clients_live", j.clients_live},
                               {"priority", j.priority},
                               {"launches", j.launches},
                               {"admitted", j.admitted},
                               {"held", j.held},
                               {"completed", j.completed},
                               {"wait_us_total", static_cast<double>(j.wait_ns_total) / 1e3},
                               {"wait_us_max", static_cast<double>(j.wait_ns_max) / 1e3},
                               {"dropped", j.dropped},
                               {"refused", j.refused}});
            } else {
                std::printf(
                    "%-4u %-8d %-5s %-24s %9.3g %10llu %10llu %8llu %12.1f %12.1f %8llu %8llu\n",
                    g->gpu_index, g->daemon_pid, g->alive ? "up" : "stale", j.job.c_str(), j.priority,
                    static_cast<unsigned long long>(j.launches), static_cast<unsigned long long>(j.admitted),
                    static_cast<unsigned long long>(j.held), avg, static_cast<double>(j.wait_ns_max) / 1e3,
                    static_cast<unsigned long long>(j.dropped), static_cast<unsigned long long>(j.refused));
            }
        }
        if (!json && g->jobs.empty())
            std::printf("%-4u %-8d %-5s %-24s\n", g->gpu_index, g->daemon_pid, g->alive ? "up" : "stale",
                        "(no jobs yet)");
    }
    if (json) std::printf("%s\n", out.dump(2).c_str());
    return status;
}

}  // namespace explsched::cli
