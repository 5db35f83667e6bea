// The engine's value types: what a host tells the engine about its jobs and cluster each round,
// and what the engine answers per job and per round. Plain data, shared by the engine, the
// policy rules, the job-summary line and the hosts; the engine itself is in engine.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/curves/prediction.hpp"
#include "core/curves/trial.hpp"
#include "core/sched/decision.hpp"
#include "core/sched/engine_settings.hpp"
#include "core/sched/gpu_types.hpp"

namespace explsched {

enum class JobState { pending, running };

// A job's owner (uid) when the host knows it; kNoOwner otherwise (the simulator).
inline constexpr std::uint32_t kNoOwner = 0xffffffffU;

// What the host knows about one job. Times are seconds on one clock (epoch seconds in slurmctld,
// simulated seconds in the simulator).
struct JobView {
    TrialKey key;  // job id + array task id (TrialKey::kNoArrayTask if none)
    // Its owner: forecast audits are kept per owner, and preempt_cross_user compares owners.
    std::uint32_t owner = kNoOwner;
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
    // Steps at which its learning rate drops, increasing (--explore-lr-drops): no stopping rule's
    // verdict is final before it has run past the first one. Empty: none declared.
    std::vector<double> lr_drops;
    std::uint32_t gpus = 1;  // GPUs the job holds (running) or requests (pending)
    std::string gpu_type;    // type it runs on / would get ("v100"); empty = unknown
    // Type its reported speed was measured on, when different from gpu_type (it was requeued
    // onto another type); empty = same as gpu_type.
    std::string measured_gpu_type;
    std::string job_type;  // throughput-table job type (--explore-model); empty = no scaling by type
    JobState state = JobState::pending;
    // A pending trial held because the engine paused it (the host's record says the hold is its
    // own): the engine decides whether to resume it. Not counted in the load, bids for no price.
    bool paused = false;
    std::uint32_t pauses = 0;  // times the host paused this trial before (pause_max)
    // The host can requeue it (slurmctld: a batch job not submitted with --no-requeue). One it
    // cannot is never paused, and a running one whose hopeless action is requeue_hold is only
    // marked (preemptable) instead: a pause or a requeue would fail, and the trial would be
    // killed when preempted for its decision.
    bool requeueable = true;
    // A job array's task (or its record of pending tasks): the array's job id, 0 for a job that is
    // not in an array. With a task limit (sbatch --array=0-31%4) the array's running tasks hold its
    // slots: a pending task `throttled` (the array runs at its limit) starts only when one of them
    // ends, whatever GPUs are free. An unlikely running task is paused for such waiting tasks of
    // its array (ReasonCode::pause_slot), and a paused one is not resumed while the array has no
    // slot for it (paused_no_slot).
    std::uint32_t array_job_id = 0;
    bool throttled = false;
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
    std::uint32_t owner = kNoOwner;
    // Its sweep ("uid:GROUP", the view's group; empty for a non-exploratory job or where unknown):
    // protect_leader shields a sweep's leader from other sweeps' trials, not from its own.
    std::string group;
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
    // The explanation as already written (an assessment rebuilt from a SystemComment line, whose
    // reason figures are not stored): explain() returns it instead of describing the figures.
    std::string explanation;
    bool exploratory = false;
    // The GPU type it was valued on (the view's gpu_type), and how its speed was scaled to it
    // (exploratory jobs only; gpu_types.hpp).
    std::string gpu_type;
    std::string measured_gpu_type;  // set when scaled (or no_row): the type its speed came from
    GpuValue gpu_value;
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
    double utilisation = 0.0;    // busy / total GPUs
    double price_lower = 0.0;    // current L (0 before any utility was observed)
    double price_upper = 0.0;    // current U
    double price_now = 0.0;      // p(utilisation)
    std::size_t trials = 0;      // exploratory jobs this round
    std::size_t fitted = 0;      // trials refitted this round
    std::size_t invalid = 0;     // jobs whose report was rejected
    std::size_t discounted = 0;  // trials whose owner's forecasts failed too often (utility scaled down)
};

}  // namespace explsched
