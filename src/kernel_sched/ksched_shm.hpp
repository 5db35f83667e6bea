// The protocol between the intercept (in every CUDA process) and explsched-kerneld (one per GPU).
//
// No memory is writable by two users. A client connects to the daemon's Unix socket
// (<runtime>/gpu<N>/kerneld.sock, SOCK_SEQPACKET) and says hello; the daemon reads the peer's
// credentials (SO_PEERCRED) and hands it three descriptors over SCM_RIGHTS:
//   - its request channel: a memfd holding the client's ring and function table, sealed against
//     shrinking and growing (truncation cannot make anyone fault), writable by that client only
//     (nobody else gets the descriptor; the daemon treats everything in it as hostile input);
//   - its reply page: a memfd with the daemon's grant words, sealed F_SEAL_FUTURE_WRITE after the
//     daemon mapped it, so the client can only map it read-only (FUTEX_WAIT works read-only);
//   - the daemon's status file (heartbeat, "asleep" flag, per-job statistics for kstat), opened
//     read-only; the file itself is the daemon user's, mode 0644.
// The connection stays open: its hang-up is the client's exit. A client wakes a sleeping daemon
// by sending a one-byte message on it; the daemon reads a bounded number per tick.
//
// The ring is Vyukov's bounded multi-producer single-consumer queue with per-cell sequences:
// every thread of the process, and the driver's host-callback thread, posts without a lock. The
// consumer position lives in the daemon's own memory, never in the channel. Function metadata is
// written once per CUfunction into the function table; records refer to it by index, so a record
// is one cache line.
//
// Layout changes must bump kVersion: client and daemon refuse a mismatched peer.
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

inline constexpr std::uint64_t kMagic = 0x3253444843534b45ULL;  // "EKSCHDS2" little-endian
inline constexpr std::uint32_t kVersion = 2;
inline constexpr std::uint32_t kMaxClients = 64;        // connections served at once (all users)
inline constexpr std::uint32_t kMaxClientsPerUid = 16;  // of which one uid may hold at most
inline constexpr std::uint32_t kRegistrarReserve = 8;   // extra connections for step registrars
inline constexpr std::uint32_t kRingSize = 2048;        // records per client; a power of two
inline constexpr std::uint32_t kMaxFuncs = 2048;        // distinct kernels per client
inline constexpr std::uint32_t kMaxJobs = 64;           // jobs published for kstat
inline constexpr std::uint32_t kMaxSteps = 256;         // registered steps per daemon
inline constexpr std::uint32_t kRecordsPerTick = 512;   // records read from one client per tick
inline constexpr std::uint32_t kMessagesPerTick = 16;   // socket messages read from one client per tick
inline constexpr std::size_t kNameMax = 104;
inline constexpr std::size_t kJobMax = 40;
inline constexpr std::uint64_t kDeadAfterNs = 300'000'000;   // heartbeat older than this: dead
inline constexpr std::uint64_t kFutureSlackNs = 50'000'000;  // heartbeat ahead of now by more: implausible
inline constexpr std::uint64_t kHeartbeatNs = 20'000'000;    // daemon beats at least this often
inline constexpr std::uint64_t kHelloDeadlineNs = 1'000'000'000;  // a connection must say hello by then
inline constexpr int kClaimTries = 64;  // CAS attempts on the ring tail before a record is dropped

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
inline constexpr std::uint16_t kFlagUntracked = 4;  // no completion will follow
inline constexpr std::uint16_t kKnownFlags = kFlagCaptured | kFlagCooperative | kFlagUntracked;
inline constexpr std::uint32_t kGraphFunc = 0xFFFFFFFEu;    // func_index of a graph launch
inline constexpr std::uint32_t kUnknownFunc = 0xFFFFFFFFu;  // function table full

