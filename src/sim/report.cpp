#include "sim/report.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <type_traits>
#include <variant>

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

// Every figure of a run, once: mean_metrics() and metrics_json() walk this table. Counts are
// integers in JSON and rounded when averaged; the workload's own counts (trials, sweeps) are the
// same in every run and copied rather than averaged.
struct MetricField {
    const char* name;
    std::variant<std::size_t Metrics::*, double Metrics::*> member;
    bool of_workload = false;
};
const MetricField kMetricFields[] = {
    {"trials", &Metrics::trials, true},
    {"sweeps", &Metrics::sweeps, true},
    {"finished", &Metrics::finished},
    {"stopped", &Metrics::stopped},
    {"unfinished", &Metrics::unfinished},
    {"profit", &Metrics::profit},
    {"profit_bound", &Metrics::profit_bound},
    {"gpu_hours", &Metrics::gpu_hours},
    {"profit_per_gpu_hour", &Metrics::profit_per_gpu_hour},
    {"non_best_gpu_hours", &Metrics::non_best_gpu_hours},
    {"stopped_gpu_hours", &Metrics::stopped_gpu_hours},
    {"sweeps_reaching_best", &Metrics::sweeps_reaching_best},
    {"time_to_best_mean_h", &Metrics::time_to_best_mean_h},
    {"time_to_best_median_h", &Metrics::time_to_best_median_h},
    {"time_to_best_bound_h", &Metrics::time_to_best_bound_h},
    {"time_to_best_bound_all_h", &Metrics::time_to_best_bound_all_h},
    {"jct_mean_h", &Metrics::jct_mean_h},
    {"jct_p99_h", &Metrics::jct_p99_h},
    {"makespan_h", &Metrics::makespan_h},
    {"utilisation", &Metrics::utilisation},
    {"preemptions", &Metrics::preemptions},
    {"pauses", &Metrics::pauses},
    {"resumes", &Metrics::resumes},
    {"rounds", &Metrics::rounds},
    {"decision_ms_mean", &Metrics::decision_ms_mean},
    {"decision_ms_p99", &Metrics::decision_ms_p99},
    {"decision_ms_max", &Metrics::decision_ms_max},
    {"wall_s", &Metrics::wall_s},
};

// The comparison table's columns after the policy name: header, width, cell text.
struct Column {
    const char* header;
    int width;
    std::string (*cell)(const Metrics&);
};
const Column kColumns[] = {
    {"profit", 8, [](const Metrics& m) { return fmt(m.profit, 2); }},
    {"of max", 7, [](const Metrics& m) { return fmt(100.0 * m.profit / m.profit_bound, 1, "%"); }},
    {"GPU-h", 9, [](const Metrics& m) { return fmt(m.gpu_hours, 0); }},
    {"profit/GPUh", 10, [](const Metrics& m) { return fmt(m.profit_per_gpu_hour, 5); }},
    {"nonbest-h", 9, [](const Metrics& m) { return fmt(m.non_best_gpu_hours, 0); }},
    {"stopped-h", 9, [](const Metrics& m) { return fmt(m.stopped_gpu_hours, 0); }},
    {"stopped", 7, [](const Metrics& m) { return std::to_string(m.stopped); }},
    {"@best", 7, [](const Metrics& m) { return fmt(100.0 * m.sweeps_reaching_best, 0, "%"); }},
    {"TTB h", 7, [](const Metrics& m) { return fmt(m.time_to_best_mean_h, 2); }},
    {"JCT h", 7, [](const Metrics& m) { return fmt(m.jct_mean_h, 2); }},
    {"JCTp99 h", 8, [](const Metrics& m) { return fmt(m.jct_p99_h, 1); }},
    {"span h", 8, [](const Metrics& m) { return fmt(m.makespan_h, 1); }},
    {"preempt", 8, [](const Metrics& m) { return std::to_string(m.preemptions); }},
    {"pause/res", 9,
     [](const Metrics& m) { return std::to_string(m.pauses) + "/" + std::to_string(m.resumes); }},
    {"ms/round", 9, [](const Metrics& m) { return fmt(m.decision_ms_mean, 2); }},
    {"wall s", 7, [](const Metrics& m) { return fmt(m.wall_s, 1); }},
};

// One line of the table: the first cell left-aligned in 10 columns, the others right-aligned.
std::string table_line(const std::string& first, const std::vector<std::string>& cells) {
    std::string line = first;
    if (line.size() < 10) line.append(10 - line.size(), ' ');
    for (std::size_t i = 0; i < cells.size(); ++i) {
        const auto pad = static_cast<std::size_t>(kColumns[i].width);
        line += ' ';
        if (cells[i].size() < pad) line.append(pad - cells[i].size(), ' ');
        line += cells[i];
    }
    return line + "\n";
}

double field_of(const Metrics& m, RatioField f) {
    switch (f) {
        case RatioField::profit_per_gpu_hour:
            return m.profit_per_gpu_hour;
        case RatioField::non_best_gpu_hours:
            return m.non_best_gpu_hours;
        case RatioField::profit:
            return m.profit;
    }
    return NAN;
}

}  // namespace

