// Network contention between distributed jobs (DeepShare, ICPADS'23): a table of job types, each
// "MODEL,GPUS,NODES", with its isolated throughput and, per pair, the row job's throughput while
// the column job shares nodes with it, as a fraction of isolated. Loaded from DeepShare's
// isolated_thp.csv / shared_thp_ratio.csv (../shared/data/network/), extended online by
// NetPairEstimator, and summarised by a rank-1 fit of the stretch 1/ratio - 1 =
// sensitivity(row) * pressure(column), the fallback for pairs never measured.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/base/result.hpp"

namespace explsched::net {

// "MODEL,GPUS,NODES", DeepShare's key.
std::string shape_key(std::string_view model, int gpus, int nodes);

class PairTable {
public:
    static constexpr int unknown = -1;
    static constexpr std::size_t max_key_bytes = 1024;  // a saved key longer than this is refused

    // isolated_csv: header then `"KEY",samples_per_s`; ratio_csv: header `,"K1","K2",...` then one
    // row per key `"KEY",r1,r2,...` (an empty cell is an unmeasured pair).
    static Result<PairTable> from_csv(std::string_view isolated_csv, std::string_view ratio_csv);
    static Result<PairTable> load_files(const std::string& isolated_path, const std::string& ratio_path);

    // The type's index, adding it when new (the online estimator meets types the table lacks).
    int intern(const std::string& key);
    // The type's index or `unknown`.
    int find(const std::string& key) const;
    const std::string& key(int type) const { return keys_[static_cast<std::size_t>(type)]; }
    std::size_t size() const { return keys_.size(); }

    void set_isolated(int type, double samples_per_s);
    std::optional<double> isolated(int type) const;
    // Measured ratio (row's throughput while sharing with col / isolated), clamped to (0, 1].
    void set_ratio(int row, int col, double ratio);
    std::optional<double> measured_ratio(int row, int col) const;
    std::size_t measured_pairs() const { return measured_; }

    // Stretch x = 1/ratio - 1 of `row` by `col`: the measured pair when there is one, else the
    // rank-1 fit sensitivity(row) * pressure(col); a type the table lacks takes the median
    // sensitivity / pressure of the fitted types; an empty table gives `default_stretch`.
    // One load for two known types (the placement's inner loop).
    double stretch(int row, int col) const {
        if (row >= 0 && col >= 0)
            return dense_[static_cast<std::size_t>(row) * keys_.size() + static_cast<std::size_t>(col)];
        return sensitivity(row) * pressure(col);
    }
    double sensitivity(int type) const;
    double pressure(int type) const;
    // Refit the rank-1 factors from the measured pairs (alternating least squares, a few dozen
    // passes over the table; called after loading and by the estimator after each update).
    void fit_factors();
    // Root-mean-square error of the fit over measured pairs, in ratio units (for tests, the doc).
    double fit_rms_error() const;

    static constexpr double default_stretch = 0.25;  // ratio 0.8 per sharer when nothing is known

    // A hash of the content (keys in order, isolated speeds, measured ratios): what a saved
    // learned state was learned on top of (NetLearner's state file), equal for equal tables.
    // Kept from the last refit (rebuild_dense), computed again while a change since is unfitted.
    std::uint64_t fingerprint() const { return fingerprint_fresh_ ? fingerprint_ : compute_fingerprint(); }
    // A hash of all stretch() answers from: the content and the content the rank-1 fit was last
    // made on (a ratio set after a fit changes its pair, not the fitted ones, until fit_factors()).
    // What caches of stretches compare (NodeCosts).
    std::uint64_t stretch_fingerprint() const;
    // A hash of the keys in order alone: what a type (a key's index) means. Equal while learning
    // changes only speeds and ratios; a new key changes it (a job of an unknown shape then has a type).
    std::uint64_t keys_fingerprint() const { return keys_fingerprint_; }

private:
    std::vector<std::string> keys_;
    std::unordered_map<std::string, int> index_;
    std::vector<double> isolated_;  // NaN = unknown
    std::vector<double> stretch_;   // size()^2, row-major, NaN = unmeasured
    std::vector<double> sens_, press_;
    std::vector<double> dense_;  // size()^2: stretch() of every known pair, measured or fitted
    double median_sens_ = 0.0, median_press_ = 0.0;
    bool fitted_ = false;
    std::size_t measured_ = 0;
    std::uint64_t fingerprint_ = 0;
    std::uint64_t keys_fingerprint_ = 0x6b657973ULL;  // extended by intern()
    std::uint64_t fitted_on_ = 0;                     // fingerprint() when fit_factors() last ran
    bool fingerprint_fresh_ = false;                  // set by rebuild_dense, cleared by every change

