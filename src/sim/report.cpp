#include "sim/report.hpp"

#include <cmath>
#include <cstdio>
#include <map>

namespace explsched::sim {

namespace {

// Fixed-point text with `decimals` digits and a suffix; "-" for a missing value.
std::string fmt(double v, int decimals, const char* suffix = "") {
    if (!std::isfinite(v)) return "-";
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f%s", decimals, v, suffix);
    return buffer;
}

nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

double field_of(const Metrics& m, RatioField f) {
    switch (f) {
        case RatioField::profit_per_gpu_hour: return m.profit_per_gpu_hour;
        case RatioField::non_best_gpu_hours: return m.non_best_gpu_hours;
        case RatioField::profit: return m.profit;
    }
    return NAN;
}

}  // namespace

Metrics mean_metrics(const std::vector<Metrics>& runs) {
    Metrics out;
    if (runs.empty()) return out;
    out.policy = runs.front().policy;
    const double n = static_cast<double>(runs.size());
    const auto avg = [&](auto member) {
        double sum = 0.0, count = 0.0;
        for (const Metrics& m : runs) {
            const double v = static_cast<double>(m.*member);
            if (std::isfinite(v)) {
                sum += v;
                count += 1.0;
            }
        }
        return count > 0 ? sum / count : NAN;
    };
    out.trials = runs.front().trials;
    out.sweeps = runs.front().sweeps;
    out.finished = static_cast<std::size_t>(std::lround(avg(&Metrics::finished)));
    out.stopped = static_cast<std::size_t>(std::lround(avg(&Metrics::stopped)));
    out.unfinished = static_cast<std::size_t>(std::lround(avg(&Metrics::unfinished)));
    out.profit = avg(&Metrics::profit);
    out.profit_bound = avg(&Metrics::profit_bound);
    out.gpu_hours = avg(&Metrics::gpu_hours);
    out.profit_per_gpu_hour = avg(&Metrics::profit_per_gpu_hour);
    out.non_best_gpu_hours = avg(&Metrics::non_best_gpu_hours);
    out.stopped_gpu_hours = avg(&Metrics::stopped_gpu_hours);
    out.sweeps_reaching_best = avg(&Metrics::sweeps_reaching_best);
    out.time_to_best_mean_h = avg(&Metrics::time_to_best_mean_h);
    out.time_to_best_median_h = avg(&Metrics::time_to_best_median_h);
    out.jct_mean_h = avg(&Metrics::jct_mean_h);
    out.jct_p99_h = avg(&Metrics::jct_p99_h);
    out.makespan_h = avg(&Metrics::makespan_h);
    out.utilisation = avg(&Metrics::utilisation);
    out.preemptions = static_cast<std::size_t>(std::lround(avg(&Metrics::preemptions)));
    out.rounds = static_cast<std::size_t>(std::lround(avg(&Metrics::rounds)));
    out.decision_ms_mean = avg(&Metrics::decision_ms_mean);
    out.decision_ms_p99 = avg(&Metrics::decision_ms_p99);
    out.decision_ms_max = avg(&Metrics::decision_ms_max);
    out.wall_s = avg(&Metrics::wall_s);
    (void)n;
    return out;
}

double mean_ratio(const std::vector<RunRecord>& runs, const std::string& policy, const std::string& baseline,
                  RatioField field) {
    std::map<std::uint64_t, double> ours, theirs;
    for (const RunRecord& r : runs) {
        if (r.metrics.policy == policy) ours[r.seed] = field_of(r.metrics, field);
        if (r.metrics.policy == baseline) theirs[r.seed] = field_of(r.metrics, field);
    }
    double sum = 0.0;
    int count = 0;
    for (const auto& [seed, v] : ours) {
        const auto it = theirs.find(seed);
        if (it == theirs.end() || !(it->second != 0.0)) continue;
        sum += v / it->second;
        ++count;
    }
    return count > 0 ? sum / count : NAN;
}

std::string format_table(const std::vector<RunRecord>& runs, const std::vector<std::string>& policies) {
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%-10s %8s %7s %9s %10s %9s %9s %7s %7s %7s %7s %8s %8s %8s %9s %7s\n",
                  "policy", "profit", "of max", "GPU-h", "profit/GPUh", "nonbest-h", "stopped-h", "stopped",
                  "@best", "TTB h", "JCT h", "JCTp99 h", "span h", "preempt", "ms/round", "wall s");
    out += line;
    for (const std::string& p : policies) {
        std::vector<Metrics> mine;
        for (const RunRecord& r : runs) {
            if (r.metrics.policy == p) mine.push_back(r.metrics);
        }
        if (mine.empty()) continue;
        const Metrics m = mean_metrics(mine);
        std::snprintf(line, sizeof line, "%-10s %8s %7s %9s %10s %9s %9s %7zu %7s %7s %7s %8s %8s %8zu %9s %7s\n",
                      p.c_str(), fmt(m.profit, 2).c_str(),
                      fmt(100.0 * m.profit / m.profit_bound, 1, "%").c_str(), fmt(m.gpu_hours, 0).c_str(),
                      fmt(m.profit_per_gpu_hour, 5).c_str(), fmt(m.non_best_gpu_hours, 0).c_str(),
                      fmt(m.stopped_gpu_hours, 0).c_str(), m.stopped,
                      fmt(100.0 * m.sweeps_reaching_best, 0, "%").c_str(), fmt(m.time_to_best_mean_h, 2).c_str(),
                      fmt(m.jct_mean_h, 2).c_str(), fmt(m.jct_p99_h, 1).c_str(),
                      fmt(m.makespan_h, 1).c_str(), m.preemptions, fmt(m.decision_ms_mean, 2).c_str(),
                      fmt(m.wall_s, 1).c_str());
        out += line;
    }
    return out;
}

