// A kernel's identity for learned durations and sequence prediction: the hash of its name
// combined with the hash of its shape, so that one kernel launched with another geometry is
// learned apart. The kernel scheduler (explsched-kerneld) and the contention simulator both key
// kernels with these functions; neither key ever leaves the process that made it.
#pragma once

#include <cstdint>

#include "core/base/hash.hpp"
#include "core/device/kernel_profile.hpp"

namespace explsched {

// What the kernel scheduler sees of a launch besides the function.
struct LaunchShape {
    std::uint32_t grid_x = 1, grid_y = 1, grid_z = 1;
    std::uint32_t block_x = 1, block_y = 1, block_z = 1;
    std::uint32_t smem_dynamic = 0;
};

inline std::uint64_t kernel_key(std::uint64_t name_hash, std::uint64_t shape_hash) {
    return name_hash ^ shape_hash;
}

inline std::uint64_t shape_hash(const LaunchShape& s) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (std::uint64_t v : {s.grid_x, s.grid_y, s.grid_z, s.block_x, s.block_y, s.block_z, s.smem_dynamic})
        h = hash_combine(h, v);
    return h;
}

// A launch of the function named by `name_hash`.
inline std::uint64_t kernel_key(std::uint64_t name_hash, const LaunchShape& shape) {
    return kernel_key(name_hash, shape_hash(shape));
}

// A profiled kernel: offline profiles record no launch geometry, so the SM demand (whole SMs)
// stands for the shape.
inline std::uint64_t kernel_key(const KernelProfile& k) {
    return kernel_key(fnv1a64(k.name), static_cast<std::uint64_t>(k.demand.sms) * 0x9E3779B97F4A7C15ULL);
}

}  // namespace explsched