    std::uint64_t compute_fingerprint() const;

    void grow(std::size_t n);
    void rebuild_dense();
    double& cell(int row, int col) {
        return stretch_[static_cast<std::size_t>(row) * keys_.size() + static_cast<std::size_t>(col)];
    }
    double cell(int row, int col) const {
        return stretch_[static_cast<std::size_t>(row) * keys_.size() + static_cast<std::size_t>(col)];
    }
};

// Learns the table online from the throughput jobs report: their speed alone (isolated) and while
// sharing nodes with others. One sharer: the pair's stretch moves toward the observation by a
// running mean (weight 1/n, never below `min_weight`, so it keeps tracking). Several sharers: the
// observed total stretch is split over the pairs in proportion to their current estimates.
struct EstimatorSettings {
    double min_weight = 0.1;
    // Observations with a ratio outside (0, max_ratio] are noise (a job faster shared than alone
    // by more than this is measuring something else) and ignored.
    double max_ratio = 1.2;
    // Types the estimator adds at most (a key is a job's model name, which users choose):
    // observations naming a type beyond this are ignored.
    std::size_t max_types = 512;
};

class NetPairEstimator {
public:
    explicit NetPairEstimator(PairTable prior, EstimatorSettings settings = {});

    void observe_alone(const std::string& key, double samples_per_s);
    // false when the job's isolated speed is still unknown (nothing to compare with) or the
    // observation is out of range.
    bool observe_shared(const std::string& key, const std::vector<std::string>& sharer_keys,
                        double samples_per_s);
    // The same with the ratio measured by the caller (speed shared / the job's own speed alone,
    // e.g. in steps/s from its reports, which the table's isolated samples/s cannot be compared
    // with). false when out of range or a type would exceed max_types.
    bool observe_ratio(const std::string& key, const std::vector<std::string>& sharer_keys, double ratio);

    const PairTable& table() const { return table_; }
    const EstimatorSettings& settings() const { return settings_; }
    std::size_t observations(const std::string& row, const std::string& col) const;

    // What was learned on top of the prior, in plain values (NetLearner's state file).
    struct State {
        struct Isolated {
            std::string key;
            double samples_per_s = 0.0;
            std::size_t observations = 0;
        };
        struct Pair {
            std::string row, col;
            double ratio = 1.0;  // the table's measured ratio now
            std::size_t observations = 0;
        };
        std::vector<std::string> new_types;  // beyond the prior, in the order they were added
        std::vector<Isolated> isolated;      // types observe_alone() moved
        std::vector<Pair> pairs;             // pairs observe_ratio() moved
    };
    State state() const;
    // The prior's size and fingerprint (at construction).
    std::size_t prior_types() const { return prior_types_; }
    std::uint64_t prior_fingerprint() const { return prior_fingerprint_; }
    // Applies `state` to an estimator that has learned nothing yet (else an error), after
    // checking all of it: known or new keys only, no duplicates, at most max_types types, finite
    // positive speeds, ratios in (0, 1], counts in [1, max_count]. On error nothing changed.
    Status restore(const State& state);
    static constexpr std::size_t max_count = std::size_t{1} << 40;

private:
    PairTable table_;
    EstimatorSettings settings_;
    std::size_t prior_types_ = 0;
    std::uint64_t prior_fingerprint_ = 0;
    // by (row, col) type index: row << 32 | col (keys are users' model names: no separator is safe)
    std::unordered_map<std::uint64_t, std::size_t> pair_count_;
    std::unordered_map<int, std::size_t> alone_count_;
};

// A table's types by (model, GPUs, nodes), remembered per model name so that a decision does not
// build and hash a key string. Bounded: model names are users' words, so a flood of new ones
// empties it instead of growing it, and so does a model's flood of shapes. clear() when the
// table's keys change.
class ShapeTypes {
public:
    static constexpr std::size_t kMaxModels = 4096, kMaxShapes = 64;
    int find(const PairTable& table, const std::string& model, int gpus, int nodes);
    std::size_t models() const { return by_model_.size(); }
    void clear() { by_model_.clear(); }

private:
    struct Shape {
        int gpus, nodes, type;
    };
    std::unordered_map<std::string, std::vector<Shape>> by_model_;
};

}  // namespace explsched::net
