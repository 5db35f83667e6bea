#include "core/sched/net_round.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "core/sched/net_plan.hpp"

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
                                         RoundCache* carry, std::size_t window) {
    const PairTable& table = model.table();
    std::vector<int> free(nodes.size());
    std::vector<std::string_view> names(nodes.size());
    std::vector<Left> left(nodes.size());
    for (std::size_t v = 0; v < nodes.size(); ++v) {
        free[v] = nodes[v].gpus - std::max(0, nodes[v].busy_gpus);
        left[v] = left_of(nodes[v]);
        names[v] = nodes[v].name;
    }
    std::vector<int> leaf(nodes.size(), -1);
    for (std::size_t v = 0; v < nodes.size(); ++v) leaf[v] = nodes[v].leaf;
    const std::uint64_t fingerprint = table.stretch_fingerprint();
    // The running jobs' state: the cache's brought up to date, or built for this round.
    RoundCache scratch_cache;
    RoundCache& cache = carry ? *carry : scratch_cache;
    // the state holds types (the table's key indexes): it is kept while the keys are
    const std::uint64_t keys = table.keys_fingerprint();
    const bool keep = cache.state_ && cache.leaf_ == leaf && cache.keys_ == keys;
    if (!keep) {
        cache.state_.emplace(nodes.size(), leaf);
        cache.leaf_ = std::move(leaf);
        cache.keys_ = keys;
        cache.types_.clear();
        cache.listed_.clear();
        cache.listed_.reserve(running.size());
        cache.kept_ = 0;
        // room for the running jobs and this round's placements on every node, in one go
        std::vector<std::uint32_t> entries(nodes.size(), 0);
        for (const RoundRunning& r : running)
            for (int v : r.nodes)
                if (v >= 0 && static_cast<std::size_t>(v) < nodes.size())
                    ++entries[static_cast<std::size_t>(v)];
        for (auto& e : entries) e += 4;
        cache.state_->reserve(running.size() + pending.size(), entries);
    } else {
        ++cache.kept_;
    }
    NetState& state = *cache.state_;
    state.uplink_capacity = uplink_capacity;
    // Each running job against what the cache last listed for its id: a job listed as before
    // costs one lookup; a new or changed one (requeued and started again elsewhere) is added
    // anew, and the jobs not listed any more (ended) leave the state.
    const std::uint64_t round = ++cache.rounds_;
    std::size_t seen = 0;  // ids listed this round
    for (const RoundRunning& r : running) {
        const int n = static_cast<int>(r.nodes.size());
        if (n == 0) continue;
        for (int v : r.nodes)
            if (v >= 0 && static_cast<std::size_t>(v) < nodes.size())
                free[static_cast<std::size_t>(v)] -= r.gpus / n;
        if (carry == nullptr) {  // a state for this round alone: nothing to compare with next time
            state.add(r.id, cache.types_.find(table, r.model, r.gpus, n), r.gpus, r.nodes);
            continue;
        }
        RoundCache::Listed& l = cache.listed_[r.id];
        // its nodes as listed last: a multi-node job's are the state's (no copy kept)
        const auto same_nodes = [&] {
            if (n == 1) return l.node == r.nodes.front();
            const NetState::Job* j = state.job(r.id);
            return j != nullptr &&
                   std::equal(j->nodes.begin(), j->nodes.end(), r.nodes.begin(), r.nodes.end());
        };
        const bool same =
            l.round != 0 && l.gpus == r.gpus && l.count == n && l.model == r.model && same_nodes();
        seen += l.round != round;
        l.round = round;
        if (same) continue;
        l.model = r.model;
        l.gpus = r.gpus;
        l.count = n;
        l.node = r.nodes.front();
        state.add(r.id, cache.types_.find(table, r.model, r.gpus, n), r.gpus, r.nodes);
    }
    if (cache.listed_.size() > seen)
        cache.listed_.erase_if([&](std::uint32_t id, const RoundCache::Listed& l) {
            if (l.round == round) return false;
            state.remove(id);
            return true;
        });
    // this round's placements join the state for the round only
    std::vector<std::uint32_t> added;
    struct Undo {
        NetState& state;
        std::vector<std::uint32_t>& added;
        ~Undo() {
            for (std::uint32_t id : added) state.remove(id);
        }
    } undo{state, added};
    {  // priority order (highest first, ties by id), sorting indexes: a RoundPending is large
        std::vector<std::size_t> order(pending.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            const RoundPending &x = pending[a], &y = pending[b];
            return x.priority != y.priority ? x.priority > y.priority : x.id < y.id;
        });
        std::vector<RoundPending> sorted;
        sorted.reserve(pending.size());
        for (std::size_t i : order) sorted.push_back(std::move(pending[i]));
        pending = std::move(sorted);
    }
    std::vector<RoundAnswer> out(pending.size());
    // The queue the planner places: jobs with GPUs, equal per node, on >= 2 nodes.
    std::vector<std::size_t> at;  // queue index -> pending index
    std::vector<PlacementRequest> queue;
    for (std::size_t i = 0; i < pending.size(); ++i) {
        const RoundPending& p = pending[i];
        out[i].id = p.id;
        if (p.gpus <= 0) continue;  // GPUs are what placement counts: a CPU-only job is Slurm's alone
        if (p.nodes < 2 || p.gpus % p.nodes != 0) {
            out[i].reason = "placement: not a multi-node job with equal GPUs per node";
            continue;
        }
        at.push_back(i);
        queue.push_back({p.model, p.gpus, {p.nodes}});
    }
    // Whether pending job p may use node v given the CPUs and memory left (`lf`), and where queue
    // job k may go given the GPUs free so far.
    const auto may_use = [&](const RoundPending& p, std::size_t v, const std::vector<Left>& lf) {
        return nodes[v].usable && (v >= p.allowed.size() || p.allowed[v]) &&
               lf[v].fits(p.cpus_per_node, p.mem_per_node_mb);
    };
    const auto mask_with = [&](std::size_t k, const std::vector<int>& fr, const std::vector<Left>& lf,
                               std::vector<int>& m) {
        const RoundPending& p = pending[at[k]];
        for (std::size_t v = 0; v < nodes.size(); ++v) m[v] = may_use(p, v, lf) ? std::max(0, fr[v]) : -1;
    };
    std::vector<int> scratch(nodes.size());
    const auto fits = [&](std::size_t k, const std::vector<int>& fr, const std::vector<Left>& lf) {
        const RoundPending& p = pending[at[k]];
        mask_with(k, fr, lf, scratch);
        int room = 0;
        for (int g : scratch) room += g >= p.gpus / p.nodes;
        return room >= p.nodes;
    };
    // Kinds: jobs with the same request, needs and allowed nodes are scored once per state. Mask
    // kinds: jobs with the same needs and allowed nodes (whatever their request) see the same
    // nodes, so they share one mask.
    std::vector<std::size_t> kind(queue.size()), mask_kind(queue.size());
    std::size_t mask_kinds = 0;
    {
        std::map<std::tuple<int, std::int64_t, std::vector<bool>>, std::size_t> by_needs;
        std::map<std::tuple<std::string, int, int, std::size_t>, std::size_t> by;
        for (std::size_t k = 0; k < queue.size(); ++k) {
            const RoundPending& p = pending[at[k]];
            mask_kind[k] =
                by_needs
                    .emplace(std::make_tuple(p.cpus_per_node, p.mem_per_node_mb, p.allowed), by_needs.size())
                    .first->second;
            kind[k] =
                by.emplace(std::make_tuple(p.model, p.gpus, p.nodes, mask_kind[k]), by.size()).first->second;
        }
        mask_kinds = by_needs.size();
    }
    // Each mask kind's mask, kept up to date from the nodes picks changed (`touched`, a log: a
    // mask is synced to a position in it), so a score costs no pass over every node.
    std::vector<std::vector<int>> kind_mask(mask_kinds);
    std::vector<std::size_t> synced(mask_kinds, 0);
    std::vector<bool> have_mask(mask_kinds, false);
    std::vector<int> touched;
    NodeCosts& costs = cache.costs_;
    costs.rebind(model, state, fingerprint);
    std::vector<bool> placed(queue.size(), false);
    std::vector<std::size_t> picks;  // queue indexes, in the order placed
    // Plans `members` (queue indexes, in priority order) with window `w` and takes the plan: its
    // jobs' GPUs, CPUs and memory, and their traffic in `state`, are theirs for the rest of the round.
    const auto plan_and_take = [&](const std::vector<std::size_t>& members, std::size_t w) {
        if (members.empty()) return;
        std::vector<PlacementRequest> sub;
        PlanHooks hooks;
        for (std::size_t k : members) {
            sub.push_back(queue[k]);
            hooks.kind.push_back(kind[k]);
        }
        const std::vector<Left> left0 = left;
        const auto forget_masks = [&] {
            std::fill(have_mask.begin(), have_mask.end(), false);
            touched.clear();
        };
        forget_masks();
        hooks.mask = [&](std::size_t j, const std::vector<int>& fr) -> const std::vector<int>& {
            const std::size_t k = members[j], kd = mask_kind[k];
            std::vector<int>& m = kind_mask[kd];
            if (!have_mask[kd]) {
                m.resize(nodes.size());
                mask_with(k, fr, left, m);
                have_mask[kd] = true;
            } else {
                const RoundPending& p = pending[at[k]];
                for (std::size_t i = synced[kd]; i < touched.size(); ++i) {
                    const auto v = static_cast<std::size_t>(touched[i]);
                    m[v] = may_use(p, v, left) ? std::max(0, fr[v]) : -1;
                }
            }
            synced[kd] = touched.size();
            return m;
        };
        hooks.picked = [&](std::size_t j, const std::vector<int>& on) {
            const RoundPending& p = pending[at[members[j]]];
            for (int v : on) {
                left[static_cast<std::size_t>(v)].take(p.cpus_per_node, p.mem_per_node_mb);
                touched.push_back(v);
            }
        };
        hooks.reset = [&] {
            left = left0;
            forget_masks();
        };
        hooks.costs_bound = true;
        // backfill (a job that fits nowhere now is skipped; Slurm decides whether later ones start), and
        // no job held for the running ones' sake (Slurm would start it anyway, unplaced)
        const RoundPlan plan =
            plan_round(model, state, free, sub, {{w}, true, true, -std::numeric_limits<double>::infinity()},
                       &costs, &hooks);
        for (const Planned& pl : plan.placed) {
            const std::size_t k = members[pl.index];
            const RoundPending& p = pending[at[k]];
            const PlacementChoice& c = pl.choice;
            RoundAnswer& a = out[at[k]];
            a.pin = true;
            a.nodes = c.nodes;
            a.ratio = c.ratio;
            a.order = picks.size();
            a.nodes_text.reserve(c.nodes.size() * 8);
            for (std::size_t i = 0; i < c.nodes.size(); ++i) {
                if (i) a.nodes_text += ',';
                a.nodes_text += names[static_cast<std::size_t>(c.nodes[i])];
            }
            a.reason = placement_reason(c, names);
            for (int v : c.nodes) {
                free[static_cast<std::size_t>(v)] -= p.gpus / p.nodes;
                left[static_cast<std::size_t>(v)].take(p.cpus_per_node, p.mem_per_node_mb);
            }
            state.add(p.id, c.type, p.gpus, c.nodes);
            added.push_back(p.id);
            placed[k] = true;
            picks.push_back(k);
        }
    };
    const std::vector<int> free0 = free;
    const std::vector<Left> left_now = left;
    std::vector<std::size_t> overdue, rest;
    for (std::size_t k = 0; k < queue.size(); ++k) (pending[at[k]].overdue ? overdue : rest).push_back(k);
    plan_and_take(overdue, 1);  // overdue jobs first, in priority order
    plan_and_take(rest, window);
    // A job not placed that fits in what the placed jobs above it leave was passed by the placed
    // ones below it; each of those names the highest such job.
    for (std::size_t j = 0; j < queue.size(); ++j) {
        RoundAnswer& a = out[at[j]];
        if (placed[j]) continue;
        std::vector<int> fr = free0;
        std::vector<Left> lf = left_now;
        std::vector<std::uint32_t> by;
        for (std::size_t k : picks) {
            const RoundPending& p = pending[at[k]];
            if (k < j) {
                for (int v : out[at[k]].nodes) {
                    fr[static_cast<std::size_t>(v)] -= p.gpus / p.nodes;
                    lf[static_cast<std::size_t>(v)].take(p.cpus_per_node, p.mem_per_node_mb);
                }
            } else {
                by.push_back(p.id);
            }
        }
        if (by.empty() || !fits(j, fr, lf)) {
            a.reason = no_fit_reason(pending[at[j]]);
            continue;
        }
        a.passed = true;
        std::sort(by.begin(), by.end());
        a.reason = "placement: passed this round by JobId";
        for (std::size_t i = 0; i < by.size() && i < 4; ++i)
            a.reason += (i ? "," : "=") + std::to_string(by[i]);
        if (by.size() > 4) a.reason += ",...";
        a.reason += " (less predicted loss per GPU)";
        for (std::size_t k : picks)
            if (k > j && out[at[k]].passes == 0) {
                out[at[k]].passes = pending[at[j]].id;
                out[at[k]].reason += "; before JobId=" + std::to_string(pending[at[j]].id);
            }
    }
    return out;
}

