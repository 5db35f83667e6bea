// A job's expected throughput, as a fraction of its isolated throughput, given the other
// multi-node jobs that share its nodes' network links (and its leaf switches' uplinks when a
// topology is known). Single-node jobs use no network and neither suffer nor cause contention.
//
// Two rules (doc/placement.md has the reasoning and the fit on DeepShare's table):
//  - min_pairwise (DeepShare's simulator): ratio = max(floor, min over sharers of the pair ratio);
//  - link_additive (default): each link a job crosses stretches its step by the sum of the
//    stretches (1/ratio - 1) the jobs sharing that link cause it; the job runs at the pace of its
//    most stretched link: ratio = max(floor, 1 / (1 + max over links of the sum)). One sharer gives
//    exactly the measured pair; two sharers on one link hurt more than one (min says they do not).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "core/base/id_map.hpp"
#include "core/base/result.hpp"
#include "core/sched/net_table.hpp"

namespace explsched::net {

enum class Rule { link_additive, min_pairwise };
Result<Rule> parse_rule(std::string_view text);
const char* rule_name(Rule r);

// Leaf switches from a topology.conf-style text: lines `SwitchName=s1 Nodes=n[1-4],m7`; lines
// with Switches= (upper levels) are accepted and ignored. A job whose nodes span more than one
// leaf switch crosses each of those switches' uplinks; an uplink carries `uplink_capacity` node
// links' worth (1 = as thin as one node's link).
struct Topology {
    std::unordered_map<std::string, int> switch_of;  // node name -> leaf switch index
    std::vector<std::string> switches;
    double uplink_capacity = 4.0;

    static Result<Topology> parse(std::string_view text);
    bool empty() const { return switches.empty(); }
};
// "n[1-3,7],m5" -> n1,n2,n3,n7,m5 (one bracket group per name; Slurm's usual spelling).
Result<std::vector<std::string>> expand_hostlist(std::string_view list);

struct ModelSettings {
    Rule rule = Rule::link_additive;
    double floor = 0.35;  // DeepShare's safety floor: no job is predicted below this
};

// The running multi-node jobs and where they are. Nodes are small integers (the host's index);
// `switch_of_node` (optional, same indexing) names each node's leaf switch, -1 = none known.
class NetState {
public:
    // A job's nodes and uplinks are held inline up to a few (no allocation per job: a cold
    // placement round adds a thousand of them).
    using Nodes = boost::container::small_vector<int, 8>;
    using Uplinks = boost::container::small_vector<int, 4>;
    struct Job {
        int type = PairTable::unknown;
        int gpus = 0;
        Nodes nodes;
        Uplinks uplinks;  // leaf switches whose uplink it crosses
    };

    // What a link's list holds of each job on it (no lookup by id in the inner loops).
    struct Entry {
        std::uint32_t id;
        int type;
        int gpus;
    };

    explicit NetState(std::size_t node_count = 0, std::vector<int> switch_of_node = {});

    // Replaces job `id`; a job on fewer than two nodes, or on a node index the state does not
    // have, is not added (the caller's nodes are checked: nothing is written out of bounds).
    void add(std::uint32_t id, int type, int gpus, const std::vector<int>& nodes);
    // Room for `jobs` jobs and, per node, `entries[v]` of them (a state built in one go: no
    // reallocation while adding).
    void reserve(std::size_t jobs, const std::vector<std::uint32_t>& entries);
    void remove(std::uint32_t id);
    void clear();
    // The job's record; it holds until the next add or remove.
    const Job* job(std::uint32_t id) const { return jobs_.find(id); }
    const std::vector<Entry>& on_node(int node) const { return node_jobs_[static_cast<std::size_t>(node)]; }
    const std::vector<Entry>& on_uplink(int sw) const { return uplink_jobs_[static_cast<std::size_t>(sw)]; }
    std::size_t node_count() const { return node_jobs_.size(); }
    std::size_t size() const { return jobs_.size(); }
    const IdMap<Job>& jobs() const { return jobs_; }
    std::vector<int> uplinks_of(const std::vector<int>& nodes) const;
    // The leaf switches whose uplinks `count` nodes from `nodes` cross (none under one switch).
    void uplinks_of(const int* nodes, std::size_t count, Uplinks& out) const;
    // A hash of the node's job list as a set (XOR of its entries' hashes, 0 = empty): it changes
    // whenever the list does, and comes back when the same jobs are there again (a plan that adds
    // jobs and takes them away leaves the caches of per-node costs, which compare it, valid).
    std::uint64_t node_version(int node) const { return node_version_[static_cast<std::size_t>(node)]; }
    const std::vector<std::uint64_t>& node_versions() const { return node_version_; }
    // The node's version before its last job was appended (its list's back()) plus 1, while the
    // list has changed no other way since; 0 otherwise. A cache of a per-node sum can extend
    // the sum it holds for that version by the one job (NodeCosts), in the list's order.
    std::uint64_t appended_over(int node) const { return appended_over_[static_cast<std::size_t>(node)]; }
    // Likewise for every uplink's job list together.
    std::uint64_t uplink_version() const { return uplink_version_; }
    // A log of the nodes whose job list changed (each add and remove appends its nodes), for
    // caches that re-rank only what changed: change_seq() is its position now; changes_since(seq)
    // gives the nodes logged after `seq`, or false when the log no longer reaches back that far
    // (it is bounded: emptied past a few times the node count).
    std::uint64_t change_seq() const { return change_base_ + changes_.size(); }
    bool changes_since(std::uint64_t seq, const int*& begin, const int*& end) const;
    double uplink_capacity = 4.0;

private:
    std::vector<std::vector<Entry>> node_jobs_;
    std::vector<std::uint64_t> node_version_;
    std::vector<std::uint64_t> appended_over_;
    std::uint64_t uplink_version_ = 0;
    std::vector<int> changes_;       // nodes changed, in order
    std::uint64_t change_base_ = 0;  // the position of changes_[0]
    void log_change(const int* nodes, std::size_t count);
    std::vector<std::vector<Entry>> uplink_jobs_;
    std::vector<int> switch_of_node_;
    IdMap<Job> jobs_;
};

class ContentionModel {
public:
    ContentionModel(const PairTable& table, ModelSettings settings) : table_(table), settings_(settings) {}

    // Predicted ratio of running job `id` as placed now.
    double ratio(const NetState& state, std::uint32_t id) const;
    // Predicted ratio of a job of `type` on `nodes`, sharing with the jobs there now.
    double ratio_if_placed(const NetState& state, int type, const std::vector<int>& nodes) const;
    // Predicted ratio of running job `id` once a job of `type` joins `nodes`.
    double ratio_with_newcomer(const NetState& state, std::uint32_t id, int type,
                               const std::vector<int>& nodes) const;

    const ModelSettings& settings() const { return settings_; }
    const PairTable& table() const { return table_; }

private:
    const PairTable& table_;
    ModelSettings settings_;

    // Per-link contention of `type` from the jobs listed (skipping `self`), plus `extra_type` when
    // >= -1 and `extra` is set: summed stretch (additive) or max pair stretch (min rule).
    double link_load(int type, const std::vector<NetState::Entry>& jobs, std::uint32_t self, bool extra,
                     int extra_type) const;
    double to_ratio(double worst) const;
};

}  // namespace explsched::net
