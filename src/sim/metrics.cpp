#include "sim/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace explsched::sim {

double quantile(std::vector<double>& values, double p) {
    if (values.empty()) return NAN;
    std::sort(values.begin(), values.end());
    const double pos = std::clamp(p, 0.0, 1.0) * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

namespace {

double mean(const std::vector<double>& values) {
    if (values.empty()) return NAN;
    double sum = 0.0;
    for (double v : values) sum += v;
    return sum / static_cast<double>(values.size());
}

}  // namespace

Metrics compute_metrics(const Workload& workload, const SimResult& result, std::uint32_t cluster_gpus) {
    Metrics m;
    m.policy = result.policy;
    m.trials = workload.trials.size();
    m.sweeps = workload.sweeps.size();
    std::vector<double> sweep_best(workload.sweeps.size(), 0.0);
    std::vector<double> jct;
    double first_arrival = INFINITY, last_end = 0.0, gpu_seconds = 0.0;
    for (std::size_t i = 0; i < workload.trials.size(); ++i) {
        const SimTrial& t = workload.trials[i];
        const TrialOutcome& out = result.trials[i];
        const SimSweep& sweep = workload.sweeps[t.sweep];
        sweep_best[t.sweep] = std::max(sweep_best[t.sweep], out.best_quality);
        gpu_seconds += out.gpu_seconds;
        if (sweep.best_trial != i) m.non_best_gpu_hours += out.gpu_seconds / 3600.0;
        first_arrival = std::min(first_arrival, t.arrival);
        switch (out.status) {
            case TrialStatus::finished:
                ++m.finished;
                break;
            case TrialStatus::stopped:
                ++m.stopped;
                m.stopped_gpu_hours += out.gpu_seconds / 3600.0;
                break;
            default:
                ++m.unfinished;
                break;
        }
        if (out.status == TrialStatus::finished || out.status == TrialStatus::stopped) {
            jct.push_back((out.end - t.arrival) / 3600.0);
            last_end = std::max(last_end, out.end);
        }
        m.preemptions += out.preemptions;
        m.pauses += out.pauses;
        m.resumes += out.resumes;
    }
    if (m.unfinished > 0) last_end = std::max(last_end, result.end_time);
    for (std::size_t s = 0; s < workload.sweeps.size(); ++s) {
        m.profit += sweep_best[s];
        m.profit_bound += workload.sweeps[s].best_quality;
    }
    m.gpu_hours = gpu_seconds / 3600.0;
    m.profit_per_gpu_hour = m.gpu_hours > 0.0 ? m.profit / m.gpu_hours : 0.0;
    std::vector<double> reached;
    for (double t : result.sweep_time_to_best) {
        if (std::isfinite(t)) reached.push_back(t / 3600.0);
    }
    m.sweeps_reaching_best = workload.sweeps.empty() ? 0.0
                                                     : static_cast<double>(reached.size()) /
                                                           static_cast<double>(workload.sweeps.size());
    m.time_to_best_mean_h = mean(reached);
    m.time_to_best_median_h = quantile(reached, 0.5);
    std::vector<double> bound_reached, bound_all;
    for (std::size_t s = 0; s < result.sweep_time_to_best_bound.size(); ++s) {
        const double b = result.sweep_time_to_best_bound[s];
        if (!std::isfinite(b)) continue;
        bound_all.push_back(b / 3600.0);
        if (s < result.sweep_time_to_best.size() && std::isfinite(result.sweep_time_to_best[s]))
            bound_reached.push_back(b / 3600.0);
    }
    m.time_to_best_bound_h = mean(bound_reached);
    m.time_to_best_bound_all_h = mean(bound_all);
    m.jct_mean_h = mean(jct);
    m.jct_p99_h = quantile(jct, 0.99);
    m.makespan_h = std::isfinite(first_arrival) ? (last_end - first_arrival) / 3600.0 : 0.0;
    m.utilisation = m.makespan_h > 0.0 && cluster_gpus > 0
                        ? m.gpu_hours / (m.makespan_h * static_cast<double>(cluster_gpus))
                        : 0.0;
    m.rounds = result.rounds;
    std::vector<double> ms = result.decision_ms;
    m.decision_ms_mean = mean(ms);
    m.decision_ms_p99 = quantile(ms, 0.99);
    m.decision_ms_max = ms.empty() ? NAN : ms.back();  // sorted by quantile()
    m.wall_s = result.wall_s;
    return m;
}

}  // namespace explsched::sim
