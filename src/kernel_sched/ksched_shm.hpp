// The shared-memory protocol between the intercept (in every CUDA process) and
// explsched-kerneld (one per GPU). One file per GPU, mapped MAP_SHARED:
//
//   SegmentHeader | JobStats[kMaxJobs] | ClientSlot[kMaxClients]
//
// A client claims a slot (CAS free -> claiming -> active) and then owns its ring's producer
// side: a bounded multi-producer single-consumer ring (Vyukov's per-cell sequence scheme) that
// every thread of the process, and the driver's host-callback thread, may post to without a
// lock. The daemon is the only consumer. Function metadata (name, registers, static shared
// memory) is written once per CUfunction into the slot's function table; launch records refer
// to it by index, so a record is one 64-byte cache line.
//
// Daemon -> client traffic is a few words in the slot: `granted_upto` (every request whose
// ring position + 1 is <= it may launch), `bypass` (the client is protected: launch without
// waiting) and the grant futex. The daemon publishes a heartbeat; a client that sees it stale
// for kDeadAfterNs stops talking to the daemon (fail open).
//
// Layout changes must bump kVersion: client and daemon refuse a mismatched segment.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace explsched::ksched {

inline constexpr std::uint64_t kMagic = 0x3153444843534b45ULL;  // "EKSCHDS1" little-endian
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::uint32_t kMaxClients = 32;
inline constexpr std::uint32_t kRingSize = 2048;  // records per client; a power of two
inline constexpr std::uint32_t kMaxFuncs = 2048;  // distinct kernels per client
inline constexpr std::uint32_t kMaxJobs = 64;
inline constexpr std::size_t kNameMax = 104;
inline constexpr std::size_t kJobMax = 40;
inline constexpr std::uint64_t kDeadAfterNs = 300'000'000;  // heartbeat older than this: dead
inline constexpr std::uint64_t kHeartbeatNs = 20'000'000;   // daemon beats at least this often

// Which hooked entry point a launch came through (for the exactly-once accounting).
enum class Entry : std::uint8_t {
    launch_kernel = 0,
    launch_kernel_ptsz,
    launch_kernel_ex,
    launch_kernel_ex_ptsz,
    launch_cooperative,
    launch_cooperative_ptsz,
    graph_launch,
    graph_launch_ptsz,
    count,
    none = 0xFF  // not a launch (cuInit, cuGetProcAddress)
};
const char* entry_name(Entry e);

enum class RecordType : std::uint8_t {
    launch = 1,    // observe mode: a launch went through
    request = 2,   // enforce mode: the thread waits for granted_upto >= position + 1
    started = 3,   // enforce mode, protected bypass: launched without waiting
    complete = 4,  // `arg` (a request's or started launch's sequence) finished at `time_ns`
};

inline constexpr std::uint16_t kFlagCaptured = 1;  // launched into a capturing stream
inline constexpr std::uint16_t kFlagCooperative = 2;
inline constexpr std::uint16_t kFlagUntracked = 4;          // no completion will follow
inline constexpr std::uint32_t kGraphFunc = 0xFFFFFFFEu;    // func_index of a graph launch
inline constexpr std::uint32_t kUnknownFunc = 0xFFFFFFFFu;  // function table full

struct alignas(64) Record {
    std::atomic<std::uint64_t> cell;  // ring sequence (Vyukov)
    RecordType type;
    Entry entry;
    std::uint16_t flags;
    std::uint32_t func_index;
    std::uint32_t grid_x, grid_y, grid_z;
    std::uint16_t block_x, block_y;
    std::uint32_t block_z;
    std::uint32_t smem_dynamic;
    std::uint64_t stream;
    std::uint64_t arg;      // complete: sequence completed; graph launch: the graph exec handle
    std::uint64_t time_ns;  // complete: CLOCK_MONOTONIC of the completion
};
static_assert(sizeof(Record) == 64, "a record is one cache line");

