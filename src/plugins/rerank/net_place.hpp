// Network-contention-aware placement of pending multi-node jobs (doc/placement.md), run by the
// re-ranking thread once per round when `placement=yes`: copies the nodes, the running multi-node
// jobs and the pending ones into the core's plain types (core/sched/net_round.hpp), and writes the
// answer back as the job's required nodes (details->req_nodes and req_node_bitmap, which
// slurmctld saves and rebuilds from the string at reconfigure and restart), with the reason as
// the SystemComment of jobs that are not trials, and appended to a trial's ranking line
// ("...; placement: nodes n3,n4, predicted 0.97 of isolated"). A job whose required nodes
// someone else set is left alone. Include after slurmctld.h. Never throws.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/base/curve_point.hpp"
#include "core/sched/settings.hpp"
#include "plugins/rerank/rerank.hpp"

namespace explsched::rerank {

// What the ranking knows of a job (job write lock held): whether an operator's site factor is
// kept on it (site_factor mode), and its priority as the ranking answered it, without a
// placement raise (priority mode; 0 when the ranking has none for this instance).
struct RankFacts {
    std::function<bool(const job_record_t*)> site_factor_kept;
    std::function<uint32_t(const job_record_t*)> ranked_priority;
};

// Takes slurmctld's locks itself (job write, node and partition read). `curve(id)`: a trial's
// reported points (placement_learn=yes learns the pair table from their throughput; empty for
// jobs that report nothing); called without slurmctld's locks. A job the planner
// (placement_window) places before a higher one is raised just above it, so that Slurm's
// scheduler, which tries pending jobs by priority, starts it first; how depends on `mode`:
//   - priority: its priority is raised, and the ranking's write-back keeps it (placement_lift);
//     the next round plans it at the ranking's priority (`facts.ranked_priority`), not the
//     raised one (else it would pass nobody, lose the raise, and pass again the round after);
//   - site_factor (priority/multifactor computes the priority): the amount is added to its site
//     factor (placement_site_lift) and multifactor recomputes its priority at once, and again
//     every PriorityCalcPeriod with the lift in it, until the job no longer passes anyone. A job
//     whose site factor is an operator's (`facts.site_factor_kept`) is not raised.
// A priority an operator set (direct_set_prio) is never changed.
void place_multinode_jobs(const Settings& settings, Mode mode, const RankFacts& facts,
                          const std::function<PointSpan(uint32_t)>& curve);

// The priority the last placement round raised a pending job to (0: none): the ranking's
// write-back keeps at least this much, so Slurm does not see the job fall below the one it
// passes between the ranking and the next placement round. The re-ranking thread's alone.
uint32_t placement_lift(uint32_t job_id);

// site_factor mode: what the placement planner adds to a pending job's site factor now (0: none;
// never for another instance of the job id, a job not pending, held, or with an operator's
// priority). Job write lock held (the site factor callbacks): the placement round changes the
// lifts only under it.
uint32_t placement_site_lift(const job_record_t* job);

// Once per process: the pins of ours on pending jobs and the notes on trials' ranking lines,
// read back from the SystemComments (after a slurmctld restart the lines are all that is left;
// the ranking rewrites a trial's line before placement runs). Takes the job read lock.
void recover_placement();

// What placement_learn=yes learned and has not saved yet, saved now (plugin fini, after the
// re-ranking thread stopped): <StateSaveLocation>/explsched_net_learned.json, read back by the
// first learning round of the next slurmctld. Never throws.
void save_learned_placement();

// The placement reason of a trial (pending or running multi-node), "" when none: the ranking
// appends it to the trial's SystemComment line. The re-ranking thread's alone.
std::string placement_note(uint32_t job_id);

}  // namespace explsched::rerank
