// Network-contention-aware placement of pending multi-node jobs (doc/placement.md), run by the
// re-ranking thread once per round when `placement=yes`: copies the nodes, the running multi-node
// jobs and the pending ones into the core's plain types (core/sched/net_round.hpp), and writes the
// answer back as the job's required nodes (details->req_nodes and req_node_bitmap, which
// slurmctld saves and rebuilds from the string at reconfigure and restart), with the reason in
// the SystemComment of jobs that are not trials (the ranking owns a trial's). A job whose
// required nodes someone else set is left alone. Include after slurmctld.h. Never throws.
#pragma once

#include "core/sched/settings.hpp"

namespace explsched::rerank {

// Takes slurmctld's locks itself (job write, node and partition read).
void place_multinode_jobs(const Settings& settings);

}  // namespace explsched::rerank