std::string format_targets(const std::vector<RunRecord>& runs) {
    struct Target {
        const char* baseline;
        RatioField field;
        const char* what;
        double goal;
        bool at_most;
    };
    const Target targets[] = {
        {"fifo", RatioField::profit_per_gpu_hour, "profit/GPU-h vs fifo", 2.0, false},
        {"slaq", RatioField::profit_per_gpu_hour, "profit/GPU-h vs slaq", 1.3, false},
        {"asha", RatioField::profit_per_gpu_hour, "profit/GPU-h vs asha", 1.3, false},
        {"oracle", RatioField::profit_per_gpu_hour, "profit/GPU-h vs oracle", 0.9, false},
        {"fifo", RatioField::non_best_gpu_hours, "non-best GPU-h vs fifo", 0.4, true},
        {"fifo", RatioField::profit, "profit vs fifo", NAN, false},
    };
    std::string out;
    for (const Target& t : targets) {
        const double r = mean_ratio(runs, "explsched", t.baseline, t.field);
        if (!std::isfinite(r)) continue;
        char line[160];
        if (std::isfinite(t.goal)) {
            const bool met = t.at_most ? r <= t.goal : r >= t.goal;
            std::snprintf(line, sizeof line, "explsched %-26s %6.3fx  (target %s %.1fx: %s)\n", t.what, r,
                          t.at_most ? "<=" : ">=", t.goal, met ? "met" : "MISSED");
        } else {
            std::snprintf(line, sizeof line, "explsched %-26s %6.3fx\n", t.what, r);
        }
        out += line;
    }
    return out;
}

nlohmann::json metrics_json(const Metrics& m) {
    nlohmann::json j;
    j["policy"] = m.policy;
    j["trials"] = m.trials;
    j["sweeps"] = m.sweeps;
    j["finished"] = m.finished;
    j["stopped"] = m.stopped;
    j["unfinished"] = m.unfinished;
    j["profit"] = number(m.profit);
    j["profit_bound"] = number(m.profit_bound);
    j["gpu_hours"] = number(m.gpu_hours);
    j["profit_per_gpu_hour"] = number(m.profit_per_gpu_hour);
    j["non_best_gpu_hours"] = number(m.non_best_gpu_hours);
    j["stopped_gpu_hours"] = number(m.stopped_gpu_hours);
    j["sweeps_reaching_best"] = number(m.sweeps_reaching_best);
    j["time_to_best_mean_h"] = number(m.time_to_best_mean_h);
    j["time_to_best_median_h"] = number(m.time_to_best_median_h);
    j["jct_mean_h"] = number(m.jct_mean_h);
    j["jct_p99_h"] = number(m.jct_p99_h);
    j["makespan_h"] = number(m.makespan_h);
    j["utilisation"] = number(m.utilisation);
    j["preemptions"] = m.preemptions;
    j["rounds"] = m.rounds;
    j["decision_ms_mean"] = number(m.decision_ms_mean);
    j["decision_ms_p99"] = number(m.decision_ms_p99);
    j["decision_ms_max"] = number(m.decision_ms_max);
    j["wall_s"] = number(m.wall_s);
    return j;
}

