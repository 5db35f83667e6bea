// The learning curves the simulator's jobs draw from: a directory with one sub-directory per
// application (../shared/data/curves/<app>/), each holding real training runs as curve CSVs
// (validation-<variant>.csv, read with the core's curve_csv reader) and, optionally, Pollux's
// step-time table (placements.csv) that turns a run's iteration count into wall time. The
// variants of one application are siblings: a sweep draws its trials from them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/result.hpp"
#include "core/curves/trial.hpp"

namespace explsched::sim {

struct CurveVariant {
    std::string name;  // "2048" for validation-2048.csv
    std::string path;
    std::string step_column;      // "iteration", "progress" or "step"
    std::vector<double> steps;    // strictly increasing after loading
    std::vector<double> metrics;  // finite
};

// Seconds per iteration by placement and per-GPU batch (Pollux's placements.csv). A placement is
// the GPUs used on each node, digits ascending ("4", "24" = 2 + 4 GPUs on two nodes).
class StepTimeTable {
public:
    static Result<StepTimeTable> parse(std::string_view text, const std::string& source);
    bool empty() const { return table_.empty(); }
    // Step time of `gpus` GPUs packed onto nodes of `gpus_per_node`, at `local_batch` samples per
    // GPU: log-log interpolation in the batch; beyond the measured batches it scales linearly
    // (compute-bound); placements wider than any measured one reuse the widest (weak scaling).
    double step_time(std::uint32_t gpus, double local_batch, std::uint32_t gpus_per_node = 4) const;

private:
    std::map<std::string, std::vector<std::pair<double, double>>> table_;  // sorted by batch
};

struct Application {
    std::string name;
    Direction direction = Direction::maximize;
    std::string job_type;                // Gavel throughput-table type; empty = unknown
    std::vector<CurveVariant> variants;  // sorted by name (numeric names numerically)
    StepTimeTable step_times;
    // Its trials' declared learning-rate drops (`lr_drops` file: fractions of the run, comma-
    // separated, increasing, in (0, 1)): each trial declares them at these fractions of its
    // max_step, as --explore-lr-drops would. Empty: none.
    std::vector<double> lr_drop_fractions;
    // Normalisation for profit: the worst first report across variants (an untrained model) and
    // the best report across variants; quality() maps these to 0 and 1.
    double untrained = 0.0;
    double best = 1.0;

    // Normalised quality of a metric value in [0, 1] (direction-aware, clamped).
    double quality(double metric) const;
    // Metric from a quality (inverse of quality(), unclamped).
    double metric_at_quality(double q) const;
    const CurveVariant* find_variant(std::string_view variant_name) const;
};

class CurveLibrary {
public:
    // Loads DIR/<app>/*.csv (placements.csv and scalability.csv are step-time tables, not
    // curves). A directory holding curve CSVs directly is one application named after it.
    // Direction: "min" if the variants' metrics mostly fall over the run, else "max"; a file
    // DIR/<app>/direction containing "min" or "max" overrides it.
    static Result<CurveLibrary> load(const std::string& dir);
    // For tests: build from in-memory applications (untrained/best computed here).
    static Result<CurveLibrary> from_applications(std::vector<Application> apps);

    const std::vector<Application>& apps() const { return apps_; }
    // Index of the application called `name`, or -1.
    int find(std::string_view name) const;

private:
    std::vector<Application> apps_;
};

// The Gavel job type used for an application's throughput on each GPU type (documented mapping
// for the shipped applications; empty for others).
std::string default_job_type(std::string_view application);

}  // namespace explsched::sim