// Written by the client before the first record that names it; `ready` is stored last.
struct FuncInfo {
    std::atomic<std::uint32_t> ready;
    std::uint32_t regs;
    std::uint32_t static_smem;
    std::uint32_t max_threads;
    char name[kNameMax];
};
static_assert(sizeof(FuncInfo) == 120, "function table entry size is part of the ABI");

enum class SlotState : std::uint32_t { free = 0, claiming = 1, active = 2 };
enum class ClientMode : std::uint32_t { observe = 1, enforce = 2 };

struct alignas(64) ClientSlot {
    // Identity, written by the client while claiming.
    std::atomic<std::uint32_t> state;
    std::atomic<std::uint32_t> generation;
    std::int32_t pid;
    ClientMode mode;
    double priority;
    char job[kJobMax];  // "<jobid>.<stepid>" or a free-form name
    std::uint32_t sm_count, max_threads_per_sm, max_regs_per_sm, max_smem_per_sm,
        max_blocks_per_sm;  // 0: not known to the client

    // Daemon -> client.
    alignas(64) std::atomic<std::uint64_t> granted_upto;
    std::atomic<std::uint32_t> grant_futex;
    std::atomic<std::uint32_t> waiters;
    std::atomic<std::uint32_t> bypass;

    // Client -> daemon.
    alignas(64) std::atomic<std::uint64_t> tail;  // next ring position to claim
    std::atomic<std::uint64_t> dropped;           // records lost to a full ring
    std::atomic<std::uint32_t> func_count;
    alignas(64) std::atomic<std::uint64_t> head;  // consumer position (daemon only writes)

    alignas(64) Record ring[kRingSize];
    FuncInfo funcs[kMaxFuncs];
};

// Per-job counters for `explsched kstat`, written by the daemon under a seqlock.
struct alignas(64) JobStats {
    std::atomic<std::uint32_t> version;  // odd while the daemon writes
    std::uint32_t clients_live;
    char job[kJobMax];
    double priority;
    std::uint64_t launches;  // every launch seen (all modes)
    std::uint64_t admitted;  // enforce: launches admitted (waited or bypassed)
    std::uint64_t held;      // enforce: requests that had to wait
    std::uint64_t completed;
    std::uint64_t wait_ns_total;
    std::uint64_t wait_ns_max;
    std::uint64_t dropped;
};

struct alignas(64) SegmentHeader {
    std::atomic<std::uint64_t> magic;  // stored last by the daemon
    std::uint32_t version;
    std::uint32_t max_clients, ring_size, max_funcs, max_jobs;
    std::uint64_t segment_size;
    std::int32_t daemon_pid;
    std::uint32_t gpu_index;
    std::uint64_t started_ns;
    alignas(64) std::atomic<std::uint64_t> heartbeat_ns;
    std::atomic<std::uint32_t> daemon_sleeping;
    std::atomic<std::uint32_t> doorbell;
};

struct Segment {
    SegmentHeader header;
    JobStats jobs[kMaxJobs];
    ClientSlot slots[kMaxClients];
};

inline constexpr std::size_t kSegmentSize = sizeof(Segment);

inline std::uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// Shared (not process-private) futex operations on a word in the mapping.
inline void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, std::uint64_t timeout_ns) {
    timespec ts{static_cast<time_t>(timeout_ns / 1000000000ULL),
                static_cast<long>(timeout_ns % 1000000000ULL)};
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}
inline void futex_wake_all(std::atomic<std::uint32_t>* word) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, 0x7fffffff, nullptr, nullptr, 0);
}