Metrics mean_metrics(const std::vector<Metrics>& runs) {
    Metrics out;
    if (runs.empty()) return out;
    out.policy = runs.front().policy;
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
    for (const MetricField& f : kMetricFields) {
        std::visit(
            [&](auto member) {
                if (f.of_workload) {
                    out.*member = runs.front().*member;
                } else if constexpr (std::is_same_v<decltype(member), std::size_t Metrics::*>) {
                    out.*member = static_cast<std::size_t>(std::lround(avg(member)));
                } else {
                    out.*member = avg(member);
                }
            },
            f.member);
    }
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

std::vector<double> common_time_to_best_ratios(const std::vector<RunRecord>& runs, const std::string& policy,
                                               const std::string& baseline) {
    std::map<std::uint64_t, const RunRecord*> theirs;
    for (const RunRecord& r : runs) {
        if (r.metrics.policy == baseline) theirs[r.seed] = &r;
    }
    std::vector<double> out;
    for (const RunRecord& r : runs) {
        if (r.metrics.policy != policy) continue;
        const auto it = theirs.find(r.seed);
        if (it == theirs.end()) continue;
        const std::vector<double>& a = r.sweep_time_to_best;
        const std::vector<double>& b = it->second->sweep_time_to_best;
        double sa = 0.0, sb = 0.0;
        for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
            if (!std::isfinite(a[k]) || !std::isfinite(b[k])) continue;
            sa += a[k];
            sb += b[k];
        }
        out.push_back(sb > 0.0 ? sa / sb : NAN);
    }
    return out;
}

std::string format_table(const std::vector<RunRecord>& runs, const std::vector<std::string>& policies) {
    std::vector<std::string> headers;
    for (const Column& c : kColumns) headers.emplace_back(c.header);
    std::string out = table_line("policy", headers);
    for (const std::string& p : policies) {
        std::vector<Metrics> mine;
        for (const RunRecord& r : runs) {
            if (r.metrics.policy == p) mine.push_back(r.metrics);
        }
        if (mine.empty()) continue;
        const Metrics m = mean_metrics(mine);
        std::vector<std::string> cells;
        for (const Column& c : kColumns) cells.push_back(c.cell(m));
        out += table_line(p, cells);
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
    for (const MetricField& f : kMetricFields) {
        std::visit(
            [&](auto member) {
                if constexpr (std::is_same_v<decltype(member), std::size_t Metrics::*>)
                    j[f.name] = m.*member;
                else
                    j[f.name] = number(m.*member);
            },
            f.member);
    }
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
        ratios["non_best_gpu_hours_vs_" + p] =
            number(mean_ratio(runs, "explsched", p, RatioField::non_best_gpu_hours));
        ratios["profit_vs_" + p] = number(mean_ratio(runs, "explsched", p, RatioField::profit));
        nlohmann::json common = nlohmann::json::array();
        for (double v : common_time_to_best_ratios(runs, "explsched", p)) common.push_back(number(v));
        ratios["time_to_best_common_vs_" + p] = common;
    }
    j["explsched_ratios"] = ratios;
    return j;
}

nlohmann::json sweeps_json(const Workload& workload, const SimResult& result) {
    nlohmann::json sweeps = nlohmann::json::array();
    const auto hours = [](const std::vector<double>& v, std::size_t s) {
        return s < v.size() ? number(v[s] / 3600.0) : nlohmann::json();
    };
    for (std::size_t s = 0; s < workload.sweeps.size(); ++s) {
        const SimSweep& sweep = workload.sweeps[s];
        sweeps.push_back({{"name", sweep.name},
                          {"trials", sweep.trials.size()},
                          {"best_trial", workload.trials[sweep.best_trial].id},
                          {"time_to_best_h", hours(result.sweep_time_to_best, s)},
                          {"time_to_best_bound_h", hours(result.sweep_time_to_best_bound, s)}});
    }
    return sweeps;
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
        j["truth"] = {{"g", t.g},
                      {"r", t.r},
                      {"diverges", t.diverges},
                      {"best_quality", t.best_quality},
                      {"final_quality", t.final_quality},
                      {"duration_s", t.duration}};
        j["status"] = to_string(o.status);
        j["end"] = number(o.end);
        j["gpu_hours"] = o.gpu_seconds / 3600.0;
        j["best_quality"] = o.best_quality;
        j["preemptions"] = o.preemptions;
        j["pauses"] = o.pauses;
        j["resumes"] = o.resumes;
        nlohmann::json truth = nlohmann::json::array();
        for (std::size_t k = 0; k < t.steps.size(); ++k) truth.push_back({t.steps[k], number(t.metrics[k])});
        j["curve"] = truth;
        nlohmann::json points = nlohmann::json::array();
        for (const CurvePoint& p : o.points)
            points.push_back({p.step, number(p.metric), number(p.wall_time)});
        j["points"] = points;
        nlohmann::json marks = nlohmann::json::array();
        for (const Mark& m : o.marks)
            marks.push_back({{"time", m.time}, {"step", m.step}, {"what", m.what}, {"note", m.note}});
        j["marks"] = marks;
        if (!o.detail.empty()) {
            j["assessment"] = nlohmann::json::parse(o.detail, nullptr, false);
        }
        trials.push_back(std::move(j));
    }
    return trials;
}

}  // namespace explsched::sim
