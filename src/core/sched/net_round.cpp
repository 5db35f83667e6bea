#include "core/sched/net_round.hpp"

#include <algorithm>

namespace explsched::net {

std::vector<RoundAnswer> placement_round(const ContentionModel& model, const std::vector<RoundNode>& nodes,
                                         const std::vector<RoundRunning>& running,
                                         std::vector<RoundPending> pending, double uplink_capacity) {
    const PairTable& table = model.table();
    std::vector<int> free(nodes.size());
    std::vector<std::string> names(nodes.size());
    for (std::size_t v = 0; v < nodes.size(); ++v) {
        free[v] = nodes[v].gpus;
        names[v] = nodes[v].name;
    }
    std::vector<int> leaf(nodes.size(), -1);
    for (std::size_t v = 0; v < nodes.size(); ++v) leaf[v] = nodes[v].leaf;
    NetState state(nodes.size(), std::move(leaf));
    state.uplink_capacity = uplink_capacity;
    for (const RoundRunning& r : running) {
        const int n = static_cast<int>(r.nodes.size());
        if (n == 0) continue;
        for (int v : r.nodes)
            if (v >= 0 && static_cast<std::size_t>(v) < nodes.size())
                free[static_cast<std::size_t>(v)] -= r.gpus / n;
        state.add(r.id, table.find(shape_key(r.model, r.gpus, n)), r.gpus, r.nodes);
    }
    std::stable_sort(pending.begin(), pending.end(), [](const RoundPending& a, const RoundPending& b) {
        return a.priority != b.priority ? a.priority > b.priority : a.id < b.id;
    });
    std::vector<RoundAnswer> out;
    out.reserve(pending.size());
    std::vector<int> masked(nodes.size());
    for (const RoundPending& p : pending) {
        RoundAnswer a;
        a.id = p.id;
        if (p.gpus <= 0) {  // GPUs are what placement counts: a CPU-only job is Slurm's alone
            out.push_back(std::move(a));
            continue;
        }
        if (p.nodes < 2 || p.gpus % p.nodes != 0) {
            a.reason = "placement: not a multi-node job with equal GPUs per node";
            out.push_back(std::move(a));
            continue;
        }
        for (std::size_t v = 0; v < nodes.size(); ++v) {
            const bool ok = nodes[v].usable && (v >= p.allowed.size() || p.allowed[v]);
            masked[v] = ok ? std::max(0, free[v]) : -1;
        }
        const PlacementChoice c = choose_placement(model, state, masked, {p.model, p.gpus, {p.nodes}});
        if (!c.found) {
            a.reason = "placement: no " + std::to_string(p.nodes) + " nodes with " +
                       std::to_string(p.gpus / p.nodes) + " free GPUs each now";
            out.push_back(std::move(a));
            continue;
        }
        a.pin = true;
        a.nodes = c.nodes;
        a.ratio = c.ratio;
        for (std::size_t i = 0; i < c.nodes.size(); ++i)
            a.nodes_text += (i ? "," : "") + names[static_cast<std::size_t>(c.nodes[i])];
        a.reason = placement_reason(c, names);
        for (int v : c.nodes) free[static_cast<std::size_t>(v)] -= p.gpus / p.nodes;
        state.add(p.id, c.type, p.gpus, c.nodes);
        out.push_back(std::move(a));
    }
    return out;
}

}  // namespace explsched::net
