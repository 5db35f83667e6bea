// The simulated cluster: nodes with GPUs of one type each, and the allocation of a job's GPUs to
// nodes (a job may span nodes; within a type it is packed onto as few nodes as possible, the way
// Slurm's select/cons_tres prefers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/result.hpp"

namespace explsched::sim {

struct NodeGroup {
    std::string gpu_type;  // lower case ("v100")
    std::uint32_t nodes = 0;
    std::uint32_t gpus_per_node = 0;
};

struct ClusterSpec {
    std::vector<NodeGroup> groups;

    std::uint32_t total_gpus() const;
    std::uint32_t gpus_of(std::string_view type) const;
    // Types in the order the spec first names them.
    std::vector<std::string> types() const;
    std::string describe() const;  // "v100:125x8"
};

// "TYPE:NODESxGPUS[,TYPE:NODESxGPUS...]" (e.g. "v100:16x8,k80:8x4"), or "NODESxGPUS" (v100).
Result<ClusterSpec> parse_cluster_spec(std::string_view text);
// N GPUs of `type` on nodes of `per_node` (the last node holds the rest).
ClusterSpec homogeneous_cluster(std::uint32_t gpus, std::string type = "v100", std::uint32_t per_node = 8);

struct Allocation {
    std::string gpu_type;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> nodes;  // (node index, GPUs)
    std::uint32_t gpus() const;
    bool empty() const { return nodes.empty(); }
};

class Cluster {
public:
    explicit Cluster(const ClusterSpec& spec);

    std::uint32_t free_gpus(std::string_view type) const;
    std::uint32_t free_gpus() const { return free_total_; }
    std::uint32_t total_gpus() const { return total_; }
    const std::vector<std::string>& types() const { return types_; }

    // Takes `gpus` GPUs of `type` (best fit onto one node, else the fullest-free nodes first).
    // Empty allocation if they are not free.
    Allocation allocate(std::string_view type, std::uint32_t gpus);
    void release(const Allocation& allocation);

private:
    struct Node {
        std::uint32_t type = 0;
        std::uint32_t free = 0;
    };
    std::vector<Node> nodes_;
    std::vector<std::string> types_;
    std::vector<std::uint32_t> free_by_type_;
    std::uint32_t free_total_ = 0;
    std::uint32_t total_ = 0;
    int type_index(std::string_view type) const;
};

}  // namespace explsched::sim