// Producer side: claims a cell and returns it, or nullptr when the ring is full. The caller
// fills the payload and calls publish() with the returned position.
inline Record* ring_claim(ClientSlot& s, std::uint64_t& pos) {
    pos = s.tail.load(std::memory_order_relaxed);
    for (;;) {
        Record& r = s.ring[pos & (kRingSize - 1)];
        const std::uint64_t cell = r.cell.load(std::memory_order_acquire);
        const auto diff = static_cast<std::int64_t>(cell - pos);
        if (diff == 0) {
            if (s.tail.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) return &r;
        } else if (diff < 0) {
            return nullptr;
        } else {
            pos = s.tail.load(std::memory_order_relaxed);
        }
    }
}
inline void ring_publish(Record& r, std::uint64_t pos) { r.cell.store(pos + 1, std::memory_order_release); }

// Consumer side (the daemon): the next published record, or nullptr. Call ring_release()
// after reading it.
inline Record* ring_peek(ClientSlot& s, std::uint64_t& pos) {
    pos = s.head.load(std::memory_order_relaxed);
    Record& r = s.ring[pos & (kRingSize - 1)];
    if (r.cell.load(std::memory_order_acquire) != pos + 1) return nullptr;
    return &r;
}
inline void ring_release(ClientSlot& s, Record& r, std::uint64_t pos) {
    r.cell.store(pos + kRingSize, std::memory_order_release);
    s.head.store(pos + 1, std::memory_order_relaxed);
}
// Resets a slot's ring for its next owner (daemon only, while the slot is not active).
void ring_reset(ClientSlot& s);

// Node-local layout under the runtime directory (default /run/explsched/ksched), shared by the
// step setup, the daemon and `explsched kstat`:
//   <runtime>/gpu<N>/kerneld.shm   the segment (the endpoint clients attach to)
//   <runtime>/gpu<N>/kerneld.pid   the daemon's pid
//   <runtime>/gpu<N>/kerneld.log   the daemon's stderr
//   <runtime>/gpu<N>/lock          serialises step setup and teardown on that GPU
//   <runtime>/gpu<N>/steps/<job>.<step>   one file per live step using the GPU (refcount)
//   <runtime>/gpu<N>/mps/          MPS pipe and log directories when MPS is on
inline constexpr const char* kDefaultRuntimeDir = "/run/explsched/ksched";
inline std::string gpu_dir(const std::string& runtime_dir, std::uint32_t gpu) {
    return runtime_dir + "/gpu" + std::to_string(gpu);
}
inline std::string endpoint_path(const std::string& runtime_dir, std::uint32_t gpu) {
    return gpu_dir(runtime_dir, gpu) + "/kerneld.shm";
}

// Copies a string into a fixed field, always NUL-terminated.
void copy_field(char* dst, std::size_t size, const char* src);

// A mapping of the segment file; unmaps on destruction.
class SegmentMap {
public:
    SegmentMap() = default;
    SegmentMap(const SegmentMap&) = delete;
    SegmentMap& operator=(const SegmentMap&) = delete;
    SegmentMap(SegmentMap&& o) noexcept : seg_(o.seg_) { o.seg_ = nullptr; }
    SegmentMap& operator=(SegmentMap&& o) noexcept;
    ~SegmentMap();

    // Creates a fresh segment at `path` (written to a temporary name and renamed over the old
    // one, so clients of a previous daemon keep their orphaned mapping and never see a reset).
    // On failure returns false and sets `error`.
    bool create(const std::string& path, std::uint32_t gpu_index, std::string& error);
    // Maps an existing segment read-write (clients) or read-only (kstat) and checks its magic,
    // version and geometry.
    bool attach(const std::string& path, bool writable, std::string& error);
    // The daemon marks the segment usable once it is initialised.
    void publish_ready();

    // Gives up ownership: the mapping stays for the life of the process (the intercept never
    // unmaps, since other threads may still be launching while the process exits).
    Segment* release() {
        Segment* s = seg_;
        seg_ = nullptr;
        return s;
    }
    Segment* get() const { return seg_; }
    Segment* operator->() const { return seg_; }
    explicit operator bool() const { return seg_ != nullptr; }

private:
    Segment* seg_ = nullptr;
};

}  // namespace explsched::ksched
