// What a GPU kernel asks of the device: SMs, memory bandwidth and time. The kernel scheduler
// (explsched-kerneld) and the contention simulator reason in these units, so the model lives in
// the core. Profiles come from two places: imported offline profiles (Nsight Compute output in
// the Orion format, see orion_profile.hpp) and durations learned online from completed launches.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace explsched {

// Whether a kernel is limited by arithmetic or by DRAM bandwidth (Orion's "Profile" column).
enum class KernelClass : std::uint8_t { unknown = 0, compute = 1, memory = 2 };

const char* to_string(KernelClass cls);

// A kernel's demand when it runs alone on the device.
struct KernelDemand {
    double sms = 0.0;               // SMs its resident blocks occupy, at most the device's count
    double bw = 0.0;                // fraction of the device's DRAM bandwidth drawn at full speed
    std::uint64_t duration_ns = 0;  // exclusive run time
    KernelClass cls = KernelClass::unknown;
};

// Bandwidth a kernel draws, as a fraction of the device's, from its class and SM count. Nsight's
// Orion export carries no bandwidth figure, so this is a model: a memory-bound kernel saturates
// DRAM with about half the SMs (STREAM-like kernels on V100/A100/H100 do), a compute-bound one
// draws a fifth of the bandwidth per SM, an unknown one sits in between. The constants are the
// model's assumptions and are named here so the simulator can print them.
inline constexpr double kMemoryBoundBwPerSmShare = 2.0;
inline constexpr double kUnknownBwPerSmShare = 0.8;
inline constexpr double kComputeBoundBwPerSmShare = 0.2;
double bandwidth_demand(KernelClass cls, double sms, std::uint32_t sm_count);

// Class from the kernel's name when no profile knows it: GEMM/convolution kernels are compute
// bound, elementwise/normalisation/reduction/copy kernels memory bound (the split Orion's V100
// profiles show for PyTorch, cuDNN and cuBLAS kernels).
KernelClass classify_kernel_name(std::string_view name);

// 64-bit FNV-1a: stable across processes and runs, so the daemon and tools agree on keys.
std::uint64_t fnv1a64(std::string_view text, std::uint64_t seed = 0xcbf29ce484222325ULL);

// One kernel profile from an offline profiler.
struct KernelProfile {
    std::string name;
    KernelClass cls = KernelClass::unknown;
    std::uint64_t sm_usage = 0;  // as profiled; may exceed the SM count (more blocks than SMs)
    KernelDemand demand;         // sms capped at the device's count, bw from bandwidth_demand()
};

// Profiles keyed by a kernel key (name and launch shape). Durations are learned with an
// exponentially weighted mean of observed run times; imported offline profiles give the class
// and a duration prior by kernel name.
class KernelProfileStore {
public:
    struct Learned {
        double duration_ns = 0.0;
        std::uint64_t samples = 0;
    };

    // `weight` is the EWMA weight of a new sample; `default_duration_ns` is used for kernels
    // nobody has seen or profiled.
    explicit KernelProfileStore(double weight = 0.25, std::uint64_t default_duration_ns = 20000);

    // Imports offline profiles: per name, the majority class and the median duration.
    void import(const std::vector<KernelProfile>& profiles);
    std::size_t imported_names() const { return by_name_.size(); }

    void observe_duration(std::uint64_t key, std::uint64_t duration_ns);
    // Learned duration of `key`, else the imported median for `name`, else the default.
    std::uint64_t expected_duration_ns(std::uint64_t key, std::string_view name) const;
    // Learned duration of `key`, else `fallback_ns` (the caller's cached imported_duration_ns).
    std::uint64_t expected_duration_ns(std::uint64_t key, std::uint64_t fallback_ns) const;
    // Imported median duration for `name`, else the default.
    std::uint64_t imported_duration_ns(std::string_view name) const;
    // Imported majority class for `name`, else the name heuristic.
    KernelClass kernel_class(std::string_view name) const;
    const Learned* learned(std::uint64_t key) const;
    std::size_t learned_keys() const { return learned_.size(); }

private:
    struct ByName {
        KernelClass cls = KernelClass::unknown;
        std::uint64_t median_ns = 0;
    };
    double weight_;
    std::uint64_t default_duration_ns_;
    std::unordered_map<std::uint64_t, Learned> learned_;
    std::unordered_map<std::string, ByName> by_name_;
};

}  // namespace explsched
