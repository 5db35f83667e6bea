#include <string_view>

#include "plugins/slurm_compat.hpp"

#include "plugins/rerank/slurm_gpu_types.hpp"

namespace explsched::shim {

void SlurmGpuTypes::refresh(time_t part_update) {
    bool changed = part_update != part_update_;
    part_update_ = part_update;
    node_record_t* node = nullptr;
    for (int i = 0; (node = next_node(&i)); ++i) {
        const auto at = static_cast<std::size_t>(node->index);
        if (at >= node_gres_.size()) {
            node_gres_.resize(at + 1, nullptr);
            node_types_.resize(at + 1, 0);
        }
        // The pointer changes when slurmctld replaces the string (a node update; a reconfigure
        // calls invalidate(), as a new string may reuse a freed one's address).
        if (node_gres_[at] == node->gres) continue;
        node_gres_[at] = node->gres;
        node_types_[at] = node->gres != nullptr ? node_gpu_types(node->gres, names_) : 0;
        changed = true;
    }
    if (changed) parts_.clear();
}

void SlurmGpuTypes::invalidate() {
    node_gres_.clear();
    node_types_.clear();
    parts_.clear();
}

GpuTypeMask SlurmGpuTypes::partition_types(const part_record_t* part) {
    if (part == nullptr || part->node_bitmap == nullptr) return 0;
    for (const auto& [p, mask] : parts_)
        if (p == part) return mask;
    GpuTypeMask mask = 0;
    node_record_t* node = nullptr;
    for (int i = 0; (node = next_node(&i)); ++i) {
        const auto at = static_cast<std::size_t>(node->index);
        if (at < node_types_.size() && bit_test(part->node_bitmap, node->index)) mask |= node_types_[at];
    }
    parts_.emplace_back(part, mask);
    return mask;
}

GpuTypeId SlurmGpuTypes::requested_type(const job_record_t* job) {
    for (const char* tres : {job->tres_per_node, job->tres_per_job, job->tres_per_task}) {
        if (tres == nullptr) continue;
        if (const GpuTypeId id = tres_gpu_type(tres, names_); id != kNoGpuType) return id;
    }
    return kNoGpuType;
}

GpuTypeId SlurmGpuTypes::held_type(const job_record_t* job) const {
    if (job->node_bitmap == nullptr) return kNoGpuType;
    const auto first = bit_ffs(job->node_bitmap);
    if (first < 0 || static_cast<std::size_t>(first) >= node_types_.size()) return kNoGpuType;
    const GpuTypeMask mask = node_types_[static_cast<std::size_t>(first)];
    if (mask == 0 || (mask & (mask - 1)) != 0) return kNoGpuType;  // untyped, or several types
    GpuTypeId id = 0;
    for (GpuTypeMask m = mask; m > 1; m >>= 1) ++id;
    return id;
}

}  // namespace explsched::shim
