#include "core/sched/net_round.hpp"

#include <algorithm>
#include <cstdio>

namespace explsched::net {

namespace {

// What is left of a node for jobs: CPUs and memory (-1 = not counted).
struct Left {
    int cpus = -1;
    std::int64_t mem = -1, mem_total = 0;

    bool fits(int need_cpus, std::int64_t need_mem) const {
        if (cpus >= 0 && cpus < need_cpus) return false;
        if (mem < 0) return true;
        return need_mem < 0 ? mem >= mem_total : mem >= need_mem;
    }
    void take(int need_cpus, std::int64_t need_mem) {
        if (cpus >= 0) cpus = std::max(0, cpus - need_cpus);
        if (mem >= 0) mem = need_mem < 0 ? 0 : std::max<std::int64_t>(0, mem - need_mem);
    }
};

Left left_of(const RoundNode& n) { return {n.free_cpus, n.free_mem_mb, n.mem_mb}; }

std::string no_fit_reason(const RoundPending& p) {
    std::string s = "placement: no " + std::to_string(p.nodes) + " nodes with " +
                    std::to_string(p.gpus / p.nodes) + " free GPUs";
    std::vector<std::string> more;
    if (p.cpus_per_node > 0)
        more.push_back(std::to_string(p.cpus_per_node) + (p.cpus_per_node == 1 ? " free CPU" : " free CPUs"));
    if (p.mem_per_node_mb > 0) more.push_back(std::to_string(p.mem_per_node_mb) + " MB free");
    if (p.mem_per_node_mb < 0) more.push_back("all their memory free");
    for (std::size_t i = 0; i < more.size(); ++i) s += (i + 1 == more.size() ? " and " : ", ") + more[i];
    return s + " each now";
}

}  // namespace

std::vector<RoundAnswer> placement_round(const ContentionModel& model, const std::vector<RoundNode>& nodes,
                                         const std::vector<RoundRunning>& running,
                                         std::vector<RoundPending> pending, double uplink_capacity,
                                         NodeCosts* carry) {
    const PairTable& table = model.table();
    std::vector<int> free(nodes.size());
    std::vector<std::string> names(nodes.size());
    std::vector<Left> left(nodes.size());
    for (std::size_t v = 0; v < nodes.size(); ++v) {
        free[v] = nodes[v].gpus - std::max(0, nodes[v].busy_gpus);
        left[v] = left_of(nodes[v]);
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
    std::optional<NodeCosts> own;
    if (carry)
        carry->rebind(model, state, table.fingerprint());
    else
        own.emplace(model, state);
    NodeCosts& costs = carry ? *carry : *own;
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
            const bool ok = nodes[v].usable && (v >= p.allowed.size() || p.allowed[v]) &&
                            left[v].fits(p.cpus_per_node, p.mem_per_node_mb);
            masked[v] = ok ? std::max(0, free[v]) : -1;
        }
        const PlacementChoice c =
            choose_placement(model, state, masked, {p.model, p.gpus, {p.nodes}}, &costs);
        if (!c.found) {
            a.reason = no_fit_reason(p);
            out.push_back(std::move(a));
            continue;
        }
        a.pin = true;
        a.nodes = c.nodes;
        a.ratio = c.ratio;
        for (std::size_t i = 0; i < c.nodes.size(); ++i)
            a.nodes_text += (i ? "," : "") + names[static_cast<std::size_t>(c.nodes[i])];
        a.reason = placement_reason(c, names);
        for (int v : c.nodes) {
            free[static_cast<std::size_t>(v)] -= p.gpus / p.nodes;
            left[static_cast<std::size_t>(v)].take(p.cpus_per_node, p.mem_per_node_mb);
        }
        state.add(p.id, c.type, p.gpus, c.nodes);
        out.push_back(std::move(a));
    }
    return out;
}

std::optional<Migration> choose_migration(const ContentionModel& model, const std::vector<RoundNode>& nodes,
                                          const std::vector<RoundRunning>& running, double below,
                                          double margin, const std::vector<std::uint32_t>& skip,
                                          double uplink_capacity) {
    if (!(below > 0.0)) return std::nullopt;
    const PairTable& table = model.table();
    std::vector<int> free(nodes.size()), leaf(nodes.size());
    std::vector<std::string> names(nodes.size());
    for (std::size_t v = 0; v < nodes.size(); ++v) {
        free[v] = nodes[v].usable ? std::max(0, nodes[v].gpus - std::max(0, nodes[v].busy_gpus)) : -1;
        leaf[v] = nodes[v].leaf;
        names[v] = nodes[v].name;
    }
    NetState state(nodes.size(), std::move(leaf));
    state.uplink_capacity = uplink_capacity;
    for (const RoundRunning& r : running) {
        const int n = static_cast<int>(r.nodes.size());
        if (n == 0) continue;
        for (int v : r.nodes)
            if (v >= 0 && static_cast<std::size_t>(v) < nodes.size() &&
                free[static_cast<std::size_t>(v)] >= 0)
                free[static_cast<std::size_t>(v)] -= r.gpus / n;
        state.add(r.id, table.find(shape_key(r.model, r.gpus, n)), r.gpus, r.nodes);
    }
    std::optional<Migration> best;
    NodeCosts costs(model, state);
    for (const RoundRunning& r : running) {
        const int n = static_cast<int>(r.nodes.size());
        if (n < 2 || r.gpus <= 0 || r.gpus % n != 0) continue;
        if (std::find(skip.begin(), skip.end(), r.id) != skip.end()) continue;
        const double now = model.ratio(state, r.id);
        if (now >= below || (best && now >= best->ratio_now)) continue;
        // where it would go, with its own GPUs and its own traffic taken away
        const NetState::Job* self = state.job(r.id);
        const int type = self ? self->type : PairTable::unknown;
        state.remove(r.id);
        std::vector<int> room = free;
        for (int v : r.nodes)
            if (room[static_cast<std::size_t>(v)] >= 0) room[static_cast<std::size_t>(v)] += r.gpus / n;
        // nodes without its CPUs and memory free (on its own nodes they are its) are out
        for (std::size_t v = 0; v < nodes.size(); ++v) {
            const bool own = std::find(r.nodes.begin(), r.nodes.end(), static_cast<int>(v)) != r.nodes.end();
            if (!own && !left_of(nodes[v]).fits(r.cpus_per_node, r.mem_per_node_mb)) room[v] = -1;
        }
        const PlacementChoice c = choose_placement(model, state, room, {r.model, r.gpus, {n}}, &costs);
        state.add(r.id, type, r.gpus, r.nodes);
        if (!c.found || c.nodes == r.nodes || c.ratio < now + margin) continue;
        Migration m;
        m.id = r.id;
        m.ratio_now = now;
        m.ratio_there = c.ratio;
        for (std::size_t i = 0; i < c.nodes.size(); ++i)
            m.nodes_text += (i ? "," : "") + names[static_cast<std::size_t>(c.nodes[i])];
        char buf[128];
        std::snprintf(buf, sizeof buf, "migrate: predicted %.2f of isolated here, %.2f on ", now, c.ratio);
        m.reason = buf + m.nodes_text;
        best = std::move(m);
    }
    return best;
}

}  // namespace explsched::net
