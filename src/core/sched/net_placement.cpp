#include "core/sched/net_placement.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <numeric>
#include <optional>

namespace explsched::net {

namespace {

// Isolated speed of each allowed shape relative to the fastest known one (1 when unknown), and
// each shape's type: looked up once per request, into the costs' scratch buffers.
struct Shapes {
    std::vector<int>& type;
    std::vector<int>& nodes;
    std::vector<double>& speed;

    Shapes(NodeCosts& costs, const PairTable& table, const PlacementRequest& req)
        : type(costs.scratch().shape_type),
          nodes(costs.scratch().shape_nodes),
          speed(costs.scratch().shape_speed) {
        type.clear();
        nodes.clear();
        speed.clear();
        double best = 0.0;
        for (int n : req.node_counts) {
            if (n <= 0 || req.gpus % n != 0) continue;
            nodes.push_back(n);
            type.push_back(costs.shape_type(req.model, req.gpus, n));
            const auto v = table.isolated(type.back());
            speed.push_back(v ? *v : -1.0);  // isolated, made relative below
            if (v) best = std::max(best, *v);
        }
        for (double& v : speed) v = v > 0.0 && best > 0.0 ? v / best : 1.0;
    }
};

// Fill in ratio, others' loss and cost of `c` (nodes and type set).
void score(const ContentionModel& model, const NetState& state, const PlacementRequest& req, double speed,
           NodeCosts& costs, PlacementChoice& c) {
    c.ratio = model.ratio_if_placed(state, c.type, c.nodes);
    c.shape_speed = speed;
    std::vector<std::uint32_t>& joined = costs.scratch().joined;  // no allocation per decision
    joined.clear();
    std::vector<int> uplinks;
    if (c.nodes.size() >= 2) {
        for (int n : c.nodes)
            for (const auto& e : state.on_node(n)) joined.push_back(e.id);
        uplinks = state.uplinks_of(c.nodes);
        for (int s : uplinks)
            for (const auto& e : state.on_uplink(s)) joined.push_back(e.id);
    }
    std::sort(joined.begin(), joined.end());
    joined.erase(std::unique(joined.begin(), joined.end()), joined.end());
    c.others_loss = 0.0;
    costs.mark(c.nodes, uplinks);
    for (std::uint32_t id : joined) c.others_loss += costs.loss_of(id, c.type);
    c.joined = static_cast<int>(joined.size());
    c.cost = static_cast<double>(req.gpus) * (1.0 - c.ratio * c.shape_speed) + c.others_loss;
    c.found = true;
}

// The entries' first-order costs for a job of `type` added to `c` in the list's order: the
// stretch each causes it (summed, or the most by the min rule) and the GPU-weighted stretch it
// causes each. The type's columns (`own_by`, `caused_by`, by the other's type + 1) hold
// stretch() of every type the table has; any other asks the table (the same values).
inline NodeCosts::Cost add_entries(NodeCosts::Cost c, const NetState::Entry* first,
                                   const NetState::Entry* last, const double* own_by, const double* caused_by,
                                   std::size_t width, int type, bool additive, const PairTable& table) {
    for (const NetState::Entry* e = first; e != last; ++e) {
        const auto o = static_cast<std::size_t>(e->type + 1);  // unknown (-1): column 0
        const bool in = o < width;
        const double x = in ? own_by[o] : table.stretch(type, e->type);
        c.own = additive ? c.own + x : std::max(c.own, x);
        c.caused += static_cast<double>(e->gpus) * (in ? caused_by[o] : table.stretch(e->type, type));
    }
    return c;
}

}  // namespace

std::size_t NodeCosts::add_slot(int type) {
    const std::size_t at_index = static_cast<std::size_t>(type + 1);
    for (std::size_t i = 0; i < types_.size(); ++i)
        if (types_[i].type == type) return i;
    if (type >= -1 && at_index < 4096) {
        if (slot_of_.size() <= at_index) slot_of_.resize(at_index + 1, -1);
        slot_of_[at_index] = static_cast<int>(types_.size());
    }
    const std::size_t n = state_->node_count();
    const PairTable& table = model_->table();
    PerType t{type, std::vector<Cell>(n), {}, {}};
    const int width = static_cast<int>(table.size());
    t.own_by.reserve(static_cast<std::size_t>(width + 1));
    t.caused_by.reserve(static_cast<std::size_t>(width + 1));
    for (int other = PairTable::unknown; other < width; ++other) {
        t.own_by.push_back(table.stretch(type, other));
        t.caused_by.push_back(table.stretch(other, type));
    }
    types_.push_back(std::move(t));
    return types_.size() - 1;
}

bool NodeCosts::rebind(const ContentionModel& model, const NetState& state, std::uint64_t table_fingerprint,
                       std::size_t max_types) {
    // what the kept values were computed under (the last round's model and state are gone)
    const Bound now{table_fingerprint, model.settings().rule, model.settings().floor, state.node_count(),
                    state.uplink_capacity};
    const bool same = bound_ && bound_->fingerprint == now.fingerprint && bound_->rule == now.rule &&
                      bound_->floor == now.floor && bound_->nodes == now.nodes &&
                      bound_->uplink_capacity == now.uplink_capacity && types_.size() <= max_types;
    model_ = &model;
    state_ = &state;
    bound_ = now;
    if (!same) {
        types_.clear();
        slot_of_.clear();
        together_.clear();
        jobs_.clear();
        shape_types_.clear();
        jobs_.reserve(state.size());  // a load per running job at most: no rehash while they come
        kept_ = 0;
        return false;
    }
    ++kept_;
    for (auto it = jobs_.begin(); it != jobs_.end();) {
        if (state.job(it->first) == nullptr)
            it = jobs_.erase(it);
        else
            ++it;
    }
    return true;
}

const NodeCosts::Cost& NodeCosts::compute(PerType& t, int node) {
    const auto v = static_cast<std::size_t>(node);
    const PairTable& table = model_->table();
    const bool additive = model_->settings().rule == Rule::link_additive;
    const auto& on = state_->on_node(node);
    // A job appended to a list whose costs are kept (a plan's pick): those costs and the one
    // job's, added in the list's order as a full pass adds them (the same value).
    const std::uint64_t before = state_->appended_over(node);
    Cell& cell = t.cell[v];
    const bool extend = before != 0 && cell.seen == before && !on.empty();
    const NetState::Entry* first = extend ? &on.back() : on.data();
    cell.cost = add_entries(extend ? cell.cost : Cost{}, first, on.data() + on.size(), t.own_by.data(),
                            t.caused_by.data(), t.own_by.size(), t.type, additive, table);
    cell.seen = state_->node_version(node) + 1;
    return cell.cost;
}

void NodeCosts::cost_together(const std::vector<int>& types) {
    for (std::size_t s : together_) types_[s].together = false;
    together_.clear();
    for (int type : types) {
        const std::size_t s = slot(type);
        if (!types_[s].together) {
            types_[s].together = true;
            together_.push_back(s);
        }
    }
    if (together_.size() < 2) {  // one type: compute() alone
        for (std::size_t s : together_) types_[s].together = false;
        together_.clear();
    }
}

void NodeCosts::compute_together(std::size_t node) {
    const auto& on = state_->on_node(static_cast<int>(node));
    // the entries' columns (the other's type + 1) and GPUs, read once for every type
    column_.clear();
    gpus_.clear();
    const std::size_t width = types_[together_.front()].own_by.size();
    for (const NetState::Entry& e : on) {
        const auto o = static_cast<std::size_t>(e.type + 1);
        if (o >= width) {  // a type past the table's (none is): compute() asks the table
            for (std::size_t s : together_) compute(types_[s], static_cast<int>(node));
            return;
        }
        column_.push_back(o);
        gpus_.push_back(static_cast<double>(e.gpus));
    }
    const std::uint64_t seen = state_->node_version(static_cast<int>(node)) + 1;
    if (model_->settings().rule == Rule::link_additive)
        add_up(node, seen, [](double a, double b) { return a + b; });
    else
        add_up(node, seen, [](double a, double b) { return std::max(a, b); });
}

template <class Join>
void NodeCosts::add_up(std::size_t node, std::uint64_t seen, Join join) {
    // per type, the entries added in the list's order as compute() adds them (the same values)
    const auto own_by = [&](std::size_t i) { return types_[together_[i]].own_by.data(); };
    const auto caused_by = [&](std::size_t i) { return types_[together_[i]].caused_by.data(); };
    const auto cell = [&](std::size_t i) -> Cell& { return types_[together_[i]].cell[node]; };
    const std::size_t entries = column_.size();
    std::size_t i = 0;
    // four types to a pass over the entries, their sums in registers
    for (; i + 4 <= together_.size(); i += 4) {
        const double *x0 = own_by(i), *x1 = own_by(i + 1), *x2 = own_by(i + 2), *x3 = own_by(i + 3);
        const double *y0 = caused_by(i), *y1 = caused_by(i + 1), *y2 = caused_by(i + 2),
                     *y3 = caused_by(i + 3);
        Cost c0, c1, c2, c3;
        for (std::size_t k = 0; k < entries; ++k) {
            const std::size_t o = column_[k];
            const double g = gpus_[k];
            c0.own = join(c0.own, x0[o]);
            c0.caused += g * y0[o];
            c1.own = join(c1.own, x1[o]);
            c1.caused += g * y1[o];
            c2.own = join(c2.own, x2[o]);
            c2.caused += g * y2[o];
            c3.own = join(c3.own, x3[o]);
            c3.caused += g * y3[o];
        }
        cell(i) = {c0, seen};
        cell(i + 1) = {c1, seen};
        cell(i + 2) = {c2, seen};
        cell(i + 3) = {c3, seen};
    }
    for (; i < together_.size(); ++i) {
        const double *x = own_by(i), *y = caused_by(i);
        Cost c;
        for (std::size_t k = 0; k < entries; ++k) {
            c.own = join(c.own, x[column_[k]]);
            c.caused += gpus_[k] * y[column_[k]];
        }
        cell(i) = {c, seen};
    }
}

double NodeCosts::load(int type, const std::vector<NetState::Entry>& on, std::uint32_t self) const {
    const bool additive = model_->settings().rule == Rule::link_additive;
    double l = 0.0;
    for (const auto& e : on) {
        if (e.id == self) continue;
        const double x = model_->table().stretch(type, e.type);
        l = additive ? l + x : std::max(l, x);
    }
    return l;
}

std::uint64_t NodeCosts::stamp_of(const NetState::Job& j) const {
    std::uint64_t s = j.uplinks.empty() ? 1 : state_->uplink_version() + 1;
    // versions name their links' contents: the same contents, the same stamp
    for (int n : j.nodes) s = s * 0x100000001B3ull + state_->node_version(n);
    return s;
}

void NodeCosts::mark(const std::vector<int>& nodes, const std::vector<int>& uplinks) {
    if (++mark_ == 0) {  // wrapped: old marks could read as new ones
        std::fill(node_mark_.begin(), node_mark_.end(), 0);
        std::fill(uplink_mark_.begin(), uplink_mark_.end(), 0);
        mark_ = 1;
    }
    marked_nodes_ = 0;
    for (int n : nodes) {
        if (n < 0) continue;
        const auto v = static_cast<std::size_t>(n);
        if (v >= node_mark_.size()) node_mark_.resize(std::max(v + 1, state_->node_count()), 0);
        marked_nodes_ += node_mark_[v] != mark_;
        node_mark_[v] = mark_;
    }
    for (int u : uplinks) {
        if (u < 0) continue;
        const auto s = static_cast<std::size_t>(u);
        if (s >= uplink_mark_.size()) uplink_mark_.resize(s + 1, 0);
        uplink_mark_[s] = mark_;
    }
}

void NodeCosts::reach_of(const std::vector<int>& nodes, std::vector<std::uint64_t>& out) const {
    const std::size_t count = state_->node_count();
    std::size_t bits = count;  // the candidate's own nodes may lie past the state's (a longer free list)
    for (int n : nodes) bits = std::max(bits, static_cast<std::size_t>(std::max(n, 0)) + 1);
    out.assign((bits + 63) / 64, 0);
    const auto take = [&](int n) {
        const auto v = static_cast<std::size_t>(n);
        if (n >= 0 && v < bits) out[v / 64] |= std::uint64_t{1} << (v % 64);
    };
    for (int n : nodes) {
        take(n);
        if (n < 0 || static_cast<std::size_t>(n) >= count) continue;
        for (const auto& e : state_->on_node(n))
            if (const NetState::Job* j = state_->job(e.id))
                for (int m : j->nodes) take(m);
    }
}

double NodeCosts::loss_of(std::uint32_t id, int type) {
    const NetState::Job* j = state_->job(id);
    if (!j || marked_nodes_ < 2) return 0.0;
    // A newcomer that does not stretch the job (a measured ratio of 1) adds 0 to each of its
    // links under the additive rule: its ratio is unchanged, without working out its loads.
    if (model_->settings().rule == Rule::link_additive && model_->table().stretch(j->type, type) == 0.0)
        return 0.0;
    const double floor = model_->settings().floor;
    const double cap = state_->uplink_capacity;
    JobLoads& l = jobs_[id];
    const std::uint64_t stamp = stamp_of(*j);
    if (l.stamp != stamp) {
        l.stamp = stamp;
        double worst = 0.0;
        // Summed stretch on a node: the node's cost for the job's type (cached per node) less
        // the job's own entry there.
        const bool additive = model_->settings().rule == Rule::link_additive;
        const std::size_t own_slot = additive ? slot(j->type) : 0;
        const double self = additive ? model_->table().stretch(j->type, j->type) : 0.0;
        l.links = j->nodes.size() + j->uplinks.size();
        if (l.links > 8) l.large.resize(l.links);
        double* out = l.link();
        for (int n : j->nodes) {
            *out =
                additive ? std::max(0.0, at(own_slot, n).own - self) : load(j->type, state_->on_node(n), id);
            worst = std::max(worst, *out++);
        }
        for (int s : j->uplinks) {
            *out = load(j->type, state_->on_uplink(s), id);
            worst = std::max(worst, *out++ / cap);
        }
        l.before = std::max(floor, 1.0 / (1.0 + worst));
    }
    const bool additive = model_->settings().rule == Rule::link_additive;
    const double x = model_->table().stretch(j->type, type);
    auto with = [&](double v) { return additive ? v + x : std::max(v, x); };
    const auto marked = [this](const std::vector<std::uint32_t>& marks, int e) {
        return static_cast<std::size_t>(e) < marks.size() && marks[static_cast<std::size_t>(e)] == mark_;
    };
    double worst = 0.0;
    const double* link = l.link();
    for (std::size_t i = 0; i < j->nodes.size(); ++i)
        worst = std::max(worst, marked(node_mark_, j->nodes[i]) ? with(link[i]) : link[i]);
    const double* up = link + j->nodes.size();  // the uplinks' loads follow the nodes'
    for (std::size_t i = 0; i < j->uplinks.size(); ++i)
        worst = std::max(worst, (marked(uplink_mark_, j->uplinks[i]) ? with(up[i]) : up[i]) / cap);
    const double after = std::max(floor, 1.0 / (1.0 + worst));
    return static_cast<double>(j->gpus) * std::max(0.0, l.before - after);
}

void NodeCosts::scan(std::size_t slot, int gpus, int n, const std::vector<int>& free_gpus, std::size_t keep,
                     std::vector<std::pair<double, int>>& top) {
    top.clear();
    const int per = gpus / n;
    const double g = static_cast<double>(gpus);
    // Ties (empty nodes) go to the fullest node that fits: keep large holes whole. The tie term by
    // free GPUs, computed once (free GPUs are a node's few).
    double tie_of[65];
    for (int f = 0; f < 65; ++f) tie_of[f] = tie_term(f, per);
    const std::size_t nodes = free_gpus.size();
    const std::size_t costed = n >= 2 ? std::min(nodes, state_->node_count()) : 0;
    // The `keep` cheapest by (cost, index): a node dearer than the bar so far costs one
    // comparison (no list of every node to sort).
    const int* free = free_gpus.data();
    // The hot loop reads the cached cells and versions through plain pointers (the vectors are
    // not resized while it runs).
    PerType& t = types_[slot];
    Cell* cells = t.cell.data();
    const std::uint64_t* version = state_->node_versions().data();
    // A node not costed since its list changed: for every type costed together with this one,
    // unless its cost for this one only lacks the job last appended (compute() adds that one).
    const auto fresh = [&](std::size_t v) -> const Cost& {
        const std::uint64_t before = state_->appended_over(static_cast<int>(v));
        if (!t.together || (before != 0 && cells[v].seen == before)) return compute(t, static_cast<int>(v));
        compute_together(v);
        return cells[v].cost;
    };
    // Nodes cheaper than `worst` are collected unsorted; when `cap` are collected, the `keep`
    // least by (cost, index) stay and `worst` becomes the keep-th's cost. A node dropped then,
    // or refused later, has `keep` nodes of lower index that cost no more: it is not among the
    // `keep` least, so the ones left at the end, sorted, are those of a full sort.
    const std::size_t cap = 4 * keep;  // (a larger floor, 64, was slower for a few nodes kept)
    top.reserve(cap);
    double worst = std::numeric_limits<double>::infinity();
    const auto trim = [&] {
        std::nth_element(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(keep - 1), top.end());
        top.resize(keep);
        worst = top[keep - 1].first;
    };
    const auto offer = [&](double cost, std::size_t v) {
        top.emplace_back(cost, static_cast<int>(v));
        if (top.size() == cap) trim();
    };
    const auto tie = [&](int f) { return f < 65 ? tie_of[f] : tie_term(f, per); };
    for (std::size_t v = 0; v < costed; ++v) {
        const int f = free[v];
        if (f < per) continue;
        const Cost& c = cells[v].seen == version[v] + 1 ? cells[v].cost : fresh(v);
        const double cost = g * c.own + c.caused + tie(f);
        if (cost < worst) offer(cost, v);  // equal cost: the lower index stays
    }
    for (std::size_t v = costed; v < nodes; ++v)
        if (free[v] >= per) {
            const double cost = tie(free[v]);
            if (cost < worst) offer(cost, v);
        }
    if (top.size() > keep) trim();
    std::sort(top.begin(), top.end());
}

double NodeCosts::node_cost(std::size_t slot, int gpus, int n, std::size_t v, int free) {
    const double tie = tie_term(free, gpus / n);
    if (n < 2 || v >= state_->node_count()) return tie;
    const Cost& c = at(slot, static_cast<int>(v));
    return static_cast<double>(gpus) * c.own + c.caused + tie;
}

void NodeCosts::reuse_rankings(bool on) {
    reuse_ = on;
    ranked_.clear();
}

void NodeCosts::cheapest(std::size_t slot, int gpus, int n, const std::vector<int>& free_gpus,
                         std::vector<std::pair<double, int>>& top) {
    top.clear();
    if (n <= 0 || gpus % n != 0) return;
    const auto want = static_cast<std::size_t>(n);
    if (!reuse_) {
        scan(slot, gpus, n, free_gpus, want, top);
        ++scanned_;
        return;
    }
    // The ranking kept for this request and free list (bounded in number: requests are users').
    const Key key{slot, gpus, n, free_gpus.data()};
    if (ranked_.size() >= 256 && ranked_.find(key) == ranked_.end()) ranked_.clear();
    Ranked& r = ranked_[key];
    const int *from = nullptr, *to = nullptr;
    const std::size_t nodes = free_gpus.size();
    if (r.valid && r.nodes == nodes && state_->changes_since(r.seq, from, to) &&
        static_cast<std::size_t>(to - from) <= nodes / 8 + 8) {
        // Only the nodes the log names changed (their jobs, and so their free GPUs): every
        // other node ranks where it did, so one not below the bar is still not.
        changed_.assign(from, to);
        std::sort(changed_.begin(), changed_.end());
        changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
        r.below.erase(std::remove_if(r.below.begin(), r.below.end(),
                                     [&](const std::pair<double, int>& e) {
                                         return std::binary_search(changed_.begin(), changed_.end(),
                                                                   e.second);
                                     }),
                      r.below.end());
        const int per = gpus / n;
        for (int cv : changed_) {
            const auto v = static_cast<std::size_t>(cv);
            if (cv < 0 || v >= nodes || free_gpus[v] < per) continue;
            const std::pair<double, int> e{node_cost(slot, gpus, n, v, free_gpus[v]), cv};
            if (e < r.bar) r.below.insert(std::upper_bound(r.below.begin(), r.below.end(), e), e);
        }
        r.seq = state_->change_seq();
        if (r.below.size() >= want) {
            top.assign(r.below.begin(), r.below.begin() + static_cast<std::ptrdiff_t>(want));
            ++reranked_;
            if (check_) {  // tests: the same answer as a scan
                std::vector<std::pair<double, int>> full;
                scan(slot, gpus, n, free_gpus, want, full);
                mismatches_ += full != top;
            }
            return;
        }
    }
    // A scan, keeping some nodes past the n cheapest below the bar for the calls to come.
    ++scanned_;
    const std::size_t keep = 2 * want + 9;
    scan(slot, gpus, n, free_gpus, keep, r.below);
    if (r.below.size() == keep) {
        r.bar = r.below.back();
        r.below.pop_back();
    } else {
        r.bar = {std::numeric_limits<double>::infinity(), std::numeric_limits<int>::max()};
    }
    r.valid = true;
    r.nodes = nodes;
    r.seq = state_->change_seq();
    top.assign(r.below.begin(),
               r.below.begin() + static_cast<std::ptrdiff_t>(std::min(want, r.below.size())));
}

PlacementChoice choose_placement(const ContentionModel& model, const NetState& state,
                                 const std::vector<int>& free_gpus, const PlacementRequest& req,
                                 NodeCosts* costs) {
    std::optional<NodeCosts> own_costs;
    if (!costs) costs = &own_costs.emplace(model, state);
    const Shapes shapes(*costs, model.table(), req);
    const double gpus = static_cast<double>(req.gpus);
    // Each shape's candidate (its n cheapest nodes by first-order cost) and a lower bound of its
    // exact cost: the job's ratio is at most 1 / (1 + the worst node link's contention) and the
    // joined jobs lose >= 0. A candidate is scored exactly (the expensive part) only while its
    // bound is within the best exact cost so far: the same choice, cheaper.
    struct Candidate {
        PlacementChoice choice;
        double bound = 0.0;
        double speed = 1.0;
    };
    // Shapes in order of the least they can cost (gpus * (1 - their isolated speed): no
    // contention at all); a shape whose least exceeds the best exact cost so far is not scanned.
    std::vector<std::size_t>& order = costs->scratch().shape_order;
    order.resize(shapes.nodes.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    if (order.size() > 1)  // (a sort's buffer costs an allocation)
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return shapes.speed[a] > shapes.speed[b]; });
    PlacementChoice best;
    std::vector<std::pair<double, int>>& top = costs->scratch().top;  // a shape's n cheapest nodes
    for (std::size_t k : order) {
        if (best.found && gpus * (1.0 - shapes.speed[k]) > best.cost + 1e-9) break;
        const int n = shapes.nodes[k];
        if (static_cast<std::size_t>(n) > free_gpus.size()) continue;
        const std::size_t slot = costs->slot(shapes.type[k]);
        costs->cheapest(slot, req.gpus, n, free_gpus, top);
        const std::size_t want = static_cast<std::size_t>(n);
        if (top.size() < want) continue;
        Candidate cand;
        cand.choice.nodes.reserve(static_cast<std::size_t>(n));
        cand.choice.type = shapes.type[k];
        cand.speed = shapes.speed[k];
        double worst_own = 0.0;
        for (int i = 0; i < n; ++i) {
            const int v = top[static_cast<std::size_t>(i)].second;
            cand.choice.nodes.push_back(v);
            if (n >= 2 && static_cast<std::size_t>(v) < state.node_count())
                worst_own = std::max(worst_own, costs->at(slot, v).own);
        }
        std::sort(cand.choice.nodes.begin(), cand.choice.nodes.end());
        const double ratio_max = n >= 2 ? std::max(model.settings().floor, 1.0 / (1.0 + worst_own)) : 1.0;
        cand.bound = gpus * (1.0 - ratio_max * cand.speed);
        if (best.found && cand.bound > best.cost + 1e-9) continue;
        PlacementChoice& c = cand.choice;
        score(model, state, req, cand.speed, *costs, c);
        // Equal cost: fewer nodes, fewer links for later jobs to share.
        const bool better = !best.found || c.cost < best.cost - 1e-9 ||
                            (c.cost <= best.cost + 1e-9 && c.nodes.size() < best.nodes.size());
        if (better) best = std::move(c);
    }
    return best;
}

