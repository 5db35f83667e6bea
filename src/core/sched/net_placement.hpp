// Where a multi-node job should run: among the node sets with room for it, the one with the least
// predicted loss of throughput, counting the job's own slowdown (and a shape's slower isolated
// speed) and the slowdown it brings to the running jobs it would join.
//
// Candidates, per allowed node count n (gpus divisible by n): every node with gpus/n free GPUs is
// scored by first-order cost: the contention the job would meet there plus the GPU-weighted
// stretch it would cause the jobs there; the n cheapest form the shape's candidate, which is then
// scored exactly (ContentionModel). Cost: O(nodes x jobs per node) per decision.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/sched/net_contention.hpp"

namespace explsched::net {

struct PlacementRequest {
    std::string model;             // table key's MODEL; the type is shape_key(model, gpus, n)
    int gpus = 0;                  // total GPUs
    std::vector<int> node_counts;  // allowed node counts, in the order a blind scheduler tries
};

struct PlacementChoice {
    bool found = false;
    std::vector<int> nodes;  // ascending
    int type = PairTable::unknown;
    double ratio = 1.0;        // predicted throughput / isolated throughput on these nodes
    double shape_speed = 1.0;  // isolated throughput of this shape / the best shape's
    double others_loss = 0.0;  // GPU-weighted ratio the joined jobs lose
    double cost = 0.0;         // gpus * (1 - ratio * shape_speed) + others_loss
    int joined = 0;            // running multi-node jobs sharing a node with it
};

// The first-order cost of each node for a job type: the contention a job of that type would meet
// there (summed or max stretch, by the model's rule) and the GPU-weighted stretch it would cause
// the jobs there. Computed lazily per (type, node) and kept across the decisions of a round: a
// node is recomputed only when its job list changed (NetState::node_version), so a round of P
// pending jobs scans each node once per type, not once per job; a node whose list only gained a
// job (a plan's pick) has that job's cost added to what it kept. Bound to one state and model
// (rebind carries it to the next round's: slurmctld keeps one from round to round).
class NodeCosts {
public:
    struct Cost {
        double own = 0.0, caused = 0.0;
    };
    NodeCosts(const ContentionModel& model, const NetState& state) : model_(&model), state_(&state) {}
    // Unbound: rebind() before any other use.
    NodeCosts() : model_(nullptr), state_(nullptr) {}
    // Carry the cache to the next round: bind it to that round's model and state (rebuilt or
    // not). Node costs and joined jobs' loads are kept where they still hold: a node's version
    // names its jobs (NetState::node_version), so a node whose jobs did not change keeps its
    // costs. Everything is dropped when the table's content (`table_fingerprint`, e.g.
    // PairTable::stretch_fingerprint(), which learning changes), the rule, the floor, the node
    // count or the uplink capacity changed, or when more than `max_types` job types are kept
    // (bounded memory); the loads of jobs no longer running are dropped. Returns whether anything
    // was kept.
    bool rebind(const ContentionModel& model, const NetState& state, std::uint64_t table_fingerprint,
                std::size_t max_types = 64);
    // Buffers the placement functions reuse from one decision to the next (no allocation each).
    struct Scratch {
        std::vector<std::uint32_t> joined;
        std::vector<std::pair<double, int>> top;
        std::vector<int> shape_type, shape_nodes;  // a request's shapes (choose_placement)
        std::vector<double> shape_speed;
        std::vector<std::size_t> shape_order;
    };
    Scratch& scratch() { return scratch_; }
    // The table's type of a shape, remembered per model name (ShapeTypes; forgotten with the
    // costs when the table changes).
    int shape_type(const std::string& model, int gpus, int nodes) {
        return shape_types_.find(model_->table(), model, gpus, nodes);
    }
    // Rebinds in a row that kept the cache (diagnostics, tests).
    std::size_t kept_rebinds() const { return kept_; }
    // The slot of `type` (types are few: a table's keys and `unknown`).
    std::size_t slot(int type) {
        // types are the table's indexes and `unknown` (-1): one lookup
        const std::size_t i = static_cast<std::size_t>(type + 1);
        if (type >= -1 && i < slot_of_.size() && slot_of_[i] >= 0)
            return static_cast<std::size_t>(slot_of_[i]);
        return add_slot(type);
    }
    const Cost& at(std::size_t slot, int node) {
        PerType& t = types_[slot];
        const auto v = static_cast<std::size_t>(node);
        if (t.cell[v].seen == state_->node_version(node) + 1) return t.cell[v].cost;
        return compute(t, node);
    }
    // The n cheapest nodes by (first-order cost for a job of `gpus` GPUs of the slot's type on n
    // nodes, node index) among those with gpus / n GPUs free, ascending; fewer when fewer fit.
    void cheapest(std::size_t slot, int gpus, int n, const std::vector<int>& free_gpus,
                  std::vector<std::pair<double, int>>& out);
    // The types a plan will rank nodes for (plan_round names its requests'): a node not costed
    // yet for one of them is costed for all of them at once, in one pass over its job list (a
    // cold round costs most nodes for most of them). The same values. Replaces the last set.
    void cost_together(const std::vector<int>& types);
    // Within one plan (plan_round turns this on for its run, and off after), a list of free GPUs
    // changes only on nodes whose job list changes: a pick takes GPUs where it adds its job, and
    // undoing a plan gives them back where it removes it. So cheapest() keeps each (request, free
    // list)'s ranking, with the nodes below a bar, and re-ranks only the nodes the state's change
    // log names (NetState::changes_since) while the n cheapest are still below the bar; else it
    // scans every node. The same answers. On or off, kept rankings are forgotten.
    void reuse_rankings(bool on);
    // Tests: compare every re-ranked answer with a scan; mismatches() counts those that differ.
    void check_rankings(bool on) { check_ = on; }
    std::size_t mismatches() const { return mismatches_; }
    // cheapest() calls answered by re-ranking changed nodes / by scanning every node.
    std::size_t reranked() const { return reranked_; }
    std::size_t scanned() const { return scanned_; }
    // Marks where a candidate would go, `nodes` and the leaf uplinks they cross, for loss_of
    // (each joined job's links are then checked against the marks, no search per link).
    void mark(const std::vector<int>& nodes, const std::vector<int>& uplinks);
    // The GPU-weighted ratio running job `id` loses when a job of `type` joins the marked nodes:
    // ContentionModel's ratio before minus ratio_with_newcomer, from the job's per-link loads,
    // cached until one of its links changes. 0 when fewer than two nodes are marked.
    double loss_of(std::uint32_t id, int type);
    // `nodes` and the nodes of every running job on them, as a bitmap by node index (bit v % 64
    // of word v / 64), into `out`.
    void reach_of(const std::vector<int>& nodes, std::vector<std::uint64_t>& out) const;

private:
    struct JobLoads {
        std::uint64_t stamp = 0;
        double before = 1.0;
        // the job's nodes' then its uplinks' loads, without the job itself: in `small` for up
        // to 8 links (no allocation per job), else in `large`
        std::size_t links = 0;
        double small[8];
        std::vector<double> large;
        double* link() { return links <= 8 ? small : large.data(); }
    };
    // Node-based, not an IdMap: entries come one at a time (only the jobs a candidate joins) and
    // are large; one flat block of them for a thousand jobs (~120 KB), freed with a restart
    // round's cache, made the bench's restart rounds fault its pages in again every round.
    std::unordered_map<std::uint32_t, JobLoads> jobs_;
    std::uint64_t stamp_of(const NetState::Job& j) const;
    double load(int type, const std::vector<NetState::Entry>& on, std::uint32_t self) const;

