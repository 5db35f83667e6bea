// GPU types from slurmctld's records, for the re-rank's locked walk: each node's configured types,
// each partition's, the type a job's request names and the type of the GPUs a running job holds
// (core/sched/gpu_types.hpp has the rule that picks the one a trial is valued on).
//
// Under slurmctld's locks the walk must cost a few loads per job: type names are interned once
// (a one-byte id per job), a node's types are re-read only when its GRES string changed, a
// partition's only when the partitions or a node changed, and a running job's type is looked up
// once per run (the caller caches it). Nodes with several GPU types: a job there is valued on the
// type it requested (the type of the very GPUs it holds is not read: gres.h differs between Slurm
// releases), else its type is unknown.
// Include after slurmctld.h. Not thread-safe: the caller serialises (its state mutex).
#pragma once

#include <ctime>
#include <utility>
#include <vector>

#include "core/sched/gpu_types.hpp"

namespace explsched::shim {

class SlurmGpuTypes {
public:
    // Under slurmctld's node and partition read locks, before the walk visits jobs.
    // `part_update`: slurmctld's last_part_update.
    void refresh(time_t part_update);
    // After a reconfigure: every node is read again at the next refresh.
    void invalidate();

    // The types on the GPU nodes of `part` (0: none typed, or no partition).
    GpuTypeMask partition_types(const part_record_t* part);
    // The type named by the job's GPU request (tres_per_node, tres_per_job, tres_per_task), or 0.
    GpuTypeId requested_type(const job_record_t* job);
    // A running job: the type of its first node's GPUs when that node has one type, else 0.
    GpuTypeId held_type(const job_record_t* job) const;

    const GpuTypeNames& names() const { return names_; }

private:
    GpuTypeNames names_;
    std::vector<const char*> node_gres_;  // per node index: the GRES string its mask was read from
    std::vector<GpuTypeMask> node_types_;
    std::vector<std::pair<const part_record_t*, GpuTypeMask>> parts_;
    time_t part_update_ = 0;
};

}  // namespace explsched::shim
