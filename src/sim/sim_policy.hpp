// The one interface every simulated scheduling policy implements. Each round the simulator shows
// a policy what a real scheduler could know (arrival, GPUs, the curve points the trial reported so
// far, how long it ran) and the policy answers which trials to stop for good, which to preempt
// (checkpoint and requeue) and which pending ones to start. Ground truth (a trial's future curve,
// its duration) is not in the view; only the oracle is handed the workload.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"
#include "core/curves/trial.hpp"
#include "core/sched/engine_settings.hpp"
#include "core/sched/throughput_table.hpp"
#include "sim/cluster.hpp"
#include "sim/curve_library.hpp"

namespace explsched::sim {

struct Workload;

// paused: checkpointed and held by its policy (freeze-thaw), holding no GPU until resumed.
enum class TrialStatus { future, pending, running, finished, stopped, paused };
const char* to_string(TrialStatus status);

// What a scheduler can see of one trial. Kept by the simulator and updated in place.
struct ObservedTrial {
    std::uint32_t id = 0;     // job id (1-based)
    std::uint32_t index = 0;  // index into the workload (ids - 1)
    std::uint32_t sweep = 0;  // its sweep; `group` is the sweep's name
    const std::string* group = nullptr;
    std::uint32_t app = 0;  // application (job type and metric direction are known)
    Direction direction = Direction::maximize;
    const std::string* job_type = nullptr;
    std::uint32_t gpus = 1;
    double max_step = 0.0;         // declared training length
    std::vector<double> lr_drops;  // declared learning-rate drops, steps (--explore-lr-drops)
    // The run time the user declared (Slurm --time): the simulator sets it to the trial's true
    // run time on the reference GPU type. Only oasis reads it (OASiS assumes jobs declare it).
    double time_limit_s = 0.0;
    TrialStatus status = TrialStatus::future;
    double arrival = 0.0;
    double queued_at = 0.0;          // arrival, or the last requeue
    double eligible_at = 0.0;        // a requeued trial may start again from here
    double started_at = 0.0;         // running: start of this run
    double first_started_at = -1.0;  // first start ever; -1 = never ran
    double run_seconds = 0.0;        // total time it held GPUs
    double gpu_seconds = 0.0;        // total GPU-seconds it held (attained service)
    std::string gpu_type;            // running: the type it holds
    std::vector<CurvePoint> points;  // reports so far (wall_time = its run time at the report)
    std::uint32_t restarts = 0;
    std::uint32_t pauses = 0;  // times it was paused
};

// GPUs free per type, as a policy plans a round (it gives back what it preempts and takes what
// it starts, so later choices in the same round see the effect).
class FreeGpus {
public:
    explicit FreeGpus(const Cluster& cluster);
    std::uint32_t of(std::string_view type) const;
    std::uint32_t total() const;
    const std::vector<std::string>& types() const { return types_; }
    // The first type (in cluster order) with `gpus` free; empty string if none.
    std::string fitting_type(std::uint32_t gpus) const;
    bool take(std::string_view type, std::uint32_t gpus);
    void give(std::string_view type, std::uint32_t gpus);

private:
    std::vector<std::string> types_;
    std::vector<std::uint32_t> free_;
};

struct RoundInput {
    double now = 0.0;
    double period_s = 0.0;
    // Eligible pending trials by (queued_at, id); pending trials still in their requeue delay are
    // in `waiting` (they cannot start this round but a policy may stop them).
    std::vector<ObservedTrial*> pending;
    std::vector<ObservedTrial*> waiting;
    std::vector<ObservedTrial*> running;  // by id
    std::vector<ObservedTrial*> paused;   // by id: held with their checkpoint (RoundPlan::pause)
    const Cluster* cluster = nullptr;
};

struct StartOrder {
    std::uint32_t id = 0;
    std::string gpu_type;  // empty: the first type that fits
};

struct RoundPlan {
    std::vector<std::uint32_t> stop;     // end for good (killed/cancelled): counts as stopped
    std::vector<std::uint32_t> preempt;  // running → checkpoint, requeue
    std::vector<StartOrder> start;       // pending → running, in order
    // Freeze-thaw: running → paused (checkpointed, holds no GPU, not queued) and paused → pending
    // (queued again; it pays the restart cost when it starts). A paused trial may be stopped.
    std::vector<std::uint32_t> pause;
    std::vector<std::uint32_t> resume;
    // Why, for the record (explsched show/why/plot on a simulator result): id → reason.
    std::vector<std::pair<std::uint32_t, std::string>> notes;
    void clear();
};

// Settings shared by the policies (so no baseline gets a different grace or quantum).
struct PolicySettings {
    double min_run_s = 600.0;                  // a (re)started trial is not preempted before this
    double slice_s = 1800.0;                   // time-slice quantum (gandiva, gavel rounds)
    double tiresias_threshold_gpu_s = 3600.0;  // 2D-LAS queue threshold (attained GPU-seconds)
    double tiresias_starve_factor = 2.0;       // promote after waiting this × its last service
    double asha_reduction = 3.0;               // η
    std::size_t asha_rungs = 3;
    double slaq_horizon_s = 900.0;  // predicted gain over this much more run time
    // Curve-based policies (explsched, slaq) refresh their assessments this often, as the
    // plugins re-rank every PriorityCalcPeriod: 1 minute in the recommended slurm.conf (README,
    // etc/slurm.conf.explsched; Slurm's own default is 5 minutes, --rerank 300); in between they
    // act on the last assessments, as the plugins do.
    double rerank_period_s = 60.0;
    double oasis_patience_s = 6.0 * 3600.0;  // an unadmitted trial is rejected after this
    bool record = false;                     // keep per-trial notes
    // The explsched policy's engine settings (--params, the PriorityParameters keys); its
    // min_run_s is kept equal to min_run_s above.
    EngineSettings engine;
};

struct PolicyContext {
    const CurveLibrary* library = nullptr;
    const ThroughputTable* throughputs = nullptr;
    const ClusterSpec* cluster = nullptr;
    std::string reference_gpu = "v100";
    PolicySettings settings;
};

class Policy {
public:
    virtual ~Policy() = default;
    virtual std::string_view name() const = 0;
    // Called once per round; `plan` arrives cleared.
    virtual Status schedule(const RoundInput& input, RoundPlan& plan) = 0;
    // A trial ended (finished, stopped) or was preempted: policies with per-trial state drop or
    // update it here.
    virtual void on_end(const ObservedTrial&) {}
    // Per-trial detail for the record (e.g. the engine's last assessment), as a JSON object text;
    // empty if the policy has none.
    virtual std::string describe_trial(const ObservedTrial&) const { return {}; }
};

// Names of all policies, in the order the comparison table lists them.
const std::vector<std::string>& policy_names();
// `workload` is handed to the oracle only.
Result<std::unique_ptr<Policy>> make_policy(std::string_view name, const PolicyContext& context,
                                            const Workload& workload);

// One factory per policy file.
std::unique_ptr<Policy> make_fifo_policy(const PolicyContext& context);
std::unique_ptr<Policy> make_tiresias_policy(const PolicyContext& context);
std::unique_ptr<Policy> make_gandiva_policy(const PolicyContext& context);
Result<std::unique_ptr<Policy>> make_gavel_policy(const PolicyContext& context);
std::unique_ptr<Policy> make_asha_policy(const PolicyContext& context);
std::unique_ptr<Policy> make_slaq_policy(const PolicyContext& context);
std::unique_ptr<Policy> make_oasis_policy(const PolicyContext& context);
Result<std::unique_ptr<Policy>> make_explsched_policy(const PolicyContext& context);
std::unique_ptr<Policy> make_oracle_policy(const PolicyContext& context, const Workload& workload);

// Helpers the policies share.
// Starts pending trials in the given order while they fit (first-fit backfill).
void start_in_order(const std::vector<ObservedTrial*>& order, FreeGpus& free, RoundPlan& plan);
// Hands the cluster's GPUs out by rank: `ranked` lists running and pending trials, best first;
// `pinned` are running trials that keep their GPUs whatever their rank (e.g. within their
// grace period). Going down the ranking, a trial that fits in the GPUs left keeps them
// (running) or is started (pending); when anything is to start, the running trials that kept
// nothing are preempted to make room.
void plan_by_rank(const RoundInput& input, const std::vector<ObservedTrial*>& ranked,
                  const std::vector<ObservedTrial*>& pinned, RoundPlan& plan);
// Speed of a trial on `type` relative to the reference type (1 if unknown).
double type_speed(const PolicyContext& context, const ObservedTrial& trial, std::string_view type);

}  // namespace explsched::sim
