#include "sim/sim_options.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string_view>

#include "core/base/strings.hpp"
#include "core/sched/settings.hpp"

namespace explsched::sim {

const char* sim_usage() {
    return "usage: explsched-sim --trace FILE --curves DIR [--gpus N | --cluster SPEC]\n"
           "                     [--policies fifo,explsched,...] [--seeds 0,1,2] [--jobs N] [--json]\n"
           "       explsched-sim net [options]   (distributed jobs sharing network links; net --help)\n"
           "\n"
           "Replays a job trace on a simulated GPU cluster under each policy and seed, and prints\n"
           "profit, GPU-hours, time to each sweep's best, JCT, makespan and decision time.\n"
           "\n"
           "  --trace FILE          philly.csv, a Pollux workload CSV, or `sacct -P` output\n"
           "  --trace-format F      auto (default), philly, pollux, sacct\n"
           "  --curves DIR          directory of learning curves (one sub-directory per application)\n"
           "  --throughputs FILE    Gavel throughput JSON (GPU-type speeds; needed with several types)\n"
           "  --gpus N              N v100 GPUs on nodes of 8 (default 64)\n"
           "  --cluster SPEC        TYPE:NODESxGPUS[,...], e.g. v100:16x8,p100:8x4,k80:8x4\n"
           "  --policies LIST       comma-separated; default all: fifo,tiresias,gandiva,gavel,asha,\n"
           "                        slaq,oasis,explsched,oracle (gavel only when built with GLPK)\n"
           "  --seeds LIST          comma-separated seeds (default 0)\n"
           "  --jobs N              simulate the first N trace rows (default all)\n"
           "  --sweep-size K        trials per sweep when the trace does not group them (default 8)\n"
           "  --variation V         hp (default): trials vary like a hyperparameter sweep;\n"
           "                        none: each trial is a recorded curve as is\n"
           "  --own-sizes           sweeps formed from philly rows keep each row's GPUs and duration\n"
           "                        (default: the sweep's first row's, one model per sweep)\n"
           "  --period S            scheduling period in seconds (default 60)\n"
           "  --restart-cost S      GPU seconds lost per restart after preemption (default 60)\n"
           "  --requeue-delay S     a preempted job may restart after S seconds (default 60)\n"
           "  --max-time S          stop the clock at S simulated seconds (default: run to the end)\n"
           "  --min-run S           no preemption within S seconds of a start (default 600)\n"
           "  --params LIST         explsched's engine settings, as in PriorityParameters\n"
           "                        (e.g. hopeless_probability=0.05,preempt_margin=0.5)\n"
           "  --slice S             time slice of gandiva and gavel (default 1800)\n"
           "  --asha-reduction E    asha's reduction factor: a trial goes on at a rung only within\n"
           "                        the top 1/E of its sweep there (default 3)\n"
           "  --asha-rungs K        asha's rungs, at max_step / E^K .. max_step / E (default 3)\n"
           "  --rerank S            explsched and slaq re-assess every S seconds (default 60, the\n"
           "                        recommended PriorityCalcPeriod=1; Slurm's default is 300)\n"
           "  --json                print the summary as JSON\n"
           "  --output FILE         also write every trial's record (for explsched show/why/plot --sim)\n"
           "  --export-workload FILE  write each seed's workload (trials, curves, speeds, sweeps'\n"
           "                        best) as JSON and exit without simulating (contrib/optuna_replay.py)\n"
           "  --quiet               no progress lines\n";
}

nlohmann::json SimOptions::describe() const {
    nlohmann::json j;
    j["trace"] = trace;
    j["trace_format"] = to_string(trace_format);
    j["curves"] = curves;
    j["throughputs"] = throughputs;
    j["cluster"] = cluster.describe();
    j["gpus"] = cluster.total_gpus();
    j["policies"] = policies;
    j["seeds"] = seeds;
    j["jobs"] = workload.max_jobs;
    j["sweep_size"] = workload.sweep_size;
    j["variation"] = to_string(workload.variation);
    j["uniform_sweeps"] = workload.uniform_sweeps;
    j["period_s"] = sim.period_s;
    j["restart_cost_s"] = sim.restart_cost_s;
    j["requeue_delay_s"] = sim.requeue_delay_s;
    j["max_time_s"] = sim.max_time_s;
    j["min_run_s"] = policy.min_run_s;
    j["slice_s"] = policy.slice_s;
    j["asha_reduction"] = policy.asha_reduction;
    j["asha_rungs"] = policy.asha_rungs;
    j["rerank_period_s"] = policy.rerank_period_s;
    j["params"] = params;
    return j;
}

namespace {

Result<double> seconds(std::string_view value) {
    const auto v = parse_finite_double(value);
    if (!v || *v < 0.0) return make_error("'" + std::string(value) + "' is not seconds >= 0");
    return *v;
}

Result<std::uint64_t> count(std::string_view value, std::uint64_t min) {
    const auto v = parse_uint64(value);
    if (!v || *v < min) {
        return make_error("'" + std::string(value) + "' is not a whole number >= " + std::to_string(min));
    }
    return *v;
}

}  // namespace

Result<SimOptions> parse_sim_options(int argc, char** argv) {
    SimOptions o;
    bool have_gpus = false, have_cluster = false, have_min_run = false;
    std::uint32_t gpus = 64;
    using Handler = std::function<Status(std::string_view)>;
    const auto set_seconds = [](double& field) {
        return [&field](std::string_view v) -> Status {
            auto s = seconds(v);
            if (!s) return s.error();
            field = *s;
            return {};
        };
    };
    struct Option {
        const char* name;
        Handler handler;
    };
    const Option table[] = {
        {"--trace",
         [&](std::string_view v) -> Status {
             o.trace = std::string(v);
             return {};
         }},
        {"--trace-format",
         [&](std::string_view v) -> Status {
             auto f = parse_trace_format(v);
             if (!f) return f.error();
             o.trace_format = *f;
             return {};
         }},
        {"--curves",
         [&](std::string_view v) -> Status {
             o.curves = std::string(v);
             return {};
         }},
        {"--throughputs",
         [&](std::string_view v) -> Status {
             o.throughputs = std::string(v);
             return {};
         }},
        {"--gpus",
         [&](std::string_view v) -> Status {
             auto n = count(v, 1);
             if (!n) return n.error();
             if (*n > 10000000) return make_error("'" + std::string(v) + "' GPUs is implausible");
             gpus = static_cast<std::uint32_t>(*n);
             have_gpus = true;
             return {};
         }},
        {"--cluster",
         [&](std::string_view v) -> Status {
             auto spec = parse_cluster_spec(v);
             if (!spec) return spec.error();
             o.cluster = std::move(spec.value());
             have_cluster = true;
             return {};
         }},
        {"--policies",
         [&](std::string_view v) -> Status {
             o.policies.clear();
             for (auto name : split(v, ",")) {
                 name = trim(name);
                 const auto& known = policy_names();
                 if (std::find(known.begin(), known.end(), name) == known.end()) {
                     std::string list;
                     for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
                     return make_error("'" + std::string(name) + "' is not one of " + list);
                 }
                 if (std::find(o.policies.begin(), o.policies.end(), name) == o.policies.end()) {
                     o.policies.emplace_back(name);
                 }
             }
             return {};
         }},
        {"--seeds",
         [&](std::string_view v) -> Status {
             o.seeds.clear();
             for (auto item : split(v, ",")) {
                 const auto s = parse_uint64(trim(item));
                 if (!s) return make_error("'" + std::string(item) + "' is not a seed (a whole number)");
                 o.seeds.push_back(*s);
             }
             return {};
         }},
        {"--jobs",
         [&](std::string_view v) -> Status {
             auto n = count(v, 1);
             if (!n) return n.error();
             o.workload.max_jobs = static_cast<std::size_t>(*n);
             return {};
         }},
        {"--sweep-size",
         [&](std::string_view v) -> Status {
             auto n = count(v, 1);
             if (!n) return n.error();
             o.workload.sweep_size = static_cast<std::size_t>(*n);
             return {};
         }},
        {"--variation",
         [&](std::string_view v) -> Status {
             auto x = parse_variation(v);
             if (!x) return x.error();
             o.workload.variation = *x;
             return {};
         }},
        {"--period",
         [&](std::string_view v) -> Status {
             auto s = seconds(v);
             if (!s) return s.error();
             if (*s <= 0.0) return make_error("'" + std::string(v) + "' must be > 0");
             o.sim.period_s = *s;
             return {};
         }},
        {"--restart-cost", set_seconds(o.sim.restart_cost_s)},
        {"--requeue-delay", set_seconds(o.sim.requeue_delay_s)},
        {"--max-time", set_seconds(o.sim.max_time_s)},
        {"--min-run",
         [&](std::string_view v) -> Status {
             have_min_run = true;
             return set_seconds(o.policy.min_run_s)(v);
         }},
        {"--params",
         [&](std::string_view v) -> Status {
             auto settings = parse_settings(v, ",");
             if (!settings) return settings.error();
             o.policy.engine = settings->engine;
             o.params = std::string(v);
             return {};
         }},
        {"--slice", set_seconds(o.policy.slice_s)},
        {"--asha-reduction",
         [&](std::string_view v) -> Status {
             const auto x = parse_finite_double(v);
             if (!x || !(*x > 1.0) || *x > 100.0)
                 return make_error("'" + std::string(v) + "' is not a reduction factor in (1, 100]");
             o.policy.asha_reduction = *x;
             return {};
         }},
        {"--asha-rungs",
         [&](std::string_view v) -> Status {
             auto n = count(v, 1);
             if (!n) return n.error();
             if (*n > 10) return make_error("'" + std::string(v) + "' is more than 10 rungs");
             o.policy.asha_rungs = static_cast<std::size_t>(*n);
             return {};
         }},
        {"--rerank",
         [&](std::string_view v) -> Status {
             auto s = seconds(v);
             if (!s) return s.error();
             if (*s <= 0.0) return make_error("'" + std::string(v) + "' must be > 0");
             o.policy.rerank_period_s = *s;
             return {};
         }},
        {"--output",
         [&](std::string_view v) -> Status {
             o.output = std::string(v);
             return {};
         }},
        {"--export-workload",
         [&](std::string_view v) -> Status {
             o.export_workload = std::string(v);
             return {};
         }},
    };
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            o.help = true;
            return o;
        }
        if (arg == "--json") {
            o.json = true;
            continue;
        }
        if (arg == "--quiet") {
            o.quiet = true;
            continue;
        }
        if (arg == "--own-sizes") {
            o.workload.uniform_sweeps = false;
            continue;
        }
        std::string_view name = arg, value;
        bool inline_value = false;
        if (const auto eq = arg.find('='); eq != std::string_view::npos && arg.substr(0, 2) == "--") {
            name = arg.substr(0, eq);
            value = arg.substr(eq + 1);
            inline_value = true;
        }
        const Option* found = nullptr;
        for (const Option& opt : table) {
            if (name == opt.name) found = &opt;
        }
        if (found == nullptr) return make_error("unknown option '" + std::string(arg) + "'");
        if (!inline_value) {
            if (i + 1 >= argc) return make_error(std::string(name) + ": needs a value");
            value = argv[++i];
        }
        if (auto ok = found->handler(value); !ok)
            return make_error(std::string(name) + ": " + ok.error().message);
    }
    if (o.trace.empty()) return make_error("--trace FILE is required");
    if (o.curves.empty()) return make_error("--curves DIR is required");
    if (have_gpus && have_cluster) return make_error("give --gpus or --cluster, not both");
    if (!have_cluster) o.cluster = homogeneous_cluster(gpus);
    if (o.policies.empty()) o.policies = policy_names();
    // One grace for every policy: --min-run wins over --params min_run.
    if (have_min_run)
        o.policy.engine.min_run_s = o.policy.min_run_s;
    else
        o.policy.min_run_s = o.policy.engine.min_run_s;
    if (o.seeds.empty()) return make_error("--seeds: no seed given");
    return o;
}

}  // namespace explsched::sim
