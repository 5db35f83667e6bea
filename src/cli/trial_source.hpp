// Where `explsched show/why/plot` get a trial from, so the three commands work the same on a live
// cluster and offline:
//   live:    the curve from explschedd's report store (SQLite) and the plugin's assessment from
//            the job's SystemComment (`scontrol show job`);
//   --curve: a curve CSV (plus --sibling CSVs for the rest of its sweep), assessed by running the
//            core engine on it, as one scheduling round at the given load;
//   --sim:   a trial recorded by `explsched-sim --output`.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/result.hpp"
#include "core/curves/trial.hpp"
#include "core/sched/engine.hpp"

namespace explsched::cli {

struct TrialMark {
    double time = 0.0;
    double step = 0.0;
    std::string what;
    std::string note;
};

// What the scheduler concluded about a trial, whichever way it reached us (an engine round run
// here, a simulator record, a SystemComment line).
struct AssessmentView {
    std::uint32_t priority = 0;  // 0: not known
    double utility = std::numeric_limits<double>::quiet_NaN();
    double price = std::numeric_limits<double>::quiet_NaN();
    std::string state;     // promising, hopeless, unknown
    std::string decision;  // run, wait, keep, preemptable, terminate, requeue_hold
    std::string reason;    // the engine's explanation
    Prediction prediction;
    std::optional<Assessment> engine;  // the full assessment when an engine round ran here
    // The GPU type it was valued on and how its speed was scaled, in words (live: from the
    // SystemComment; empty when the line does not say).
    std::string gpu_text;
};

// One member of the trial's sweep, for ranking and group plots.
struct Sibling {
    std::string name;
    std::string state_text;
    std::vector<CurvePoint> points;
    std::vector<std::pair<double, double>> truth;
    std::optional<AssessmentView> assessment;
    std::vector<TrialMark> marks;
};

struct TrialInfo {
    std::string name;        // "1234", "1234_7", a CSV path, a simulated job id
    std::string source;      // "live", "curve FILE", "sim FILE (policy, seed)"
    std::string group;       // sweep; empty if none known
    std::string state_text;  // pending, running, finished, stopped, ...
    Direction direction = Direction::maximize;
    double max_steps = 0.0;
    std::uint32_t gpus = 1;
    // live: slurmctld would requeue it (a batch job, not --no-requeue: scontrol's BatchFlag and
    // Requeue); one it would not is never paused by ExplSched
    bool requeueable = true;
    std::vector<CurvePoint> points;                // observed
    std::vector<std::pair<double, double>> truth;  // sim only: the whole curve (step, metric)
    std::optional<AssessmentView> assessment;      // the scheduler's view, when known
    double load = -1.0;                            // cluster load the price is for (-1 unknown)
    double price_lower = 0.0, price_upper = 0.0;   // the price function's L and U (0 unknown)
    std::vector<TrialMark> marks;
    std::vector<Sibling> siblings;  // other trials of its sweep
    // The engine settings the trial was judged under, and where they came from: the site's
    // slurm.conf line (live), the run's --params (sim), --params or the defaults (offline).
    EngineSettings settings;
    std::string settings_from = "the engine's defaults";
};

// Options shared by show, why and plot. Parses and removes the options it knows from argv-style
// `args`; what remains is for the command.
struct SourceOptions {
    std::string curve;                  // --curve FILE
    std::vector<std::string> siblings;  // --sibling FILE (repeatable)
    std::string metric_column = "metric";
    std::string direction;             // --direction min|max ("" = inferred)
    double max_steps = 0.0;            // --max-steps
    std::uint32_t gpus = 1;            // --gpus
    double load = 1.0;                 // --load (offline price)
    std::uint32_t total_gpus = 64;     // --total-gpus (offline)
    double steps_per_second = 0.0;     // --steps-per-second (offline speed; 0 = unknown)
    std::string sim;                   // --sim RESULT.json
    std::string policy = "explsched";  // --policy (with --sim)
    std::uint64_t seed = 0;            // --seed (with --sim)
    bool have_seed = false;
    std::string db;      // --db (live): report store path
    std::string params;  // --params 'k=v,...': engine settings over the source's (what if)
};

Result<SourceOptions> parse_source_options(std::vector<std::string>& args);
const char* source_options_help();

// `job` is the job id (live, --sim) or empty (--curve).
Result<TrialInfo> load_trial(const std::string& job, const SourceOptions& options);

// A live job's name as users give it: a job id, or an array task as ARRAYID_INDEX (1234_7).
// Only such a name is passed to scontrol (through the shell).
bool is_job_name(std::string_view job);
// A --sim result file, parsed once.
Result<nlohmann::json> read_sim_result(const std::string& path);
// The run of (policy, seed) in a sim result, or an error naming what is there.
Result<const nlohmann::json*> find_run(const nlohmann::json& result, const std::string& policy,
                                       std::uint64_t seed, bool have_seed);
// Builds a TrialInfo from one trial record of a run.
TrialInfo trial_from_record(const nlohmann::json& record, const nlohmann::json& run,
                            const std::string& source);

// The direction of a saved curve (`--curve FILE` of predict, show, why, plot): the `direction`
// file (min or max) beside FILE, as the simulator and the benchmarks read a sweep's directory,
// else read from the points (falling: min). `origin` is set to ", from FILE/direction" or
// ", inferred". A direction file that says neither is an error naming it.
Result<Direction> curve_file_direction(const std::string& path, const std::vector<CurvePoint>& points,
                                       std::string& origin);

// Predicted trajectory from the observed points to max_steps: (step, value, lower, upper) rows;
// empty when there are too few points.
std::vector<std::array<double, 4>> predicted_path(const TrialInfo& trial, std::size_t samples = 40);

}  // namespace explsched::cli
