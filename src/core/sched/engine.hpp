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

#include <cmath>
#include <cstddef>
#include <memory>
#include <vector>

#include "core/base/log.hpp"
#include "core/base/result.hpp"
#include "core/sched/engine_settings.hpp"
#include "core/sched/engine_types.hpp"
#include "core/sched/throughput_table.hpp"

namespace explsched {

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

    // Trials that left the queue since the last round (completed, cancelled, failed) with their
    // final curves, given before the next evaluate(): each one's sweep keeps what it reached
    // (its best, its furthest step, its curve for the sibling rules; not a check of the forecast
    // its last points reached: the audit stays what the rounds saw), and its cached fit is dropped. Without
    // this a trial's points reported after the last round, or the whole of a trial that started and ended
    // between two rounds, never reach its sweep's record. Views without a group or points are ignored; a bad
    // curve records nothing. Refits count against the next round's max_refits_per_round.
    void record_ended(const std::vector<JobView>& ended);

    // The assessment of `key` from the last round, or null.
    const Assessment* find(const TrialKey& key) const;

    // May `preemptor` take `preemptee`'s GPUs? Only a running, exploratory preemptee whose
    // decision is preemptable/terminate/requeue_hold can be preempted; an exploratory preemptor
    // needs utility > (1 + preempt_margin) x the preemptee's, a non-exploratory one a higher
    // priority; a preemptable one (re)started less than min_run_s ago (preemptee_running_s, NaN:
    // unknown) is kept. The reason says which rule decided.
    PreemptVerdict can_preempt(const Assessment& preemptor, const Assessment& preemptee,
                               double preemptee_running_s = NAN) const;
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
