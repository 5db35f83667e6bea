// Presents simulation runs: the comparison table (means over seeds), the target ratios against
// the baselines, and the JSON forms (`--json` summary; `--output` adds every trial's record for
// `explsched show/why/plot --sim`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "sim/workload.hpp"

namespace explsched::sim {

struct RunRecord {
    std::uint64_t seed = 0;
    Metrics metrics;
    std::vector<double> sweep_time_to_best;  // SimResult's, per sweep (NaN: never)
};

// Mean of each metric over the runs of one policy.
Metrics mean_metrics(const std::vector<Metrics>& runs);

// ratio of `policy`'s profit per GPU-hour to `baseline`'s, averaged over the seeds both ran
// (NaN if none); `field` picks the metric.
enum class RatioField { profit_per_gpu_hour, non_best_gpu_hours, profit };
double mean_ratio(const std::vector<RunRecord>& runs, const std::string& policy, const std::string& baseline,
                  RatioField field);

// Mean time to best of `policy` over that of `baseline`, both taken over the sweeps both got to
// their best, per seed (NaN where they share none); a mean over all of a policy's sweeps rewards
// losing a long sweep's best.
std::vector<double> common_time_to_best_ratios(const std::vector<RunRecord>& runs, const std::string& policy,
                                               const std::string& baseline);

// The text table and the target lines.
std::string format_table(const std::vector<RunRecord>& runs, const std::vector<std::string>& policies);
std::string format_targets(const std::vector<RunRecord>& runs);

nlohmann::json metrics_json(const Metrics& m);
nlohmann::json summary_json(const std::vector<RunRecord>& runs, const std::vector<std::string>& policies);
// One run's trials (for show/why/plot): identity, truth, what happened, and the policy's detail.
nlohmann::json trials_json(const Workload& workload, const CurveLibrary& library, const SimResult& result);
// Per sweep: name, trials, time to best and its least possible value (hours; null if never).
nlohmann::json sweeps_json(const Workload& workload, const SimResult& result);

}  // namespace explsched::sim
