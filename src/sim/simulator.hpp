// The discrete-event core: replays a workload on a cluster under one policy, in scheduling rounds
// like Slurm's. Between rounds running trials make progress at their speed on the GPU type they
// hold and report a curve point whenever they pass one of their curve's steps; a preempted trial
// keeps its checkpointed progress, waits out a requeue delay, and pays a restart cost (GPU time
// without progress) when it starts again. A paused trial (freeze-thaw) keeps its checkpointed
// progress and holds no GPU until its policy resumes it (it is then queued and pays the restart
// cost when it starts) or stops it. Rounds in which nothing could change (no eligible
// pending trial) are skipped up to the next arrival, report or finish.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "core/sched/throughput_table.hpp"
#include "sim/cluster.hpp"
#include "sim/curve_library.hpp"
#include "sim/sim_policy.hpp"
#include "sim/workload.hpp"

namespace explsched::sim {

struct SimSettings {
    double period_s = 60.0;         // scheduling period (Slurm's sched_interval-like)
    double restart_cost_s = 60.0;   // checkpoint save + reload per preemption, GPUs held idle
    double requeue_delay_s = 60.0;  // a preempted trial may start again this much later
    double max_time_s = 0.0;        // stop the clock here (0 = run until every trial ended)
    std::string reference_gpu = "v100";
    bool record = false;  // keep per-trial marks and the policy's last word on each
};

struct Mark {
    double time = 0.0;
    double step = 0.0;
    std::string what;  // start, preempt, pause, resume, stop, finish, unfinished
    std::string note;  // the policy's reason, when recorded
};

struct TrialOutcome {
    TrialStatus status = TrialStatus::future;  // finished, stopped, or pending/running if cut off
    double first_start = -1.0;
    double end = std::numeric_limits<double>::quiet_NaN();
    double gpu_seconds = 0.0;
    double progress = 0.0;      // steps trained
    std::size_t reported = 0;   // curve points reported
    double best_quality = 0.0;  // normalised best report (0 before any)
    double best_metric = std::numeric_limits<double>::quiet_NaN();
    std::uint32_t preemptions = 0;
    std::uint32_t pauses = 0;        // paused with its checkpoint (freeze-thaw)
    std::uint32_t resumes = 0;       // resumed from a pause
    std::vector<Mark> marks;         // record only
    std::vector<CurvePoint> points;  // record only: what it reported
    std::string detail;              // record only: policy's JSON object for this trial
};

struct SimResult {
    std::string policy;
    std::vector<TrialOutcome> trials;  // parallel to Workload::trials
    // Per sweep: seconds from its first arrival until one of its trials reported a quality
    // within `kBestTolerance` of its best trial's final quality; NaN if never.
    std::vector<double> sweep_time_to_best;
    // Per sweep: the least time to best any policy could have (a lower bound on
    // sweep_time_to_best whatever the policy): over its trials, arrival after the sweep's first
    // + the time to the first report within kBestTolerance of the best, trained from its arrival
    // at the fastest speed a GPU type that holds it gives, never queued, paused or restarted.
    // NaN if no trial gets there.
    std::vector<double> sweep_time_to_best_bound;
    std::vector<double> decision_ms;  // policy wall time per round
    std::size_t rounds = 0;
    double end_time = 0.0;  // simulated clock at the end
    double wall_s = 0.0;    // real time the simulation took
};

inline constexpr double kBestTolerance = 0.01;

Result<SimResult> simulate(const Workload& workload, const CurveLibrary& library,
                           const ThroughputTable& throughputs, const ClusterSpec& cluster, Policy& policy,
                           const SimSettings& settings);

}  // namespace explsched::sim
