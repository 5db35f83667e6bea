#include "core/sched/net_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace explsched::net {

namespace {

// Ids for the jobs a plan adds to the state for a while (clear of any trace's and Slurm's ids:
// Slurm's job ids stay below 0x04000000 (MAX_JOB_ID); the simulator's traces are numbered from 0).
constexpr std::uint32_t kPlanIdBase = 0xF0000000u;

struct Memo {
    PlacementChoice choice;
    std::vector<std::uint64_t> reach;  // its nodes and the nodes of the jobs it would join (bitmap)
    bool stale = false;                // a pick landed in its reach since it was scored
    double per_gpu = 0.0;              // its cost per GPU
};

Memo score_candidate(const ContentionModel& model, const NetState& state, const std::vector<int>& fr,
                     const PlacementRequest& req, bool aware, NodeCosts& costs) {
    Memo m;
    m.choice = aware ? choose_placement(model, state, fr, req, &costs)
                     : first_fit_placement(model, state, fr, req, &costs);
    if (!m.choice.found) return m;
    m.per_gpu = m.choice.cost / static_cast<double>(req.gpus);
    costs.reach_of(m.choice.nodes, m.reach);
    return m;
}

bool meets(const std::vector<std::uint64_t>& reach, const std::vector<int>& nodes) {
    for (int n : nodes) {
        const auto v = static_cast<std::size_t>(n);
        if (n >= 0 && v / 64 < reach.size() && (reach[v / 64] >> (v % 64) & 1) != 0) return true;
    }
    return false;
}

// Kinds by request: jobs asking the same (model, GPUs, node counts) get the same placement.
std::vector<std::size_t> kinds_of(const std::vector<PlacementRequest>& queue, std::size_t& kinds) {
    std::vector<std::size_t> kind(queue.size());
    std::unordered_map<std::string, std::size_t> by_key;
    for (std::size_t k = 0; k < queue.size(); ++k) {
        std::string key = queue[k].model + '\n' + std::to_string(queue[k].gpus);
        for (int n : queue[k].node_counts) key += ',' + std::to_string(n);
        kind[k] = by_key.emplace(std::move(key), by_key.size()).first->second;
    }
    kinds = by_key.size();
    return kind;
}

}  // namespace

