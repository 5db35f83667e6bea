#include "core/sched/net_placement.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace explsched::net {

namespace {

// Isolated speed of each allowed shape relative to the fastest known one (1 when unknown).
double shape_speed(const PairTable& table, const PlacementRequest& req, int nodes) {
    double best = 0.0;
    for (int n : req.node_counts) {
        if (n <= 0 || req.gpus % n != 0) continue;
        if (const auto v = table.isolated(table.find(shape_key(req.model, req.gpus, n))))
            best = std::max(best, *v);
    }
    const auto mine = table.isolated(table.find(shape_key(req.model, req.gpus, nodes)));
    if (!mine || best <= 0.0) return 1.0;
    return *mine / best;
}

// Fill in ratio, others' loss and cost of `c` (nodes and type set).
void score(const ContentionModel& model, const NetState& state, const PlacementRequest& req,
           PlacementChoice& c) {
    c.ratio = model.ratio_if_placed(state, c.type, c.nodes);
    c.shape_speed = shape_speed(model.table(), req, static_cast<int>(c.nodes.size()));
    std::vector<std::uint32_t> joined;
    if (c.nodes.size() >= 2) {
        for (int n : c.nodes)
            for (const auto& e : state.on_node(n)) joined.push_back(e.id);
        for (int s : state.uplinks_of(c.nodes))
            for (const auto& e : state.on_uplink(s)) joined.push_back(e.id);
    }
    std::sort(joined.begin(), joined.end());
    joined.erase(std::unique(joined.begin(), joined.end()), joined.end());
    c.others_loss = 0.0;
    for (std::uint32_t id : joined) {
        const NetState::Job* j = state.job(id);
        if (!j) continue;
        const double before = model.ratio(state, id);
        const double after = model.ratio_with_newcomer(state, id, c.type, c.nodes);
        c.others_loss += static_cast<double>(j->gpus) * std::max(0.0, before - after);
    }
    c.joined = static_cast<int>(joined.size());
    c.cost = static_cast<double>(req.gpus) * (1.0 - c.ratio * c.shape_speed) + c.others_loss;
    c.found = true;
}

}  // namespace

PlacementChoice choose_placement(const ContentionModel& model, const NetState& state,
                                 const std::vector<int>& free_gpus, const PlacementRequest& req) {
    const PairTable& table = model.table();
    const bool additive = model.settings().rule == Rule::link_additive;
    PlacementChoice best;
    std::vector<std::pair<double, int>> ranked;
    for (int n : req.node_counts) {
        if (n <= 0 || req.gpus % n != 0 || static_cast<std::size_t>(n) > free_gpus.size()) continue;
        const int per = req.gpus / n;
        const int type = table.find(shape_key(req.model, req.gpus, n));
        ranked.clear();
        for (std::size_t v = 0; v < free_gpus.size(); ++v) {
            if (free_gpus[v] < per) continue;
            double own = 0.0, caused = 0.0;
            if (n >= 2 && v < state.node_count()) {
                for (const auto& e : state.on_node(static_cast<int>(v))) {
                    const double x = table.stretch(type, e.type);
                    own = additive ? own + x : std::max(own, x);
                    caused += static_cast<double>(e.gpus) * table.stretch(e.type, type);
                }
            }
            // Ties (empty nodes) go to the fullest node that fits: keep large holes whole.
            const double tie =
                1e-6 * static_cast<double>(free_gpus[v] - per) / (1.0 + static_cast<double>(per));
            ranked.emplace_back(static_cast<double>(req.gpus) * own + caused + tie, static_cast<int>(v));
        }
        if (ranked.size() < static_cast<std::size_t>(n)) continue;
        std::partial_sort(ranked.begin(), ranked.begin() + n, ranked.end());
        PlacementChoice c;
        c.type = type;
        for (int i = 0; i < n; ++i) c.nodes.push_back(ranked[static_cast<std::size_t>(i)].second);
        std::sort(c.nodes.begin(), c.nodes.end());
        score(model, state, req, c);
        // Equal cost: fewer nodes, fewer links for later jobs to share.
        const bool better = !best.found || c.cost < best.cost - 1e-9 ||
                            (c.cost <= best.cost + 1e-9 && c.nodes.size() < best.nodes.size());
        if (better) best = std::move(c);
    }
    return best;
}

PlacementChoice first_fit_placement(const ContentionModel& model, const NetState& state,
                                    const std::vector<int>& free_gpus, const PlacementRequest& req) {
    for (int n : req.node_counts) {
        if (n <= 0 || req.gpus % n != 0) continue;
        const int per = req.gpus / n;
        PlacementChoice c;
        for (std::size_t v = 0; v < free_gpus.size() && c.nodes.size() < static_cast<std::size_t>(n); ++v)
            if (free_gpus[v] >= per) c.nodes.push_back(static_cast<int>(v));
        if (c.nodes.size() < static_cast<std::size_t>(n)) continue;
        c.type = model.table().find(shape_key(req.model, req.gpus, n));
        score(model, state, req, c);
        return c;
    }
    return {};
}

std::string placement_reason(const PlacementChoice& c, const std::vector<std::string>& node_names) {
    if (!c.found) return "placement: no node set fits";
    std::string s = "placement: nodes ";
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
        if (i) s += ',';
        const auto n = static_cast<std::size_t>(c.nodes[i]);
        s += n < node_names.size() ? node_names[n] : std::to_string(c.nodes[i]);
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, ", predicted %.2f of isolated", c.ratio);
    s += buf;
    if (c.joined > 0) {
        std::snprintf(buf, sizeof buf, ", joins %d job%s (they lose %.2f GPU)", c.joined,
                      c.joined == 1 ? "" : "s", c.others_loss);
        s += buf;
    }
    return s;
}

}  // namespace explsched::net
