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
};

// Mean of each metric over the runs of one policy.
Metrics mean_metrics(const std::vector<Metrics>& runs);

// ratio of `policy`'s profit per GPU-hour to `baseline`'s, averaged over the seeds both ran
// (NaN if none); `field` picks the metric.
enum class RatioField { profit_per_gpu_hour, non_best_gpu_hours, profit };
double mean_ratio(const std::vector<RunRecord>& runs, const std::string& policy, const std::string& baseline,
                  RatioField field);

// The text table and the target lines.
std::string format_table(const std::vector<RunRecord>& runs, const std::vector<std::string>& policies);
std::string format_targets(const std::vector<RunRecord>& runs);

nlohmann::json metrics_json(const Metrics& m);
nlohmann::json summary_json(const std::vector<RunRecord>& runs, const std::vector<std::string>& policies);
// One run's trials (for show/why/plot): identity, truth, what happened, and the policy's detail.
nlohmann::json trials_json(const Workload& workload, const CurveLibrary& library, const SimResult& result);

}  // namespace explsched::sim
