// libFuzzer target for explsched-kerneld's record validator (src/kernel_sched/record_check.cpp)
// and the arithmetic the daemon runs on what it accepts: everything a hostile client can write
// into its own channel (ring cells and records, its function table) and report in its hello
// (device limits).
//
// Input layout (short inputs are zero-padded):
//   [0, 20)    five u32 device limits, as in HelloMsg (sm_count .. max_blocks_per_sm)
//   [20, 28)   u64 ring head the daemon is at
//   [28]       flags: bit 0 enforce mode; bit 1 honest ring cells (cell = position + 1, so the
//              records are taken; else the cells are the input's raw values)
//   [29, 149)  one raw function-table entry (FuncInfo: ready, regs, static_smem, max_threads, name)
//   then       raw 64-byte ring records (u64 cell + RecordBody), as many as the input holds
//
// Like the daemon, it takes records out of the ring (bounded per tick), validates each with
// check_record, looks the function up through check_func, computes occupancy, SM and bandwidth
// demand and drives the admission (submit / note_running / complete / admit / expire) with a
// victim client at a higher priority. Beyond "no crash, no sanitizer report" it asserts:
//  - accepted records carry only values within CUDA's limits (record_check.hpp's clamps);
//  - checked function entries and device limits are within their clamps, names printable;
//  - occupancy is within [0, max_blocks_per_sm], SM demand within [0, sm_count], bandwidth in
//    [0, 1], and the same holds for the raw, unchecked values;
//  - the ring take and claim on a scribbled channel end within their bounds;
//  - the victim's launch (protected: highest priority) is admitted at once, whatever the hostile
//    client sent before it.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/device/kernel_admission.hpp"
#include "core/device/kernel_key.hpp"
#include "core/device/kernel_occupancy.hpp"
#include "core/device/kernel_profile.hpp"
#include "kernel_sched/ksched_shm.hpp"
#include "kernel_sched/record_check.hpp"

using namespace explsched;
using namespace explsched::ksched;

namespace {

void require(bool condition) {
    if (!condition) __builtin_trap();
}

constexpr std::size_t kLimitsAt = 0;
constexpr std::size_t kHeadAt = 20;
constexpr std::size_t kFlagsAt = 28;
constexpr std::size_t kFuncAt = 29;
constexpr std::size_t kRecordsAt = kFuncAt + sizeof(FuncInfo);
constexpr std::size_t kRawRecord = 64;
constexpr std::uint32_t kVictim = 0;
constexpr std::uint32_t kHostile = 1;

// One channel, reused by every input (it is large); only the cells the input names are written.
Channel& channel() {
    static auto* ch = new Channel();
    return *ch;
}

template <typename T>
T load(const std::uint8_t* data, std::size_t size, std::size_t at) {
    T v{};
    if (at < size) std::memcpy(&v, data + at, std::min(sizeof v, size - at));
    return v;
}

bool printable(const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u <= 0x7e;
    });
}

void check_occupancy(const GpuLimits& g, std::uint32_t threads, std::uint32_t regs, std::uint64_t smem,
                     std::uint64_t blocks) {
    const std::uint32_t per_sm = blocks_per_sm(g, threads, regs, smem);
    require(per_sm <= g.max_blocks_per_sm);
    const std::uint32_t sms = sms_needed(g, blocks, per_sm);
    require(sms <= g.sm_count);
    require(blocks == 0 || sms >= 1);
}

void check_accepted(const RecordBody& in, const CheckedRecord& r) {
    require(r.type == in.type);
    require((r.flags & ~kKnownFlags) == 0);
    if (r.type == RecordType::complete) return;
    require(r.entry < Entry::count);
    require(r.func_index < kMaxFuncs || r.func_index == kGraphFunc || r.func_index == kUnknownFunc);
    require(r.grid_x >= 1 && r.grid_x <= kMaxGridX);
    require(r.grid_y >= 1 && r.grid_y <= kMaxGridYZ);
    require(r.grid_z >= 1 && r.grid_z <= kMaxGridYZ);
    require(r.block_x >= 1 && r.block_x <= kMaxThreadsPerBlock);
    require(r.block_y >= 1 && r.block_y <= kMaxThreadsPerBlock);
    require(r.block_z >= 1 && r.block_z <= kMaxBlockZ);
    require(r.threads >= 1 && r.threads <= kMaxThreadsPerBlock);
    require(std::uint64_t{r.block_x} * r.block_y * r.block_z == r.threads);
    require(r.blocks == std::uint64_t{r.grid_x} * r.grid_y * r.grid_z);
    require(r.smem_dynamic <= kMaxSmemPerBlock);
}

