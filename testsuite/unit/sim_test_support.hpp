// Small hand-checkable worlds for the simulator's tests: a toy curve library whose numbers can be
// followed by hand, traces written inline, and a one-call "run this policy on that trace".
#pragma once

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/curve_library.hpp"
#include "sim/metrics.hpp"
#include "sim/sim_policy.hpp"
#include "sim/simulator.hpp"
#include "sim/trace.hpp"
#include "sim/workload.hpp"

namespace simtest {

using namespace explsched;
using namespace explsched::sim;

// One application "toy" (accuracy, maximised) with 10 reports at steps 1..10:
//   "good": 0.1 -> 0.9, "mid": 0.1 -> 0.6, "bad": 0.1 -> 0.3 (exponential approach, rate 0.4),
//   "nan": like good, but diverges (NaN) from step 6.
inline Application toy_application(const std::string& name = "toy", const std::string& job_type = "") {
    Application app;
    app.name = name;
    app.job_type = job_type;
    app.direction = Direction::maximize;
    const auto curve = [](const char* variant, double top, bool diverge) {
        CurveVariant v;
        v.name = variant;
        v.step_column = "step";
        for (int k = 1; k <= 10; ++k) {
            v.steps.push_back(k);
            v.metrics.push_back(0.1 + (top - 0.1) * (1.0 - std::exp(-0.4 * k)) / (1.0 - std::exp(-4.0)));
            if (diverge && k >= 6) v.metrics.back() = NAN;
        }
        return v;
    };
    app.variants = {curve("bad", 0.3, false), curve("good", 0.9, false), curve("mid", 0.6, false),
                    curve("nan", 0.9, true)};
    return app;
}

inline CurveLibrary toy_library(std::vector<Application> apps = {toy_application()}) {
    auto lib = CurveLibrary::from_applications(std::move(apps));
    if (!lib) throw std::runtime_error(lib.error().message);
    return std::move(lib.value());
}

// One trial of a hand-written trace: arrival (s), GPUs, run time of its whole curve (s), the toy
// variant it follows, and its sweep ("" = a sweep of its own).
struct Row {
    double arrival;
    std::uint32_t gpus;
    double duration;
    std::string variant;
    std::string sweep;
    std::string application = "toy";
};

inline Trace make_trace(const std::vector<Row>& rows) {
    Trace trace;
    std::size_t line = 2;
    for (const Row& r : rows) {
        TraceJob job;
        job.name = "job" + std::to_string(line - 1);
        job.arrival = r.arrival;
        job.gpus = r.gpus;
        job.duration = r.duration;
        job.application = r.application;
        job.variant = r.variant;
        job.sweep = r.sweep;
        job.line = line++;
        trace.jobs.push_back(job);
    }
    return trace;
}

inline Workload make_workload(const CurveLibrary& lib, const std::vector<Row>& rows) {
    WorkloadOptions options;
    options.variation = Variation::none;
    options.sweep_size = 1;
    auto w = build_workload(make_trace(rows), lib, options);
    if (!w) throw std::runtime_error(w.error().message);
    return std::move(w.value());
}

struct Run {
    SimResult result;
    Metrics metrics;
};

inline Run run_policy(const std::string& name, const CurveLibrary& lib, const Workload& workload,
                      const ClusterSpec& cluster, SimSettings settings = {}, PolicySettings ps = {},
                      const ThroughputTable& table = ThroughputTable{}) {
    PolicyContext context;
    context.library = &lib;
    context.throughputs = &table;
    context.cluster = &cluster;
    context.settings = ps;
    context.settings.record = settings.record;
    auto policy = make_policy(name, context, workload);
    if (!policy) throw std::runtime_error(policy.error().message);
    auto result = simulate(workload, lib, table, cluster, **policy, settings);
    if (!result) throw std::runtime_error(result.error().message);
    Metrics m = compute_metrics(workload, result.value(), cluster.total_gpus());
    return {std::move(result.value()), m};
}

// Settings with round numbers: 10 s rounds, 20 s restart cost, 10 s requeue delay.
inline SimSettings small_settings() {
    SimSettings s;
    s.period_s = 10.0;
    s.restart_cost_s = 20.0;
    s.requeue_delay_s = 10.0;
    return s;
}

}  // namespace simtest