PlacementChoice first_fit_placement(const ContentionModel& model, const NetState& state,
                                    const std::vector<int>& free_gpus, const PlacementRequest& req,
                                    NodeCosts* costs) {
    std::optional<NodeCosts> own;
    if (!costs) costs = &own.emplace(model, state);
    const Shapes shapes(*costs, model.table(), req);  // the request's node counts that divide its GPUs
    for (std::size_t k = 0; k < shapes.nodes.size(); ++k) {
        const int n = shapes.nodes[k];
        const int per = req.gpus / n;
        PlacementChoice c;
        for (std::size_t v = 0; v < free_gpus.size() && c.nodes.size() < static_cast<std::size_t>(n); ++v)
            if (free_gpus[v] >= per) c.nodes.push_back(static_cast<int>(v));
        if (c.nodes.size() < static_cast<std::size_t>(n)) continue;
        c.type = shapes.type[k];
        score(model, state, req, shapes.speed[k], *costs, c);
        return c;
    }
    return {};
}

std::string placement_reason(const PlacementChoice& c, const std::vector<std::string_view>& node_names) {
    if (!c.found) return "placement: no node set fits";
    std::string s;
    s.reserve(112 + 8 * c.nodes.size());  // (no reallocation for names up to 7 characters)
    s = "placement: nodes ";
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
        if (i) s += ',';
        const auto n = static_cast<std::size_t>(c.nodes[i]);
        s += n < node_names.size() ? node_names[n] : std::to_string(c.nodes[i]);
    }
    // as printf's %.2f (std::to_chars rounds the same), without printf's cost: slurmctld writes
    // one per placed job each round
    const auto fixed2 = [&s](double x) {
        char buf[400];  // room for any double (%.2f of 1e308 has 312 characters)
        const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, 2);
        s.append(buf, r.ec == std::errc() ? r.ptr : buf);
    };
    s += ", predicted ";
    fixed2(c.ratio);
    s += " of isolated";
    if (c.joined > 0) {
        s += ", joins " + std::to_string(c.joined) + (c.joined == 1 ? " job" : " jobs") + " (they lose ";
        fixed2(c.others_loss);
        s += " GPU)";
    }
    return s;
}

}  // namespace explsched::net