std::vector<int> free_gpus(const std::vector<RoundNode>& nodes, const std::vector<RoundRunning>& running) {
    std::vector<int> free(nodes.size());
    for (std::size_t v = 0; v < nodes.size(); ++v) free[v] = nodes[v].gpus - std::max(0, nodes[v].busy_gpus);
    for (const RoundRunning& r : running) {
        const int n = static_cast<int>(r.nodes.size());
        for (int v : r.nodes)
            if (v >= 0 && static_cast<std::size_t>(v) < nodes.size())
                free[static_cast<std::size_t>(v)] -= r.gpus / n;
    }
    return free;
}

std::size_t jobs_that_fit(const RoundPending& p, const std::vector<RoundNode>& nodes,
                          const std::vector<int>& free) {
    if (p.nodes <= 0) return 0;
    const int per_gpus = p.gpus > 0 ? std::max(1, p.gpus / p.nodes) : 0;
    std::size_t slots = 0;
    for (std::size_t v = 0; v < nodes.size(); ++v) {
        if (!nodes[v].usable || (v < p.allowed.size() && !p.allowed[v]) || v >= free.size()) continue;
        if (per_gpus > 0)
            slots += static_cast<std::size_t>(std::max(0, free[v]) / per_gpus);
        else if (nodes[v].free_cpus >= 0)
            slots += static_cast<std::size_t>(nodes[v].free_cpus / std::max(1, p.cpus_per_node));
        else
            slots += 1;
    }
    return slots / static_cast<std::size_t>(p.nodes);
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