// The payload of a record, as the daemon copies it out of the ring before looking at it.
struct RecordBody {
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

struct alignas(64) Record {
    std::atomic<std::uint64_t> cell;  // ring sequence (Vyukov)
    RecordBody body;
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

enum class ClientMode : std::uint32_t { observe = 1, enforce = 2 };

// The request channel: one per client, writable by that client (and the daemon) only.
struct alignas(64) ChannelHeader {
    std::uint64_t magic;  // written by the daemon before hand-over
    std::uint32_t version;
    std::uint32_t ring_size, max_funcs;
    alignas(64) std::atomic<std::uint64_t> tail;  // next ring position to claim
    std::atomic<std::uint64_t> dropped;           // records the client gave up on
    std::atomic<std::uint32_t> func_count;
    std::atomic<std::uint32_t> waiters;  // threads asleep on the reply page's grant futex
};
struct Channel {
    ChannelHeader header;
    alignas(64) Record ring[kRingSize];
    FuncInfo funcs[kMaxFuncs];
};
inline constexpr std::size_t kChannelSize = (sizeof(Channel) + 4095) / 4096 * 4096;

// The reply page: daemon -> one client; the client's mapping is read-only.
struct alignas(64) ReplyPage {
    std::uint64_t magic;
    std::uint32_t version;
    std::uint32_t client_id;
    double priority;  // what the daemon granted this client (diagnostics)
    alignas(64) std::atomic<std::uint64_t> granted_upto;
    std::atomic<std::uint32_t> grant_futex;
    std::atomic<std::uint32_t> bypass;
};
inline constexpr std::size_t kReplySize = 4096;
static_assert(sizeof(ReplyPage) <= kReplySize, "the reply page is one page");

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
    std::uint64_t refused;  // records the daemon's validator refused
};

// The status file: daemon-owned, mode 0644, mapped read-only by clients and kstat.
struct alignas(64) StatusHeader {
    std::atomic<std::uint64_t> magic;  // stored last by the daemon
    std::uint32_t version;
    std::uint32_t max_jobs;
    std::int32_t daemon_pid;
    std::uint32_t gpu_index;
    std::uint64_t started_ns;
    std::uint64_t status_size;
    alignas(64) std::atomic<std::uint64_t> heartbeat_ns;
    std::atomic<std::uint32_t> daemon_sleeping;
    std::atomic<std::uint32_t> clients_active;
};
struct StatusFile {
    StatusHeader header;
    JobStats jobs[kMaxJobs];
};
inline constexpr std::size_t kStatusSize = (sizeof(StatusFile) + 4095) / 4096 * 4096;

// Messages on the socket (SOCK_SEQPACKET: one struct per message). A one-byte message is a
// doorbell.
enum class MsgType : std::uint32_t {
    hello = 1,
    welcome = 2,
    register_step = 3,
    unregister_step = 4,
    ack = 5
};
struct MsgHeader {
    std::uint32_t magic;  // kMsgMagic
    std::uint32_t version;
    MsgType type;
    std::uint32_t reserved;
};
inline constexpr std::uint32_t kMsgMagic = 0x4b534348u;  // "HCSK"
struct HelloMsg {
    MsgHeader h;
    ClientMode mode;
    std::uint32_t sm_count, max_threads_per_sm, max_regs_per_sm, max_smem_per_sm,
        max_blocks_per_sm;  // 0: not known to the client
    char job[kJobMax];      // the step the client says it belongs to, "<jobid>.<stepid>"
};
struct RegisterMsg {  // register_step / unregister_step, accepted from privileged peers only
    MsgHeader h;
    std::uint32_t uid;       // the step's user
    std::int32_t owner_pid;  // the step is live while this pid is (slurmstepd)
    double priority;
    char job[kJobMax];
};
struct ReplyMsg {  // welcome / ack
    MsgHeader h;
    std::int32_t status;  // 0, or an errno value
    std::uint32_t client_id;
    std::uint64_t channel_size, reply_size, status_size;
    double priority;
    char message[128];
};

inline std::uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

// A heartbeat is plausible when it is neither stale nor (by more than a little) in the future.
inline bool heartbeat_alive(std::uint64_t beat_ns, std::uint64_t now_ns) {
    return now_ns <= beat_ns + kDeadAfterNs && beat_ns <= now_ns + kFutureSlackNs;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// Shared (not process-private) futex operations on a word in a mapping.
inline void futex_wait(const std::atomic<std::uint32_t>* word, std::uint32_t expected,
                       std::uint64_t timeout_ns) {
    timespec ts{static_cast<time_t>(timeout_ns / 1000000000ULL),
                static_cast<long>(timeout_ns % 1000000000ULL)};
    syscall(SYS_futex, reinterpret_cast<const std::uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}
inline void futex_wake_all(std::atomic<std::uint32_t>* word) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, 0x7fffffff, nullptr, nullptr, 0);
}

// Producer side: claims a cell and returns it, or nullptr when the ring is full or the claim did
// not succeed within kClaimTries attempts (contention, or a channel the process scribbled on).
// The caller fills the payload and calls ring_publish() with the returned position.
inline Record* ring_claim(Channel& ch, std::uint64_t& pos) {
    pos = ch.header.tail.load(std::memory_order_relaxed);
    for (int tries = 0; tries < kClaimTries; ++tries) {
        Record& r = ch.ring[pos & (kRingSize - 1)];
        const std::uint64_t cell = r.cell.load(std::memory_order_acquire);
        const auto diff = static_cast<std::int64_t>(cell - pos);
        if (diff == 0) {
            if (ch.header.tail.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) return &r;
        } else if (diff < 0) {
            return nullptr;
        } else {
            pos = ch.header.tail.load(std::memory_order_relaxed);
        }
    }
    return nullptr;
}
inline void ring_publish(Record& r, std::uint64_t pos) { r.cell.store(pos + 1, std::memory_order_release); }

// Consumer side (the daemon, which keeps `head` in its own memory): copies the record at `head`
// out of the ring once and frees its cell; false when none is published there.
inline bool ring_take(Channel& ch, std::uint64_t& head, RecordBody& out) {
    Record& r = ch.ring[head & (kRingSize - 1)];
    if (r.cell.load(std::memory_order_acquire) != head + 1) return false;
    out = r.body;
    r.cell.store(head + kRingSize, std::memory_order_release);
    head += 1;
    return true;
}
// Initialises a fresh channel (daemon, before hand-over).
void channel_init(Channel& ch);

// Node-local layout under the runtime directory (default /run/explsched/ksched, root-owned):
//   <runtime>/gpu<N>/             the kerneld user's directory (made by the unit or prolog)
//   <runtime>/gpu<N>/kerneld.sock the daemon's socket (the endpoint clients connect to)
//   <runtime>/gpu<N>/kerneld.status  heartbeat and per-job statistics (0644, daemon-owned)
//   <runtime>/gpu<N>/kerneld.pid  the daemon's pid
inline constexpr const char* kDefaultRuntimeDir = "/run/explsched/ksched";
inline std::string gpu_dir(const std::string& runtime_dir, std::uint32_t gpu) {
    return runtime_dir + "/gpu" + std::to_string(gpu);
}
inline std::string endpoint_path(const std::string& runtime_dir, std::uint32_t gpu) {
    return gpu_dir(runtime_dir, gpu) + "/kerneld.sock";
}
// The status file that belongs to a socket path: kerneld.status in the socket's directory.
std::string status_path_for(const std::string& socket_path);

// Copies a string into a fixed field, always NUL-terminated.
void copy_field(char* dst, std::size_t size, const char* src);
// A fixed field read from memory someone else wrote: at most `size` bytes, up to the first NUL.
std::string read_field(const char* src, std::size_t size);

void init_header(MsgHeader& h, MsgType type);
bool header_ok(const MsgHeader& h, MsgType type);

// A read-only or read-write mapping of a fixed size; unmaps on destruction.
class Mapping {
public:
    Mapping() = default;
    Mapping(void* p, std::size_t size) : p_(p), size_(size) {}
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    Mapping(Mapping&& o) noexcept : p_(o.p_), size_(o.size_) { o.p_ = nullptr; }
    Mapping& operator=(Mapping&& o) noexcept;
    ~Mapping();
    void* get() const { return p_; }
    template <typename T>
    T* as() const {
        return static_cast<T*>(p_);
    }
    explicit operator bool() const { return p_ != nullptr; }
    // Gives up ownership: the mapping stays for the life of the process (the intercept never
    // unmaps, since other threads may still be launching while the process exits).
    void* release() {
        void* p = p_;
        p_ = nullptr;
        return p;
    }

private:
    void* p_ = nullptr;
    std::size_t size_ = 0;
};

// Maps `size` bytes of `fd` shared; nullptr mapping (and `error` set) on failure.
Mapping map_fd(int fd, std::size_t size, bool writable, std::string& error);
// Maps a status file read-only and checks magic, version and size (kstat, tests).
Mapping attach_status(const std::string& path, std::string& error);

}  // namespace explsched::ksched
