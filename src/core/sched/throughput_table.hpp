// Throughput of job types on GPU types (Gavel's table, ../shared/data/throughputs/), so a trial
// is valued on the GPU it would get: its measured speed on one type is scaled by the table's ratio
// to another.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "core/base/result.hpp"

namespace explsched {

class ThroughputTable {
public:
    // Gavel's gavel_simulation_throughputs.json: {gpu_type: {"('<job type>', <scale>)": {"null":
    // isolated steps/s, ...co-located pairs}}}. Only isolated throughputs are kept; GPU types are
    // lower-cased ("v100"); "_unconsolidated" variants are skipped.
    static Result<ThroughputTable> from_gavel_json(std::string_view json_text);
    static Result<ThroughputTable> load_gavel_file(const std::string& path);

    void set(const std::string& job_type, const std::string& gpu_type, double steps_per_s, int scale = 1);
    // NaN when unknown.
    double throughput(const std::string& job_type, const std::string& gpu_type, int scale = 1) const;
    // throughput(to) / throughput(from); 1.0 when either is unknown or the types are equal.
    double speed_ratio(const std::string& job_type, const std::string& from_gpu, const std::string& to_gpu,
                       int scale = 1) const;
    // Whether the table has a row for `job_type` (at any scale).
    bool knows_job_type(const std::string& job_type) const;
    bool empty() const { return table_.empty(); }
    std::size_t size() const { return table_.size(); }

private:
    // (job type, scale) -> gpu type -> steps/s; std::map keeps iteration deterministic.
    std::map<std::pair<std::string, int>, std::map<std::string, double>> table_;
};

}  // namespace explsched
