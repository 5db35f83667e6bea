// Learning the pair table online in slurmctld (placement_learn=yes): from the throughput the
// running multi-node trials already report (steps/s), a job's speed while other multi-node jobs
// share its nodes, against its own speed while it had its nodes alone.
//
// Per round, for each running multi-node job with a curve: the set of jobs sharing a node with it
// (its "company"). When the company changes, the points reported so far are set aside (the
// change settles); later points (by step, which only grows) are averaged into one observation
// per round. Alone: the job's own alone speed (and its type's) is a running mean. With company:
// ratio = speed / alone speed (the job's own, else its type's), bounded below by the model's
// floor and ignored above `max_ratio`, goes to NetPairEstimator::observe_ratio for the pairs
// (job type, each sharer's type).
//
// Trust: the speed is what the user's process reports. A user can make their own jobs look
// sensitive (others are then placed away from their nodes when another feasible set exists) but
// not below the floor (0.35, DeepShare's): the same harm a real bad pair does, and placement
// never delays a job's start. The table grows by at most EstimatorSettings::max_types types.
//
// Persistence: to_json() / restore() write and read what was learned on top of the prior (the
// types added, the pairs and isolated speeds moved with their observation counts, the per-type
// alone means), with the prior's fingerprint: slurmctld keeps it in
// <StateSaveLocation>/explsched_net_learned.json across restarts (save_state / load_state).
// Per-job tracking (company, points used) is not kept: after a restart every job settles again.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/base/curve_point.hpp"
#include "core/base/result.hpp"
#include "core/sched/net_round.hpp"
#include "core/sched/net_table.hpp"

namespace explsched::net {

struct LearnSettings {
    double floor = 0.35;  // a ratio below this is taken as this
    EstimatorSettings estimator;
};

class NetLearner {
public:
    NetLearner(PairTable prior, LearnSettings settings = {});

    // One round. `running`: the running multi-node jobs (RoundRunning: model, GPUs, nodes);
    // `curve(id)`: the job's reported points (empty for jobs that report nothing). Returns one
    // line per observation used ("JobId=7 Victim,4,2 beside Bully,4,2: 0.33 of alone"), for
    // the log. Jobs no longer running are forgotten.
    std::vector<std::string> round(const std::vector<RoundRunning>& running,
                                   const std::function<PointSpan(std::uint32_t)>& curve);

    const PairTable& table() const { return estimator_.table(); }
    std::size_t observations() const { return observations_; }

    // The learned state as JSON text (at most max_state_bytes for any table within max_types).
    std::string to_json() const;
    struct Restored {
        bool other_prior = false;  // saved against another prior: nothing was read, nothing changed
        std::size_t types = 0;     // types added beyond the prior
        std::size_t pairs = 0;     // pairs learned
        std::size_t observations = 0;
    };
    // Reads what to_json() wrote into a learner that has learned nothing yet. Everything is
    // checked before anything changes (size, nesting, format and version, at most max_types
    // types, key lengths, finite positive speeds, ratios in (0, 1], counts in [1, 2^40], no
    // duplicates); an error names the first problem and leaves the learner as it was. Never
    // throws.
    Result<Restored> restore(std::string_view json);
    static constexpr std::size_t max_state_bytes = std::size_t{4} << 20;

private:
    struct Tracked {
        std::vector<std::uint32_t> company;  // sorted ids
        double settled_after = -1.0;         // points at steps <= this are before the change
        double used_through = -1.0;          // points at steps <= this were used
        double alone = 0.0;                  // its own speed alone (running mean), 0 = unknown
        std::size_t alone_n = 0;
    };
    LearnSettings settings_;
    NetPairEstimator estimator_;
    std::unordered_map<std::uint32_t, Tracked> jobs_;
    std::unordered_map<std::string, std::pair<double, std::size_t>> type_alone_;  // key -> mean, n
    std::size_t observations_ = 0;
};

// The learner's state file: read (at most NetLearner::max_state_bytes, a regular file, not
// followed through a symlink) and restored into `learner`; nullopt when there is no file. An
// error means the file is unusable (the caller sets it aside); `learner` is then unchanged.
Result<std::optional<NetLearner::Restored>> load_state(NetLearner& learner, const std::string& path);
// Written atomically: `path`.tmp in the same directory (mode 0600), fsync, rename over `path`,
// fsync of the directory. A crash leaves the old file or the new one.
Status save_state(const NetLearner& learner, const std::string& path);

}  // namespace explsched::net
