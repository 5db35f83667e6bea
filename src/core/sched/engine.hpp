// The ExplSched core engine, the one entry point the slurmctld plugins, the simulator and the
// tools call. Each round the host hands it a view of every job it schedules (pending and running)
// and the cluster's GPU count; the engine answers, per job, a Slurm priority, the trial's utility
// per GPU-second against the GPU price, the predicted final metric with an interval, its state and
// a decision with a reason. Preemption questions between two jobs are answered from the last
// round (can_preempt).
//
// The engine is a plain object (no global state); it caches one curve fit per trial, keyed by
// (job id, array task), and refits only when a trial's points changed, so a round over 12,000
// jobs costs arithmetic, not fitting. Same sequence of rounds in → same answers out.
// Not thread-safe: the host serialises calls (slurmctld plugins hold the job lock anyway).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/sched/decision.hpp"
#include "core/sched/engine_settings.hpp"
#include "core/base/log.hpp"
#include "core/curves/prediction.hpp"
#include "core/base/result.hpp"
#include "core/sched/throughput_table.hpp"
#include "core/curves/trial.hpp"

namespace explsched {

enum class JobState { pending, running };

// What the host knows about one job. Times are seconds on one clock (epoch seconds in slurmctld,
// simulated seconds in the simulator).
struct JobView {
    TrialKey key;  // job id + array task id (TrialKey::kNoArrayTask if none)
    // The sweep the trial belongs to (--explore=GROUP); empty for a non-exploratory job, which is
    // ranked by age, partition and nice only and never preempted by the engine's rule. Hosts make
    // it unique per user (e.g. "uid:GROUP") so two users' "lr" sweeps do not mix.
    std::string group;
    Direction direction = Direction::maximize;
    double max_steps = 0.0;  // step the trial stops at; 0 = unknown
    // --explore-on-hopeless; unset: the site default (EngineSettings::hopeless_action)
    bool has_hopeless_action = false;
    HopelessAction hopeless_action = HopelessAction::requeue_hold;
    // ASHA milestones in steps, increasing (--explore-milestones); empty: derived from the
    // settings and max_steps. Used only while the trial has too few points to extrapolate.
    std::vector<double> milestones;
    std::uint32_t gpus = 1;  // GPUs the job holds (running) or requests (pending)
    std::string gpu_type;    // type it runs on / would get ("v100"); empty = unknown
    // Type its reported speed was measured on, when different from gpu_type (it was requeued
    // onto another type); empty = same as gpu_type.
    std::string measured_gpu_type;
    std::string job_type;  // throughput-table job type; empty = no scaling by type
    JobState state = JobState::pending;
    double submit_time = 0.0;       // when it was (re)queued: the age term counts from here
    double start_time = 0.0;        // running: when this run started (0 = unknown)
    double partition_factor = 0.0;  // Slurm partition priority, normalised to [0, 1]
    std::int32_t nice = 0;          // Slurm nice (already signed): subtracted from the priority
    PointSpan points;               // the reported curve (non-owning; see PointSpan)
};

struct ClusterView {
    double now = 0.0;
    std::uint32_t total_gpus = 0;  // GPUs the scheduled partition(s) have
    // GPUs in use; negative = the sum of the running views' gpus
    std::int64_t busy_gpus = -1;
};

// The engine's answer for one job.
struct Assessment {
    TrialKey key;
    std::uint32_t priority = 1;  // Slurm job priority, >= 1 (0 would mean held)
    // Predicted normalised progress the next utility_horizon_s buys, per GPU-second, weighted by
    // the trial's chance to matter to its group. 0 for non-exploratory jobs.
    double utility = 0.0;
    // Price per GPU-second at the load the job would create (pending) or holds (running).
    double price = 0.0;
    Prediction prediction;  // final metric (at max_steps, else the farthest useful step)
    TrialState state = TrialState::unknown;
    Decision decision = Decision::wait;
    Reason reason;
    std::string error;  // set only for ReasonCode::invalid_report
    bool exploratory = false;
};

// Human-readable "<decision>: <reason>" for an assessment (SystemComment, logs, the CLI).
std::string explain(const Assessment& assessment);

struct PreemptVerdict {
    bool allowed = false;
    std::string reason;
};

// Per-round figures for logs, sprio-like output and the simulator.
struct RoundSummary {
    double now = 0.0;
    double utilisation = 0.0;  // busy / total GPUs
    double price_lower = 0.0;  // current L (0 before any utility was observed)
    double price_upper = 0.0;  // current U
    double price_now = 0.0;    // p(utilisation)
    std::size_t trials = 0;    // exploratory jobs this round
    std::size_t fitted = 0;    // trials refitted this round
    std::size_t invalid = 0;   // jobs whose report was rejected
};

class Engine {
public:
    // Validates the settings. The logger (may be null: nothing is logged) must outlive the
    // engine. The throughput table may be empty.
    static Result<Engine> create(const EngineSettings& settings, ThroughputTable throughputs = {},
                                 Logger* logger = nullptr);

    Engine(Engine&&) noexcept;
    Engine& operator=(Engine&&) noexcept;
    ~Engine();

    // One scheduling round. `out` is resized to jobs.size(), out[i] answering jobs[i]. Trials
    // absent from `jobs` are forgotten (their cached fit dropped). A job whose points are bad gets
    // an invalid_report assessment (and a log line), not a failed round; the round fails only on
    // bad input as a whole (a key listed twice, total_gpus 0 with running jobs).
    Status evaluate(const std::vector<JobView>& jobs, const ClusterView& cluster,
                    std::vector<Assessment>& out);

    // The assessment of `key` from the last round, or null.
    const Assessment* find(const TrialKey& key) const;

    // May `preemptor` take `preemptee`'s GPUs? Only a running, exploratory preemptee whose
    // decision is preemptable/terminate/requeue_hold can be preempted; an exploratory preemptor
    // needs utility > (1 + preempt_margin) x the preemptee's, a non-exploratory one a higher
    // priority. The reason says which rule decided.
    PreemptVerdict can_preempt(const Assessment& preemptor, const Assessment& preemptee) const;
    // By key, from the last round; not allowed (with a reason) if either was not assessed.
    PreemptVerdict can_preempt(const TrialKey& preemptor, const TrialKey& preemptee) const;

    const RoundSummary& last_round() const;
    const EngineSettings& settings() const;
    std::size_t cached_trials() const;

private:
    struct Impl;
    explicit Engine(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace explsched