    struct Cell {
        Cost cost;
        std::uint64_t seen = 0;  // node_version + 1 when computed; 0 = never
    };
    struct PerType {
        int type;
        std::vector<Cell> cell;  // by node
        // stretch(type, other) and stretch(other, type) by other + 1 (0: unknown), for every
        // type the table has: compute() reads one of each per entry, no branch on the types
        std::vector<double> own_by, caused_by;
        bool together = false;  // in together_
    };
    const Cost& compute(PerType& t, int node);
    // cost_together()'s slots; a node's entries' columns and GPUs while it is costed for them
    std::vector<std::size_t> together_;
    std::vector<std::size_t> column_;
    std::vector<double> gpus_;
    void compute_together(std::size_t node);
    template <class Join>
    void add_up(std::size_t node, std::uint64_t seen, Join join);
    std::size_t add_slot(int type);
    // The `keep` cheapest by (cost, index) into `top`, ascending (cheapest()'s scan).
    void scan(std::size_t slot, int gpus, int n, const std::vector<int>& free_gpus, std::size_t keep,
              std::vector<std::pair<double, int>>& top);
    // One node's first-order cost as scan() computes it (`free`: its free GPUs).
    double node_cost(std::size_t slot, int gpus, int n, std::size_t v, int free);
    // Ties (empty nodes) go to the fullest node that fits: keep large holes whole.
    static double tie_term(int free, int per) {
        return 1e-6 * static_cast<double>(free - per) / (1.0 + static_cast<double>(per));
    }
    // A kept ranking: `below` holds every node whose (cost, index) is less than `bar`, ascending,
    // as of the state's change log position `seq`, for a free list of `nodes` entries.
    struct Ranked {
        std::vector<std::pair<double, int>> below;
        std::pair<double, int> bar;
        std::uint64_t seq = 0;
        std::size_t nodes = 0;
        bool valid = false;
    };
    using Key = std::tuple<std::size_t, int, int, const int*>;  // slot, GPUs, nodes, free list
    std::map<Key, Ranked> ranked_;
    std::vector<int> changed_;
    bool reuse_ = false, check_ = false;
    std::size_t reranked_ = 0, scanned_ = 0, mismatches_ = 0;
    const ContentionModel* model_;
    const NetState* state_;
    struct Bound {
        std::uint64_t fingerprint;
        Rule rule;
        double floor;
        std::size_t nodes;
        double uplink_capacity;
    };
    std::optional<Bound> bound_;  // set by rebind: what the kept values hold for
    // mark(): a node or uplink is marked when its entry equals mark_ (bumped per mark, so
    // nothing is cleared between candidates)
    std::vector<std::uint32_t> node_mark_, uplink_mark_;
    std::uint32_t mark_ = 0;
    std::size_t marked_nodes_ = 0;
    std::size_t kept_ = 0;
    Scratch scratch_;
    ShapeTypes shape_types_;
    std::vector<PerType> types_;
    std::vector<int> slot_of_;  // by type + 1: its slot, -1 = none yet
};

// Contention-aware choice. `costs` (optional, bound to the same model and state) carries node
// costs from one decision to the next within a round.
PlacementChoice choose_placement(const ContentionModel& model, const NetState& state,
                                 const std::vector<int>& free_gpus, const PlacementRequest& request,
                                 NodeCosts* costs = nullptr);
// The blind baseline (DeepShare's LAS/SRTF placement): the first node count in the request's
// order that fits, on the lowest-numbered nodes with room; scored with the model for reporting
// (`costs`, optional, as for choose_placement).
PlacementChoice first_fit_placement(const ContentionModel& model, const NetState& state,
                                    const std::vector<int>& free_gpus, const PlacementRequest& request,
                                    NodeCosts* costs = nullptr);

// "placement: nodes n3,n4, predicted 0.97 of isolated" (names from `node_names`, indexed).
std::string placement_reason(const PlacementChoice& choice, const std::vector<std::string_view>& node_names);

}  // namespace explsched::net
