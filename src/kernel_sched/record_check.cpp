#include "kernel_sched/record_check.hpp"

#include <algorithm>
#include <cstring>

namespace explsched::ksched {

const char* to_string(Refusal r) {
    switch (r) {
        case Refusal::none:
            return "ok";
        case Refusal::bad_type:
            return "unknown record type";
        case Refusal::bad_entry:
            return "unknown entry point";
        case Refusal::bad_func_index:
            return "function index outside the client's table";
        case Refusal::zero_dimension:
            return "a grid or block dimension is zero";
        case Refusal::too_many_threads:
            return "more threads per block than CUDA allows";
        case Refusal::grid_too_large:
            return "grid dimension beyond CUDA's limit";
    }
    return "?";
}

namespace {

std::string printable(const char* src, std::size_t size) {
    std::string s = read_field(src, size);
    // A field without its terminating NUL: keep what fits with one (at most size - 1 bytes).
    if (size > 0 && s.size() >= size) s.resize(size - 1);
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
    return s;
}

}  // namespace

Refusal check_record(const RecordBody& in, std::uint32_t func_limit, CheckedRecord& out) {
    out = CheckedRecord{};
    const auto type = static_cast<std::uint8_t>(in.type);
    if (type < static_cast<std::uint8_t>(RecordType::launch) ||
        type > static_cast<std::uint8_t>(RecordType::complete))
        return Refusal::bad_type;
    out.type = in.type;
    out.flags = static_cast<std::uint16_t>(in.flags & kKnownFlags);
    out.stream = in.stream;
    out.arg = in.arg;
    out.time_ns = in.time_ns;
    if (out.type == RecordType::complete) return Refusal::none;  // `arg` is only looked up, never computed on
    if (in.entry >= Entry::count) return Refusal::bad_entry;
    out.entry = in.entry;
    const std::uint32_t limit = std::min(func_limit, kMaxFuncs);
    if (in.func_index != kGraphFunc && in.func_index != kUnknownFunc && in.func_index >= limit)
        return Refusal::bad_func_index;
    out.func_index = in.func_index;
    if (in.grid_x == 0 || in.grid_y == 0 || in.grid_z == 0 || in.block_x == 0 || in.block_y == 0 ||
        in.block_z == 0)
        return Refusal::zero_dimension;
    if (in.grid_x > kMaxGridX || in.grid_y > kMaxGridYZ || in.grid_z > kMaxGridYZ)
        return Refusal::grid_too_large;
    if (in.block_x > kMaxThreadsPerBlock || in.block_y > kMaxThreadsPerBlock || in.block_z > kMaxBlockZ)
        return Refusal::too_many_threads;
    const std::uint64_t threads = std::uint64_t{in.block_x} * in.block_y * in.block_z;  // <= 2^26
    if (threads > kMaxThreadsPerBlock) return Refusal::too_many_threads;
    out.grid_x = in.grid_x;
    out.grid_y = in.grid_y;
    out.grid_z = in.grid_z;
    out.block_x = in.block_x;
    out.block_y = in.block_y;
    out.block_z = in.block_z;
    out.threads = static_cast<std::uint32_t>(threads);
    out.blocks = std::uint64_t{in.grid_x} * in.grid_y * in.grid_z;  // < 2^63
    out.smem_dynamic = std::min(in.smem_dynamic, kMaxSmemPerBlock);
    return Refusal::none;
}

CheckedFunc check_func(const FuncInfo& in) {
    CheckedFunc f;
    f.name = printable(in.name, sizeof in.name);
    if (f.name.empty()) f.name = "?";
    f.regs = std::min(in.regs, kMaxRegsPerThread);
    f.static_smem = std::min(in.static_smem, kMaxSmemPerBlock);
    f.max_threads = std::min(in.max_threads, kMaxThreadsPerBlock);
    return f;
}

GpuLimits check_limits(const HelloMsg& hello, const GpuLimits& fallback) {
    GpuLimits g = fallback;
    auto take = [](std::uint32_t v, std::uint32_t lo, std::uint32_t hi, std::uint32_t& field) {
        if (v != 0) field = std::clamp(v, lo, hi);
    };
    take(hello.sm_count, 1, 1024, g.sm_count);
    take(hello.max_threads_per_sm, 32, 4096, g.max_threads_per_sm);
    take(hello.max_regs_per_sm, 1024, 1u << 20, g.max_regs_per_sm);
    take(hello.max_smem_per_sm, 1024, kMaxSmemPerBlock, g.max_smem_per_sm);
    take(hello.max_blocks_per_sm, 1, 256, g.max_blocks_per_sm);
    return g;
}

std::string check_job_name(const char* field, std::size_t size) { return printable(field, size); }

}  // namespace explsched::ksched
