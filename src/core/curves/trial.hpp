// A trial is one training run (one Slurm job or one array task) that reports its learning curve.
// This file holds the plain data the engine consumes and the validation that turns a job's raw
// reports into a curve the fitter can trust.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/curve_point.hpp"
#include "core/base/result.hpp"

namespace explsched {

// Whether a smaller (loss, WER) or a larger (accuracy) metric is better.
enum class Direction { minimize, maximize };

Result<Direction> parse_direction(std::string_view text);
const char* to_string(Direction direction);

// Identifies a trial: a job id, plus the array task id for array jobs. Everything keyed on a
// trial uses this, so array tasks are first-class trials.
struct TrialKey {
    static constexpr std::uint32_t kNoArrayTask = 0xfffffffeU;  // Slurm's NO_VAL

    std::uint32_t job_id = 0;
    std::uint32_t array_task = kNoArrayTask;

    friend bool operator==(const TrialKey& a, const TrialKey& b) {
        return a.job_id == b.job_id && a.array_task == b.array_task;
    }
    friend bool operator!=(const TrialKey& a, const TrialKey& b) { return !(a == b); }
    friend bool operator<(const TrialKey& a, const TrialKey& b) {
        return a.job_id != b.job_id ? a.job_id < b.job_id : a.array_task < b.array_task;
    }
};

// "1234" or "1234_7" (Slurm's own notation for array tasks).
std::string to_string(const TrialKey& key);

struct TrialKeyHash {
    std::size_t operator()(const TrialKey& key) const {
        return std::hash<std::uint64_t>()((std::uint64_t{key.job_id} << 32) | key.array_task);
    }
};

// A learning curve cleaned for fitting: strictly increasing steps, finite metrics. `diverged`
// records a non-finite metric (NaN loss): the points before it are kept, the rest dropped, and
// policy treats the trial as hopeless.
struct CleanCurve {
    std::vector<double> steps;
    std::vector<double> metrics;
    bool diverged = false;
    double diverged_at_step = std::numeric_limits<double>::quiet_NaN();
};

// Checks a trial's reports: steps finite, non-negative and non-decreasing; a repeated step must
// repeat its value (duplicates are merged); |values| <= kMaxAbsValue; wall times and throughputs
// finite (or NaN for "unknown") and non-negative. A NaN/inf *metric* is not an error but
// divergence (see CleanCurve). Errors name the point index, field and value.
Result<CleanCurve> clean_curve(PointSpan points);

// Same checks, for callers that only need a yes/no with the reason.
Status validate_points(PointSpan points);

}  // namespace explsched
