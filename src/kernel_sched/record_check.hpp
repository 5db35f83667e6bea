// The daemon's validator for what a client wrote into its channel. Everything in a channel is
// hostile input: the daemon copies a record (or a function-table entry) out of shared memory once
// and hands the copy to these pure functions, which refuse what no real launch can carry and
// clamp the rest to what a GPU can run. No arithmetic on a client's value happens before this.
#pragma once

#include <cstdint>
#include <string>

#include "core/device/kernel_occupancy.hpp"
#include "kernel_sched/ksched_shm.hpp"

namespace explsched::ksched {

// CUDA's own limits: a launch beyond them fails in the driver, so the daemon refuses it.
inline constexpr std::uint32_t kMaxThreadsPerBlock = 1024;
inline constexpr std::uint32_t kMaxGridX = 0x7FFFFFFFu;
inline constexpr std::uint32_t kMaxGridYZ = 65535;
inline constexpr std::uint32_t kMaxBlockZ = 64;
inline constexpr std::uint32_t kMaxRegsPerThread = 255;
inline constexpr std::uint32_t kMaxSmemPerBlock = 16u << 20;  // clamp (no GPU has more per SM)

enum class Refusal : std::uint8_t {
    none = 0,
    bad_type,
    bad_entry,
    bad_func_index,
    zero_dimension,
    too_many_threads,
    grid_too_large,
};
const char* to_string(Refusal r);

// A record after validation: only these values reach the scheduler's arithmetic.
struct CheckedRecord {
    RecordType type = RecordType::launch;
    Entry entry = Entry::none;
    std::uint16_t flags = 0;
    std::uint32_t func_index = kUnknownFunc;  // < func_limit, kGraphFunc or kUnknownFunc
    std::uint64_t blocks = 0;                 // grid_x * grid_y * grid_z, each within CUDA's limits
    std::uint32_t threads = 0;                // per block, 1..kMaxThreadsPerBlock
    std::uint32_t smem_dynamic = 0;           // <= kMaxSmemPerBlock
    std::uint32_t grid_x = 0, grid_y = 0, grid_z = 0, block_x = 0, block_y = 0, block_z = 0;
    std::uint64_t stream = 0;
    std::uint64_t arg = 0;
    std::uint64_t time_ns = 0;
};

// Validates one record. `func_limit` is the size of the client's function table the daemon
// accepts (kMaxFuncs). Refusal::none means `out` is filled.
Refusal check_record(const RecordBody& in, std::uint32_t func_limit, CheckedRecord& out);

// A function-table entry after validation.
struct CheckedFunc {
    std::string name;  // printable, at most kNameMax - 1 bytes
    std::uint32_t regs = 0;
    std::uint32_t static_smem = 0;
    std::uint32_t max_threads = 0;
};
// Copies the entry's fields (the caller copied the entry out of shared memory first).
CheckedFunc check_func(const FuncInfo& in);

// Device limits a client reported, clamped to plausible values (0 fields take `fallback`'s).
GpuLimits check_limits(const HelloMsg& hello, const GpuLimits& fallback);

// A client's step name: printable, bounded; empty when it names nothing.
std::string check_job_name(const char* field, std::size_t size);

}  // namespace explsched::ksched