void check_limits_clamped(const GpuLimits& g) {
    require(g.sm_count >= 1 && g.sm_count <= 1024);
    require(g.max_threads_per_sm >= 32 && g.max_threads_per_sm <= 4096);
    require(g.max_regs_per_sm >= 1024 && g.max_regs_per_sm <= (1u << 20));
    require(g.max_smem_per_sm >= 1024 && g.max_smem_per_sm <= kMaxSmemPerBlock);
    require(g.max_blocks_per_sm >= 1 && g.max_blocks_per_sm <= 256);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The hello's limits.
    HelloMsg hello{};
    hello.sm_count = load<std::uint32_t>(data, size, kLimitsAt);
    hello.max_threads_per_sm = load<std::uint32_t>(data, size, kLimitsAt + 4);
    hello.max_regs_per_sm = load<std::uint32_t>(data, size, kLimitsAt + 8);
    hello.max_smem_per_sm = load<std::uint32_t>(data, size, kLimitsAt + 12);
    hello.max_blocks_per_sm = load<std::uint32_t>(data, size, kLimitsAt + 16);
    const GpuLimits g = check_limits(hello, GpuLimits{});
    check_limits_clamped(g);
    const std::uint8_t flags = load<std::uint8_t>(data, size, kFlagsAt);
    const bool enforce = (flags & 1) != 0;
    const bool honest_cells = (flags & 2) != 0;

    // The function-table entry, copied out once as the daemon does (raw bytes, `ready` included).
    FuncInfo raw_func;
    std::memset(static_cast<void*>(&raw_func), 0, sizeof raw_func);
    if (kFuncAt < size)
        std::memcpy(static_cast<void*>(&raw_func), data + kFuncAt, std::min(sizeof raw_func, size - kFuncAt));
    const CheckedFunc f = check_func(raw_func);
    require(!f.name.empty() && f.name.size() < kNameMax && printable(f.name));
    require(f.regs <= kMaxRegsPerThread && f.static_smem <= kMaxSmemPerBlock &&
            f.max_threads <= kMaxThreadsPerBlock);
    const bool func_ready = raw_func.ready.load(std::memory_order_relaxed) != 0;

    // The raw records go into the ring at the daemon's head, cells as the input says.
    Channel& ch = channel();
    std::uint64_t head = load<std::uint64_t>(data, size, kHeadAt);
    const std::size_t n = size > kRecordsAt ? (size - kRecordsAt + kRawRecord - 1) / kRawRecord : 0;
    const std::size_t in_ring = std::min<std::size_t>(n, kRingSize);
    std::vector<RecordBody> bodies(in_ring);
    for (std::size_t i = 0; i < in_ring; ++i) {
        const std::size_t at = kRecordsAt + i * kRawRecord;
        const std::uint64_t pos = head + i;
        Record& slot = ch.ring[pos & (kRingSize - 1)];
        const std::uint64_t cell = honest_cells ? pos + 1 : load<std::uint64_t>(data, size, at);
        std::memset(static_cast<void*>(&bodies[i]), 0, sizeof bodies[i]);
        if (at + 8 < size)
            std::memcpy(static_cast<void*>(&bodies[i]), data + at + 8,
                        std::min(sizeof(RecordBody), size - at - 8));
        std::memcpy(static_cast<void*>(&slot.body), &bodies[i], sizeof slot.body);
        slot.cell.store(cell, std::memory_order_relaxed);
    }
    // A cell left over from an earlier input may match: make the slot after the input's records
    // not takeable, so what is taken is this input's.
    if (in_ring < kRingSize)
        ch.ring[(head + in_ring) & (kRingSize - 1)].cell.store(head + in_ring, std::memory_order_relaxed);

    // The daemon's side: the victim (highest priority, protected) and the hostile client.
    AdmissionConfig config;
    config.sm_cap = static_cast<double>(g.sm_count);
    KernelAdmission admission(config);
    admission.set_client(kVictim, 10.0);
    admission.set_client(kHostile, 0.0);
    KernelProfileStore profiles;
    std::uint64_t now = 1000000000ULL;
    std::uint64_t seq = 0;
    std::vector<Grant> grants;
    std::size_t taken = 0;
    RecordBody body{};
    const std::uint64_t head0 = head;
    while (taken < kRecordsPerTick && ring_take(ch, head, body)) {
        ++taken;
        now += 1000;
        // The raw values through the occupancy arithmetic: any value must give a bounded answer.
        check_occupancy(g,
                        static_cast<std::uint32_t>(std::uint64_t{body.block_x} * body.block_y * body.block_z),
                        raw_func.regs, std::uint64_t{raw_func.static_smem} + body.smem_dynamic,
                        std::uint64_t{body.grid_x} * body.grid_y * body.grid_z);
        CheckedRecord r;
        const Refusal why = check_record(body, kMaxFuncs, r);
        if (why != Refusal::none) {
            require(std::strlen(to_string(why)) > 0);
            continue;
        }
        check_accepted(body, r);
        if (r.type == RecordType::complete) {
            const std::uint64_t at = r.time_ns != 0 ? std::min(r.time_ns, now) : now;
            if (auto done = admission.complete(kHostile, r.arg, at))
                profiles.observe_duration(done->key, done->duration_ns);
            continue;
        }
        if ((r.flags & kFlagCaptured) != 0) continue;
        AdmissionRequest q;
        q.client = kHostile;
        q.seq = ++seq;
        q.stream = r.stream;
        q.submitted_ns = now;
        std::uint64_t prior_ns = 20000;
        if (r.func_index == kGraphFunc) {
            q.key = kernel_key(fnv1a64("cuGraphLaunch"), r.arg);
            q.demand.sms = g.sm_count;
        } else {
            const bool known = func_ready && r.func_index < kMaxFuncs;
            const std::uint32_t per_sm = blocks_per_sm(
                g, r.threads, known ? f.regs : 0, std::uint64_t{known ? f.static_smem : 0} + r.smem_dynamic);
            require(per_sm <= g.max_blocks_per_sm);
            q.demand.sms = sms_needed(g, r.blocks, per_sm);
            q.demand.cls = known ? profiles.kernel_class(f.name) : KernelClass::unknown;
            if (known) prior_ns = profiles.imported_duration_ns(f.name);
            const LaunchShape shape{r.grid_x,  r.grid_y,  r.grid_z,      r.block_x,
                                    r.block_y, r.block_z, r.smem_dynamic};
            q.key = kernel_key(known ? fnv1a64(f.name) : 0, shape);
        }
        require(q.demand.sms >= 0.0 && q.demand.sms <= g.sm_count);
        q.demand.bw = bandwidth_demand(q.demand.cls, q.demand.sms, g.sm_count);
        require(std::isfinite(q.demand.bw) && q.demand.bw >= 0.0 && q.demand.bw <= 1.0);
        q.demand.duration_ns = profiles.expected_duration_ns(q.key, prior_ns);
        if (r.type == RecordType::request && enforce) {
            admission.submit(q);
        } else {
            q.tracked = r.type != RecordType::launch;
            admission.note_running(q, now);
        }
        if ((taken & 7) == 0) {
            grants.clear();
            admission.admit(now, grants);
            for (const Grant& gr : grants) require(gr.client == kHostile && gr.seq >= 1 && gr.seq <= seq);
        }
    }
    require(taken <= in_ring && head - head0 == taken);
    require(std::isfinite(admission.in_flight_sms()) && admission.in_flight_sms() >= 0.0);
    require(admission.waiting() <= seq);

    // The victim's launch after all that: protected, so admitted at once.
    AdmissionRequest v;
    v.client = kVictim;
    v.seq = 1;
    v.key = 42;
    v.demand.sms = 1;
    v.demand.bw = bandwidth_demand(KernelClass::unknown, 1, g.sm_count);
    v.demand.duration_ns = 20000;
    v.submitted_ns = now;
    require(admission.is_protected(kVictim));
    admission.submit(v);
    grants.clear();
    admission.admit(now, grants);
    require(std::any_of(grants.begin(), grants.end(),
                        [](const Grant& gr) { return gr.client == kVictim && gr.seq == 1; }));
    admission.expire(now + 10000000000ULL);

    // The client's own side of a scribbled ring: a claim gives up within its bound.
    ch.header.tail.store(load<std::uint64_t>(data, size, kHeadAt) ^ 0x5555, std::memory_order_relaxed);
    std::uint64_t pos = 0;
    Record* claimed = ring_claim(ch, pos);
    if (claimed != nullptr) require(claimed == &ch.ring[pos & (kRingSize - 1)]);
    return 0;
}
