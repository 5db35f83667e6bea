#include "sim/cluster.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "core/base/strings.hpp"

namespace explsched::sim {

std::uint32_t ClusterSpec::total_gpus() const {
    std::uint32_t total = 0;
    for (const NodeGroup& g : groups) total += g.nodes * g.gpus_per_node;
    return total;
}

std::uint32_t ClusterSpec::gpus_of(std::string_view type) const {
    std::uint32_t total = 0;
    for (const NodeGroup& g : groups) {
        if (g.gpu_type == type) total += g.nodes * g.gpus_per_node;
    }
    return total;
}

std::vector<std::string> ClusterSpec::types() const {
    std::vector<std::string> out;
    for (const NodeGroup& g : groups) {
        if (std::find(out.begin(), out.end(), g.gpu_type) == out.end()) out.push_back(g.gpu_type);
    }
    return out;
}

std::string ClusterSpec::describe() const {
    std::string out;
    for (const NodeGroup& g : groups) {
        if (!out.empty()) out += ",";
        out += g.gpu_type + ":" + std::to_string(g.nodes) + "x" + std::to_string(g.gpus_per_node);
    }
    return out;
}

Result<ClusterSpec> parse_cluster_spec(std::string_view text) {
    ClusterSpec spec;
    if (trim(text).empty()) return make_error("cluster spec: empty");
    for (auto item : split(text, ",")) {
        item = trim(item);
        std::string type = "v100";
        std::string_view shape = item;
        const auto colon = item.find(':');
        if (colon != std::string_view::npos) {
            type = std::string(trim(item.substr(0, colon)));
            shape = trim(item.substr(colon + 1));
            std::transform(type.begin(), type.end(), type.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (type.empty() ||
                type.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos) {
                return make_error("cluster spec: '" + std::string(item) + "': GPU type '" + type +
                                  "' is not a plain name");
            }
        }
        const auto x = shape.find('x');
        const auto nodes = x == std::string_view::npos ? std::nullopt : parse_uint64(shape.substr(0, x));
        const auto per_node = x == std::string_view::npos ? std::nullopt : parse_uint64(shape.substr(x + 1));
        if (!nodes || !per_node || *nodes == 0 || *per_node == 0 || *nodes > 1000000 || *per_node > 1024) {
            return make_error("cluster spec: '" + std::string(item) +
                              "' is not [TYPE:]NODESxGPUS (e.g. v100:16x8)");
        }
        spec.groups.push_back(
            {type, static_cast<std::uint32_t>(*nodes), static_cast<std::uint32_t>(*per_node)});
    }
    if (spec.total_gpus() == 0) return make_error("cluster spec: no GPUs");
    return spec;
}

ClusterSpec homogeneous_cluster(std::uint32_t gpus, std::string type, std::uint32_t per_node) {
    ClusterSpec spec;
    if (per_node == 0) per_node = 1;
    if (gpus / per_node > 0) spec.groups.push_back({type, gpus / per_node, per_node});
    if (gpus % per_node > 0) spec.groups.push_back({type, 1, gpus % per_node});
    return spec;
}

std::uint32_t Allocation::gpus() const {
    std::uint32_t total = 0;
    for (const auto& [node, count] : nodes) total += count;
    return total;
}

Cluster::Cluster(const ClusterSpec& spec) : types_(spec.types()) {
    free_by_type_.assign(types_.size(), 0);
    for (const NodeGroup& g : spec.groups) {
        const auto t = static_cast<std::uint32_t>(type_index(g.gpu_type));
        for (std::uint32_t i = 0; i < g.nodes; ++i) nodes_.push_back({t, g.gpus_per_node});
        free_by_type_[t] += g.nodes * g.gpus_per_node;
    }
    for (std::uint32_t f : free_by_type_) free_total_ += f;
    total_ = free_total_;
}

int Cluster::type_index(std::string_view type) const {
    for (std::size_t i = 0; i < types_.size(); ++i) {
        if (types_[i] == type) return static_cast<int>(i);
    }
    return -1;
}

std::uint32_t Cluster::free_gpus(std::string_view type) const {
    const int t = type_index(type);
    return t < 0 ? 0 : free_by_type_[static_cast<std::size_t>(t)];
}

Allocation Cluster::allocate(std::string_view type, std::uint32_t gpus) {
    Allocation out;
    const int t = type_index(type);
    if (t < 0 || gpus == 0 || free_by_type_[static_cast<std::size_t>(t)] < gpus) return out;
    const auto type_u = static_cast<std::uint32_t>(t);
    out.gpu_type = types_[type_u];
    // Best fit on one node: the node with the fewest free GPUs that still holds the whole job.
    std::size_t best = nodes_.size();
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const Node& n = nodes_[i];
        if (n.type == type_u && n.free >= gpus && (best == nodes_.size() || n.free < nodes_[best].free)) {
            best = i;
        }
    }
    if (best != nodes_.size()) {
        nodes_[best].free -= gpus;
        out.nodes.emplace_back(static_cast<std::uint32_t>(best), gpus);
    } else {
        // Span nodes, emptiest first, so the job touches as few nodes as possible.
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            if (nodes_[i].type == type_u && nodes_[i].free > 0) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return nodes_[a].free > nodes_[b].free; });
        std::uint32_t left = gpus;
        for (std::size_t i : order) {
            if (left == 0) break;
            const std::uint32_t take = std::min(left, nodes_[i].free);
            nodes_[i].free -= take;
            left -= take;
            out.nodes.emplace_back(static_cast<std::uint32_t>(i), take);
        }
    }
    free_by_type_[type_u] -= gpus;
    free_total_ -= gpus;
    return out;
}

void Cluster::release(const Allocation& allocation) {
    for (const auto& [node, count] : allocation.nodes) {
        if (node >= nodes_.size() || nodes_[node].free + count > 0x7fffffffU) {
            throw std::logic_error("cluster: release of an allocation this cluster did not make");
        }
        nodes_[node].free += count;
        free_by_type_[nodes_[node].type] += count;
        free_total_ += count;
    }
}

}  // namespace explsched::sim
