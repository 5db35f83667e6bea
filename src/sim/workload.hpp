// Turns a trace and a curve library into the trials and sweeps one simulation replays: each trace
// row becomes a trial with a real learning curve, and trials are grouped into sweeps whose members
// draw sibling curves of one application. Everything random comes from the seed, per trial, so the
// same (trace, curves, options) always gives the same workload whichever policies run on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "core/curves/trial.hpp"
#include "sim/curve_library.hpp"
#include "sim/trace.hpp"

namespace explsched::sim {

// How the trials of a sweep differ from the real curve they draw.
//  none: each trial is a real curve as recorded (the siblings are the batch-size variants).
//  hp:   a real curve reshaped the way other hyperparameters (learning rate, regularisation)
//        reshape it: the improvement over the untrained model is scaled by g <= 1 and learning is
//        slowed by r >= 1 (the trial is at step s where the recorded run was at s/r); a share of
//        trials diverge (the metric turns NaN). doc/results.md gives the exact distribution.
enum class Variation { none, hp };

Result<Variation> parse_variation(std::string_view text);
const char* to_string(Variation variation);

struct WorkloadOptions {
    std::uint64_t seed = 0;
    std::size_t max_jobs = 0;    // first N trace rows (by arrival); 0 = all
    std::size_t sweep_size = 8;  // trials per sweep where the trace does not group them
    Variation variation = Variation::hp;
    // Trace rows naming an application the library lacks (bert, yolov3 in the Pollux workloads):
    // skipped and counted, or an error.
    bool skip_unknown_applications = true;
    double min_duration_s = 1.0;  // shorter trace durations are raised to this
    // Sweeps the builder forms itself from rows that name no application (philly.csv): its trials
    // train one model on one data set, so they all take the first row's GPU count and duration
    // (arrivals stay the trace's). Off: every row keeps its own size.
    bool uniform_sweeps = true;
};

struct SimTrial {
    std::uint32_t id = 0;     // 1-based, in arrival order (the simulated Slurm job id)
    std::uint32_t sweep = 0;  // index into Workload::sweeps
    std::uint32_t app = 0;    // index into CurveLibrary::apps()
    std::string variant;      // the real curve it is drawn from
    std::string trace_name;
    std::size_t trace_line = 0;
    double arrival = 0.0;
    std::uint32_t gpus = 1;
    // Seconds the whole curve takes at `gpus` GPUs on the reference GPU type.
    double duration = 0.0;
    std::vector<double> steps;    // the trial's curve (strictly increasing)
    std::vector<double> metrics;  // NaN from the divergence point on
    double max_step = 0.0;        // steps.back(): what the user asked to train for
    // Ground truth, for metrics and the oracle only (no other policy may read it):
    double best_quality = 0.0;   // quality of its best report over the whole curve
    std::size_t best_index = 0;  // the report that attains it
    double final_quality = 0.0;  // quality of its last finite report
    double g = 1.0, r = 1.0;     // hp variation drawn (1, 1 for none)
    bool diverges = false;
};

struct SimSweep {
    std::string name;  // "sweep-3", "array-4711"
    std::uint32_t app = 0;
    std::vector<std::uint32_t> trials;  // indices into Workload::trials
    std::uint32_t best_trial = 0;       // index of the trial with the best final quality
    double best_quality = 0.0;          // the most profit the sweep can yield
    double first_arrival = 0.0;
};

struct Workload {
    std::vector<SimTrial> trials;  // by arrival
    std::vector<SimSweep> sweeps;
    std::size_t skipped_rows = 0;  // trace rows not simulated (unknown application)
    std::vector<std::string> skipped_applications;
};

Result<Workload> build_workload(const Trace& trace, const CurveLibrary& library,
                                const WorkloadOptions& options);

// Deterministic pseudo-random numbers (SplitMix64): the same on every platform and library, which
// std::uniform_real_distribution does not promise.
class Rng {
public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next();
    double uniform();  // [0, 1)
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
    std::size_t below(std::size_t n);  // [0, n)

private:
    std::uint64_t state_;
};

}  // namespace explsched::sim
