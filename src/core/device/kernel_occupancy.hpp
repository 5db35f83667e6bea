// Occupancy: how many blocks of a kernel one SM holds, and so how many SMs a launch occupies.
// This is the CUDA occupancy calculator's arithmetic (threads, registers, shared memory and the
// block limit per SM), header-only because the LD_PRELOAD intercept evaluates it without linking
// the core library. Limits come from cuDeviceGetAttribute where a driver is present.
#pragma once

#include <algorithm>
#include <cstdint>

namespace explsched {

struct GpuLimits {
    std::uint32_t sm_count = 132;  // H100 SXM
    std::uint32_t max_threads_per_sm = 2048;
    std::uint32_t max_regs_per_sm = 65536;
    std::uint32_t max_smem_per_sm = 233472;  // 228 KiB
    std::uint32_t max_blocks_per_sm = 32;
    // Registers are allocated per warp in units of 256; the driver reserves 1 KiB of shared
    // memory per block on sm_80 and later.
    std::uint32_t reg_alloc_unit = 256;
    std::uint32_t smem_reserved_per_block = 1024;
};

// Resident blocks per SM; 0 when one block does not fit (the launch would fail). Every input
// may come from a hostile client: the arithmetic is 64-bit, every divisor is checked, and any
// value (zero, 0xFFFFFFFF) gives an answer in [0, max_blocks_per_sm].
constexpr std::uint32_t blocks_per_sm(const GpuLimits& g, std::uint32_t threads_per_block,
                                      std::uint32_t regs_per_thread, std::uint64_t smem_per_block) {
    if (threads_per_block == 0) return 0;
    const std::uint64_t warps = (std::uint64_t{threads_per_block} + 31) / 32;
    std::uint64_t limit = g.max_blocks_per_sm;
    limit = std::min<std::uint64_t>(limit, g.max_threads_per_sm / (warps * 32));
    if (regs_per_thread > 0 && g.reg_alloc_unit > 0) {
        const std::uint64_t unit = g.reg_alloc_unit;
        const std::uint64_t per_warp = (std::uint64_t{regs_per_thread} * 32 + unit - 1) / unit * unit;
        const std::uint64_t warps_by_regs = g.max_regs_per_sm / per_warp;
        limit = std::min(limit, warps_by_regs / warps);
    }
    if (smem_per_block > 0) {
        // Saturating: smem_per_block near 2^64 must not wrap to a small value.
        const std::uint64_t reserved = g.smem_reserved_per_block;
        const std::uint64_t per_block =
            smem_per_block > UINT64_MAX - reserved ? UINT64_MAX : smem_per_block + reserved;
        limit = std::min<std::uint64_t>(limit, g.max_smem_per_sm / per_block);
    }
    return static_cast<std::uint32_t>(limit);
}

// SMs a grid of `blocks` occupies in its first wave: all of them once it has a full wave.
constexpr std::uint32_t sms_needed(const GpuLimits& g, std::uint64_t blocks, std::uint32_t per_sm) {
    if (blocks == 0) return 0;
    if (per_sm == 0) return g.sm_count;
    const std::uint64_t sms = blocks / per_sm + (blocks % per_sm != 0 ? 1 : 0);
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(sms, g.sm_count));
}

}  // namespace explsched
