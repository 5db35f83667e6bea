// GPU types for the engine: which type a job is valued on and which its speed was measured on,
// from what a host knows of it (the type its request names, the type of the GPUs it holds, the
// types its partition's nodes carry, the type of its run before a requeue), and how the throughput
// table then scales its speed.
//
// The rule (README "GPU types"; the engine scales a trial's measured speed by the table's ratio
// valued-on / measured-on for its --explore-model row):
//   running:  valued on the type of the GPUs it holds (else the type it requested); measured on
//             the type of its previous run while its curve has no point from this run yet, else
//             on the type it holds (no scaling).
//   pending:  valued on the type it requested; else, when every GPU node of its partition has the
//             same type, that type; else the fastest type of its partition for its model per the
//             table (the type it would prefer; Slurm may start it on a slower one, and it is then
//             valued on that one); else unknown. Measured on the type of its previous run (none:
//             not scaled).
// Type names are lower-cased ("V100" and "v100" are one type). Hosts keep a small id per name
// (GpuTypeNames) so that what they copy per job under slurmctld's locks is a few bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/sched/throughput_table.hpp"

namespace explsched {

using GpuTypeId = std::uint8_t;  // 0: unknown / none
inline constexpr GpuTypeId kNoGpuType = 0;
using GpuTypeMask = std::uint64_t;  // bit i: type id i

inline GpuTypeMask gpu_type_bit(GpuTypeId id) { return id == kNoGpuType ? 0 : GpuTypeMask{1} << id; }

// Interned type names. Grows only; at most kMaxTypes names (more is not a real cluster: a name
// past it is unknown, id 0).
class GpuTypeNames {
public:
    static constexpr std::size_t kMaxTypes = 63;

    // The id of `name` (lower-cased), added if new; 0 for an empty or invalid name (a GRES type
    // name: 1-32 characters of A-Z a-z 0-9 _ - .) or when the table is full.
    GpuTypeId intern(std::string_view name);
    // The id of `name` if known, else 0 (adds nothing).
    GpuTypeId find(std::string_view name) const;
    // "" for 0 or an unknown id.
    const std::string& name(GpuTypeId id) const;
    // Ids in use are 1..count().
    std::size_t count() const { return names_.size() - 1; }
    // Appends the names `other` has and this copy lacks (both grew from the same start): a reader
    // keeps its own copy in step with a writer's without copying every name every round.
    void catch_up(const GpuTypeNames& other);

private:
    std::vector<std::string> names_{std::string()};
};

// The types a node's configured GRES carries ("gpu:v100:2,gpu:k80:2" -> v100|k80); 0 for
// untyped GPUs or none.
GpuTypeMask node_gpu_types(std::string_view gres, GpuTypeNames& names);
// The GPU type a TRES request or allocation names ("gres:gpu:v100:1", "gres/gpu:v100=1"; the
// first typed GPU item); 0 when untyped or none.
GpuTypeId tres_gpu_type(std::string_view tres, GpuTypeNames& names);

// What a host knows of a job's GPU types.
struct JobGpuFacts {
    bool running = false;
    GpuTypeId requested = kNoGpuType;  // named in its request
    GpuTypeId allocated = kNoGpuType;  // running: the type of the GPUs it holds
    GpuTypeId previous = kNoGpuType;   // the type of its run before its last requeue
    GpuTypeMask offered = 0;           // the types on its partition's GPU nodes
    double start_time = 0.0;           // running: when this run started
    double last_point_time = -1.0;     // its newest reported point's time (< 0: none)
};

struct GpuTypeChoice {
    GpuTypeId valued_on = kNoGpuType;
    GpuTypeId measured_on = kNoGpuType;  // 0: the same as valued_on (not scaled)
};

// The rule above. `model` and `gpus` pick the table row that ranks a partition's types.
GpuTypeChoice choose_gpu_types(const JobGpuFacts& facts, const std::string& model, std::uint32_t gpus,
                               const ThroughputTable& table, const GpuTypeNames& names);

// How the engine scaled a trial's speed by GPU type, and why (not).
enum class GpuValuation {
    no_model,            // no --explore-model: not scaled
    no_table,            // the site configured no throughput_table
    model_not_in_table,  // --explore-model names no row of the table: not scaled
    type_unknown,        // the type it runs or would run on is unknown: not scaled
    same_type,           // measured on the type it is valued on (or where unknown): not scaled
    no_row,              // the table lacks the model on one of the two types (at its GPU count)
    scaled,              // speed x ratio
};
const char* to_string(GpuValuation valuation);
bool gpu_valuation_from(std::string_view text, GpuValuation& out);

struct GpuValue {
    GpuValuation how = GpuValuation::no_model;
    double ratio = 1.0;  // table throughput on gpu_type / on measured_gpu_type (1 unless scaled)
};
// For a job of type `job_type` (its model) on `gpus` GPUs, valued on `gpu_type`, its speed
// measured on `measured_on` (empty: the same).
GpuValue gpu_valuation(const std::string& job_type, const std::string& gpu_type,
                       const std::string& measured_on, std::uint32_t gpus, const ThroughputTable& table);

// One sentence for people ("valued on k80: speed measured on v100 x 0.141 (throughput table:
// 'ResNet-50 (batch size 64)' on k80 = 0.141x v100)").
std::string describe_gpu_value(std::string_view gpu_type, GpuValuation how, double ratio,
                               std::string_view measured_on, std::string_view model);

}  // namespace explsched