RoundPlan plan_round(const ContentionModel& model, NetState& state, const std::vector<int>& free,
                     const std::vector<PlacementRequest>& queue, const PlanSettings& ps, NodeCosts* carry,
                     const PlanHooks* hooks) {
    std::size_t kinds = 0;
    std::vector<std::size_t> kind;
    if (hooks != nullptr && hooks->kind.size() == queue.size()) {
        kind = hooks->kind;
        for (std::size_t k : kind) kinds = std::max(kinds, k + 1);
    } else {
        kind = kinds_of(queue, kinds);
    }
    const bool masked = hooks != nullptr && hooks->mask;
    std::vector<std::optional<Memo>> first(kinds);  // scores before any pick, shared by the plans
    RoundPlan best;
    bool have = false;
    std::size_t evaluations = 0;
    std::optional<NodeCosts> own;
    if (carry && !(hooks != nullptr && hooks->costs_bound))
        carry->rebind(model, state, model.table().stretch_fingerprint());
    else if (!carry)
        own.emplace(model, state);
    NodeCosts& costs = carry ? *carry : *own;
    if (ps.aware && queue.size() >= 2) {  // the requests' types, costed together (one request
                                          // may rank nodes for one of its shapes only)
        std::vector<int> types;
        for (const PlacementRequest& r : queue)
            for (int n : r.node_counts)
                if (n >= 2 && r.gpus % n == 0) types.push_back(costs.shape_type(r.model, r.gpus, n));
        costs.cost_together(types);
    }
    // Within this plan a free list changes only where a pick adds its job or an undone plan
    // removes one (fr, and the hooks' masks): the costs may keep rankings for its run.
    struct Reuse {
        NodeCosts& costs;
        explicit Reuse(NodeCosts& c) : costs(c) { costs.reuse_rankings(true); }
        ~Reuse() { costs.reuse_rankings(false); }
    } reuse{costs};
    // A window past the queue's end plans what the queue's length does: each distinct plan once.
    std::vector<std::size_t> windows;
    for (std::size_t w : ps.aware && !ps.windows.empty() ? ps.windows : std::vector<std::size_t>{1})
        windows.push_back(std::clamp<std::size_t>(w, 1, std::max<std::size_t>(1, queue.size())));
    std::sort(windows.begin(), windows.end());
    windows.erase(std::unique(windows.begin(), windows.end()), windows.end());
    bool undo = false;  // the hooks hold a plan's picks
    for (std::size_t window : windows) {
        if (undo && hooks->reset) hooks->reset();
        undo = false;
        RoundPlan plan;
        plan.window = window;
        std::vector<int> fr = free;
        std::vector<std::optional<Memo>> memo = first;
        std::vector<char> taken(queue.size(), 0);  // (not vector<bool>: read in the window's loop)
        std::size_t picks = 0;
        const auto score = [&](std::size_t k) {
            ++evaluations;
            if (!masked) return score_candidate(model, state, fr, queue[k], ps.aware, costs);
            return score_candidate(model, state, hooks->mask(k, fr), queue[k], ps.aware, costs);
        };
        for (std::size_t head = 0; head < queue.size();) {
            // The least cost per GPU in the window. A stale score is taken as a bound (more jobs
            // placed only add contention): the least is scored again until it is fresh, so
            // candidates far from the top are not scored again at every pick (lazy greedy).
            std::size_t pick = queue.size();
            std::size_t seen = 0;
            for (;;) {
                pick = queue.size();
                seen = 0;
                double best_cost = 0.0;
                for (std::size_t k = head; k < queue.size() && seen < window; ++k) {
                    if (taken[k]) continue;
                    ++seen;
                    auto& m = memo[kind[k]];
                    if (!m) {
                        m = score(k);
                        if (picks == 0) first[kind[k]] = m;
                    }
                    const PlacementChoice& c = m->choice;
                    if (!c.found) continue;
                    const double per_gpu = m->per_gpu;
                    if (pick == queue.size() || per_gpu < best_cost - 1e-9) {
                        pick = k;
                        best_cost = per_gpu;
                    }
                }
                if (pick == queue.size() || !memo[kind[pick]]->stale) break;
                memo[kind[pick]] = score(pick);
            }
            if (pick == queue.size()) {
                if (!ps.backfill || seen == 0) break;
                taken[head] = 1;  // backfill: skip the blocked window head and go on
            } else {
                taken[pick] = 1;
                PlacementChoice c = memo[kind[pick]]->choice;
                const double g = static_cast<double>(queue[pick].gpus);
                // Hold a job whose placement would cost the running jobs more than it gains.
                const bool worth =
                    !ps.aware || g * c.ratio * c.shape_speed - c.others_loss >= ps.min_gain * g;
                if (worth) {
                    const int per = queue[pick].gpus / static_cast<int>(c.nodes.size());
                    for (int v : c.nodes) fr[static_cast<std::size_t>(v)] -= per;
                    state.add(kPlanIdBase + static_cast<std::uint32_t>(plan.placed.size()), c.type,
                              queue[pick].gpus, c.nodes);
                    ++picks;
                    if (hooks != nullptr && hooks->picked) {
                        hooks->picked(pick, c.nodes);
                        undo = true;
                    }
                    // candidates whose nodes, or whose joined jobs' nodes, it shares: score again
                    // (with hooks, a kind whose mask the pick's other resources changed is among
                    // them: only the pick's nodes lose resources)
                    for (auto& m : memo)
                        if (m && m->choice.found && meets(m->reach, c.nodes)) m->stale = true;
                    plan.placed.push_back({pick, std::move(c)});
                }
            }
            while (head < queue.size() && taken[head]) ++head;
        }
        for (std::size_t i = 0; i < plan.placed.size(); ++i) {
            const auto id = kPlanIdBase + static_cast<std::uint32_t>(i);
            const PlacementChoice& c = plan.placed[i].choice;
            plan.useful += static_cast<double>(queue[plan.placed[i].index].gpus) * model.ratio(state, id) *
                           c.shape_speed;
        }
        for (std::size_t i = 0; i < plan.placed.size(); ++i)
            state.remove(kPlanIdBase + static_cast<std::uint32_t>(i));
        if (!have || plan.useful > best.useful + 1e-9) {
            best = std::move(plan);
            have = true;
        }
    }
    if (undo && hooks->reset) hooks->reset();
    best.evaluations = evaluations;
    return best;
}

}  // namespace explsched::net