nlohmann::json summary_json(const std::vector<RunRecord>& runs, const std::vector<std::string>& policies) {
    nlohmann::json j;
    j["runs"] = nlohmann::json::array();
    for (const RunRecord& r : runs) {
        nlohmann::json m = metrics_json(r.metrics);
        m["seed"] = r.seed;
        j["runs"].push_back(m);
    }
    j["mean"] = nlohmann::json::object();
    for (const std::string& p : policies) {
        std::vector<Metrics> mine;
        for (const RunRecord& r : runs) {
            if (r.metrics.policy == p) mine.push_back(r.metrics);
        }
        if (!mine.empty()) j["mean"][p] = metrics_json(mean_metrics(mine));
    }
    nlohmann::json ratios = nlohmann::json::object();
    for (const std::string& p : policies) {
        if (p == "explsched") continue;
        ratios["profit_per_gpu_hour_vs_" + p] =
            number(mean_ratio(runs, "explsched", p, RatioField::profit_per_gpu_hour));
        ratios["non_best_gpu_hours_vs_" + p] = number(mean_ratio(runs, "explsched", p, RatioField::non_best_gpu_hours));
        ratios["profit_vs_" + p] = number(mean_ratio(runs, "explsched", p, RatioField::profit));
    }
    j["explsched_ratios"] = ratios;
    return j;
}

nlohmann::json trials_json(const Workload& workload, const CurveLibrary& library, const SimResult& result) {
    nlohmann::json trials = nlohmann::json::array();
    for (std::size_t i = 0; i < workload.trials.size(); ++i) {
        const SimTrial& t = workload.trials[i];
        const TrialOutcome& o = result.trials[i];
        const Application& app = library.apps()[t.app];
        nlohmann::json j;
        j["id"] = t.id;
        j["name"] = t.trace_name;
        j["sweep"] = workload.sweeps[t.sweep].name;
        j["application"] = app.name;
        j["direction"] = to_string(app.direction);
        j["variant"] = t.variant;
        j["gpus"] = t.gpus;
        j["arrival"] = t.arrival;
        j["max_step"] = t.max_step;
        j["sweep_best"] = workload.sweeps[t.sweep].best_trial == i;
        j["truth"] = {{"g", t.g}, {"r", t.r}, {"diverges", t.diverges}, {"best_quality", t.best_quality},
                      {"final_quality", t.final_quality}, {"duration_s", t.duration}};
        j["status"] = to_string(o.status);
        j["end"] = number(o.end);
        j["gpu_hours"] = o.gpu_seconds / 3600.0;
        j["best_quality"] = o.best_quality;
        j["preemptions"] = o.preemptions;
        nlohmann::json truth = nlohmann::json::array();
        for (std::size_t k = 0; k < t.steps.size(); ++k) truth.push_back({t.steps[k], number(t.metrics[k])});
        j["curve"] = truth;
        nlohmann::json points = nlohmann::json::array();
        for (const CurvePoint& p : o.points) points.push_back({p.step, number(p.metric), number(p.wall_time)});
        j["points"] = points;
        nlohmann::json marks = nlohmann::json::array();
        for (const Mark& m : o.marks) marks.push_back({{"time", m.time}, {"step", m.step}, {"what", m.what}, {"note", m.note}});
        j["marks"] = marks;
        if (!o.detail.empty()) {
            j["assessment"] = nlohmann::json::parse(o.detail, nullptr, false);
        }
        trials.push_back(std::move(j));
    }
    return trials;
}

}  // namespace explsched::sim
