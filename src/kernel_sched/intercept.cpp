// libexplsched_intercept.so: LD_PRELOAD library that reports (observe) or gates (enforce)
// every CUDA kernel launch for explsched-kerneld, the per-GPU kernel scheduler.
//
// The per-launch fast path in observe mode is one atomic load of the process state and a
// branch, a lock-free function-cache probe and one record posted to the client's ring: no lock,
// no allocation, no system call, no log line. Everything else (resolving the driver, attaching
// to the daemon, describing a new kernel) happens once, on a slow path.
//
// The process is never put at risk: no exception leaves this library (it is built with
// -fno-exceptions), nothing calls exit(), and when the daemon is missing or stops beating the
// launches go straight to the driver after one warning.
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "kernel_sched/intercept_internal.hpp"
#include "kernel_sched/ksched_shm.hpp"
#include "kernel_sched/ksched_socket.hpp"

namespace es = explsched::ksched;
namespace cu = explsched::cuda;

namespace explsched::intercept {
namespace {

enum State : std::uint32_t { kUninit = 0, kPassthrough = 1, kObserve = 2, kEnforce = 3, kReregister = 4 };
std::atomic<std::uint32_t> g_state{kUninit};

constexpr int kMaxEndpoints = 16;

// One GPU's daemon as this process sees it: its own request channel (read-write), its reply page
// and the daemon's status file (both read-only), and the connection whose hang-up tells the
// daemon we are gone. Mappings are never unmapped (other threads may be launching at exit).
struct Endpoint {
    es::Channel* ch = nullptr;
    const es::ReplyPage* reply = nullptr;
    const es::StatusFile* status = nullptr;
    int sock = -1;
    std::atomic<bool> dead{false};
};
Endpoint g_endpoints[kMaxEndpoints];
int g_endpoint_count = 0;  // written before g_state publishes a mode
es::ClientMode g_mode = es::ClientMode::observe;
// Enforce mode reports kernel completions with a host function queued behind the kernel: always
// for launches that waited for admission (their completion frees capacity), one in
// g_track_every for a protected job's launches (enough to learn durations; a host function per
// launch costs microseconds in the driver). EXPLSCHED_KSCHED_TRACK: 0 never, N one in N.
bool g_track = true;
std::uint32_t g_track_every = 16;
thread_local std::uint32_t t_track_count = 0;
// Every wait a launch does for the daemon ends by this bound, and the launch goes through.
// EXPLSCHED_KSCHED_MAX_WAIT_MS may lower it, never raise it.
constexpr std::uint64_t kMaxWaitNs = 1'000'000'000;
std::uint64_t g_max_wait_ns = kMaxWaitNs;
// Attaching to the daemons (connect, hello, welcome) takes at most this long in all.
constexpr std::uint64_t kAttachBudgetNs = 500'000'000;
std::mutex g_register_mutex;

// Process-local map CUfunction -> function-table index. Lock-free lookups; inserts under
// g_func_mutex. Keys are never removed (CUDA functions live as long as their module).
constexpr std::size_t kCacheSize = 8192;
struct CacheEntry {
    std::atomic<std::uintptr_t> key;
    std::uint32_t index;
};
CacheEntry g_cache[kCacheSize];
std::uint32_t g_func_next = 0;
std::mutex g_func_mutex;

inline std::size_t cache_hash(std::uintptr_t key) {
    return static_cast<std::size_t>((key >> 4) * 0x9E3779B97F4A7C15ULL >> 51) & (kCacheSize - 1);
}

inline bool cache_find(std::uintptr_t key, std::uint32_t& index) {
    for (std::size_t i = cache_hash(key), n = 0; n < kCacheSize; ++n, i = (i + 1) & (kCacheSize - 1)) {
        const std::uintptr_t k = g_cache[i].key.load(std::memory_order_acquire);
        if (k == key) {
            index = g_cache[i].index;
            return true;
        }
        if (k == 0) return false;
    }
    return false;
}

using FuncGetName = es_CUresult (*)(const char**, es_CUfunction);
using FuncGetAttribute = es_CUresult (*)(int*, es_CUfunction_attribute, es_CUfunction);
using DeviceGetAttribute = es_CUresult (*)(int*, es_CUdevice_attribute, es_CUdevice);
using CtxGetDevice = es_CUresult (*)(es_CUdevice*);
using StreamIsCapturing = es_CUresult (*)(es_CUstream, es_CUstreamCaptureStatus*);
using LaunchHostFunc = es_CUresult (*)(es_CUstream, es_CUhostFn, void*);

std::uint32_t func_attribute(es_CUfunction f, es_CUfunction_attribute a) {
    auto get = real_fn<FuncGetAttribute>(kId_cuFuncGetAttribute);
    int v = 0;
    if (get == nullptr || get(&v, a, f) != cu::kSuccess || v < 0) return 0;
    return static_cast<std::uint32_t>(v);
}

// Re-entry guard of the slow paths: if the driver called back into a hooked entry point while
// we hold a lock (it does not today), the inner launch passes straight through.
thread_local bool t_in_slow_path = false;
struct SlowPathGuard {
    bool entered;
    SlowPathGuard() : entered(!t_in_slow_path) { t_in_slow_path = true; }
    ~SlowPathGuard() {
        if (entered) t_in_slow_path = false;
    }
};

// Slow path: first launch of a function. Describes it in every endpoint's function table.
__attribute__((noinline)) std::uint32_t register_function(es_CUfunction f) {
    const auto key = reinterpret_cast<std::uintptr_t>(f);
    const SlowPathGuard guard;
    if (!guard.entered) return es::kUnknownFunc;
    // Ask the driver before taking g_func_mutex: holding our lock while the driver takes its own
    // would order our lock before the driver's, and our fork handler (which takes g_func_mutex)
    // may run after a driver's fork handler took the driver's lock: a deadlock if a thread
    // forks while another registers a function. Two threads racing here both ask; one writes.
    const char* name = nullptr;
    auto get_name = real_fn<FuncGetName>(kId_cuFuncGetName);
    if (get_name == nullptr || get_name(&name, f) != cu::kSuccess) name = nullptr;
    const std::uint32_t regs = func_attribute(f, cu::kFuncNumRegs);
    const std::uint32_t smem = func_attribute(f, cu::kFuncSharedSizeBytes);
    const std::uint32_t threads = func_attribute(f, cu::kFuncMaxThreadsPerBlock);
    std::lock_guard<std::mutex> lock(g_func_mutex);
    std::uint32_t index = 0;
    if (cache_find(key, index)) return index;
    index = g_func_next < es::kMaxFuncs ? g_func_next++ : es::kUnknownFunc;
    if (index != es::kUnknownFunc) {
        for (int e = 0; e < g_endpoint_count; ++e) {
            es::Channel* ch = g_endpoints[e].ch;
            if (ch == nullptr) continue;
            es::FuncInfo& fi = ch->funcs[index];
            fi.regs = regs;
            fi.static_smem = smem;
            fi.max_threads = threads;
            es::copy_field(fi.name, sizeof fi.name, name != nullptr ? name : "?");
            fi.ready.store(1, std::memory_order_release);
            ch->header.func_count.store(index + 1, std::memory_order_release);
        }
    }
    for (std::size_t i = cache_hash(key), n = 0; n < kCacheSize; ++n, i = (i + 1) & (kCacheSize - 1)) {
        if (g_cache[i].key.load(std::memory_order_relaxed) == 0) {
            g_cache[i].index = index;
            g_cache[i].key.store(key, std::memory_order_release);
            break;
        }
    }
    return index;
}

inline std::uint32_t function_index(es_CUfunction f) {
    std::uint32_t index = 0;
    if (cache_find(reinterpret_cast<std::uintptr_t>(f), index)) return index;
    return register_function(f);
}

// What the hooks know about a launch.
struct Launch {
    es::Entry entry;
    bool ptds;
    std::uint16_t flags;
    es_CUfunction func;  // nullptr for graph launches
    std::uint64_t graph;
    unsigned gx, gy, gz, bx, by, bz, smem;
    es_CUstream stream;
};

inline Endpoint* endpoint_for_launch() {
    Endpoint* ep = nullptr;
    if (g_endpoint_count == 1) {
        ep = &g_endpoints[0];
    } else {
        // Several GPUs: the current context's device ordinal indexes the endpoints, which the
        // step setup lists in CUDA_VISIBLE_DEVICES order.
        es_CUdevice dev = -1;
        auto get = real_fn<CtxGetDevice>(kId_cuCtxGetDevice);
        if (get == nullptr || get(&dev) != cu::kSuccess || dev < 0 || dev >= g_endpoint_count) return nullptr;
        ep = &g_endpoints[dev];
    }
    if (ep->ch == nullptr || ep->dead.load(std::memory_order_relaxed)) return nullptr;
    return ep;
}

// Every way the scheduler can fail this process ends here or in fail_open(): one warning per
// process, whatever the reason, and the launches go straight to the driver.
void fail_open(const char* why, const char* detail = nullptr) { warn_once(kWarnFailOpen, why, detail); }

void mark_dead(Endpoint& ep) {
    ep.dead.store(true, std::memory_order_relaxed);
    fail_open("kernel scheduler daemon stopped responding; launches go straight to the driver");
}

inline bool daemon_alive(const Endpoint& ep, std::uint64_t now) {
    return es::heartbeat_alive(ep.status->header.heartbeat_ns.load(std::memory_order_relaxed), now);
}

void ring_doorbell(const Endpoint& ep) {
    // Pairs with the daemon's fence between announcing sleep and rescanning the channels.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (ep.status->header.daemon_sleeping.load(std::memory_order_relaxed) != 0) {
        const char bell = 1;
        // A full socket buffer means a wake-up is already pending: nothing to do.
        (void)send(ep.sock, &bell, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
}

// The ring is full (or the claim lost too many races): the daemon is asleep, descheduled or
// gone. Wake it and retry until room appears, the daemon is found dead, or the deadline passes;
// then the record is dropped (counted) and the launch goes through.
constexpr std::uint64_t kObserveFullWaitNs = 50000000;
struct Claim {
    es::Record* record;
    std::uint64_t pos;
};
__attribute__((noinline)) Claim claim_when_full(Endpoint& ep, std::uint64_t deadline) {
    std::uint64_t pos = 0;
    for (;;) {
        ring_doorbell(ep);
        sched_yield();
        if (es::Record* r = es::ring_claim(*ep.ch, pos)) return Claim{r, pos};
        const std::uint64_t now = es::monotonic_ns();
        if (!daemon_alive(ep, now)) {
            mark_dead(ep);
            break;
        }
        if (now > deadline) {
            fail_open("kernel scheduler channel stayed full; some launches were not scheduled");
            break;
        }
    }
    ep.ch->header.dropped.fetch_add(1, std::memory_order_relaxed);
    return Claim{nullptr, 0};
}

inline std::uint64_t claim_deadline() {
    const std::uint64_t now = es::monotonic_ns();
    return now + (g_mode == es::ClientMode::observe ? kObserveFullWaitNs : g_max_wait_ns / 2);
}

// A record slot in the ring: at once when there is room, else through claim_when_full.
// nullptr when the record is dropped.
__attribute__((always_inline)) inline es::Record* claim_record(Endpoint& ep, std::uint64_t& pos) {
    if (es::Record* r = es::ring_claim(*ep.ch, pos)) return r;
    const Claim c = claim_when_full(ep, claim_deadline());
    pos = c.pos;
    return c.record;
}

__attribute__((always_inline)) inline void fill_launch(es::RecordBody& r, es::RecordType type,
                                                       const Launch& l, std::uint32_t func_index) {
    r.type = type;
    r.entry = l.entry;
    r.flags = l.flags;
    r.func_index = func_index;
    r.grid_x = l.gx;
    r.grid_y = l.gy;
    r.grid_z = l.gz;
    r.block_x = static_cast<std::uint16_t>(l.bx > 0xFFFFu ? 0xFFFFu : l.bx);
    r.block_y = static_cast<std::uint16_t>(l.by > 0xFFFFu ? 0xFFFFu : l.by);
    r.block_z = l.bz;
    r.smem_dynamic = l.smem;
    r.stream = reinterpret_cast<std::uintptr_t>(l.stream);
    r.arg = l.graph;
    r.time_ns = 0;
}

// Posts one launch record; false when it was dropped (the ring stayed full).
__attribute__((always_inline)) inline bool post(Endpoint& ep, es::RecordType type, const Launch& l,
                                                std::uint32_t func_index, std::uint64_t& pos) {
    es::Record* r = claim_record(ep, pos);
    if (r == nullptr) return false;
    fill_launch(r->body, type, l, func_index);
    es::ring_publish(*r, pos);
    return true;
}

inline std::uint32_t launch_function_index(const Launch& l) {
    return l.func != nullptr ? function_index(l.func) : es::kGraphFunc;
}

void post_complete(int endpoint, std::uint64_t seq) {
    Endpoint& ep = g_endpoints[endpoint];
    if (ep.ch == nullptr || ep.dead.load(std::memory_order_relaxed)) return;
    std::uint64_t pos = 0;
    // A lost completion would hold the kernel's share until it expires: wait for room like a
    // launch does (bounded; claim_when_full counts the record as dropped).
    es::Record* r = claim_record(ep, pos);
    if (r == nullptr) return;
    r->body.type = es::RecordType::complete;
    r->body.entry = es::Entry::none;
    r->body.flags = 0;
    r->body.func_index = es::kUnknownFunc;
    r->body.arg = seq;
    r->body.time_ns = es::monotonic_ns();
    es::ring_publish(*r, pos);
    // Held launches may be waiting for this capacity: wake a sleeping daemon (host-callback
    // thread, not the launch path).
    ring_doorbell(ep);
}

// Host function queued behind an admitted kernel: its completion frees the kernel's share.
void on_kernel_complete(void* data) {
    const auto v = reinterpret_cast<std::uintptr_t>(data);
    post_complete(static_cast<int>(v >> 56), v & ((std::uint64_t{1} << 56) - 1));
}

// Waits until request `seq` is granted. False when the daemon died or the deadline passed.
bool wait_grant(Endpoint& ep, std::uint64_t seq, std::uint64_t deadline) {
    const es::ReplyPage& rp = *ep.reply;
    const std::uint64_t start = es::monotonic_ns();
    // Grants usually come within microseconds: spin briefly, then keep polling but yield the
    // CPU (the daemon may need it on a busy node), then sleep on the grant futex.
    for (int i = 0;; ++i) {
        if (rp.granted_upto.load(std::memory_order_acquire) >= seq) return true;
        if ((i & 63) == 63) {
            const std::uint64_t waited = es::monotonic_ns() - start;
            if (waited > 50000) break;
            if (waited > 20000) sched_yield();
        }
        es::cpu_relax();
    }
    ep.ch->header.waiters.fetch_add(1, std::memory_order_seq_cst);
    bool ok = true;
    for (;;) {
        const std::uint32_t word = rp.grant_futex.load(std::memory_order_acquire);
        if (rp.granted_upto.load(std::memory_order_acquire) >= seq) break;
        es::futex_wait(&rp.grant_futex, word, 2000000);
        const std::uint64_t now = es::monotonic_ns();
        if (!daemon_alive(ep, now)) {
            mark_dead(ep);
            ok = false;
            break;
        }
        if (now > deadline) {
            fail_open(
                "a launch waited for the kernel scheduler longer than its limit "
                "(EXPLSCHED_KSCHED_MAX_WAIT_MS, at most 1000); letting it through");
            ok = false;
            break;
        }
    }
    ep.ch->header.waiters.fetch_sub(1, std::memory_order_relaxed);
    return ok;
}

es_CUstream callback_stream(const Launch& l) {
    if (l.stream == nullptr && l.ptds) return cu::stream_per_thread();
    return l.stream;
}

template <typename Call>
__attribute__((noinline)) es_CUresult enforce_launch(const Launch& launch, Call&& call) {
    Endpoint* ep = endpoint_for_launch();
    if (ep == nullptr) return call();
    const std::uint64_t deadline = es::monotonic_ns() + g_max_wait_ns;
    Launch l = launch;
    const es_CUstream qs = callback_stream(l);
    // A launch into a capturing stream only records a graph node: nothing runs now.
    es_CUstreamCaptureStatus capture = cu::kStreamCaptureStatusNone;
    auto capturing = real_fn<StreamIsCapturing>(kId_cuStreamIsCapturing);
    if (capturing != nullptr && capturing(qs, &capture) == cu::kSuccess &&
        capture != cu::kStreamCaptureStatusNone) {
        l.flags |= es::kFlagCaptured;
        std::uint64_t pos = 0;
        post(*ep, es::RecordType::launch, l, launch_function_index(l), pos);
        return call();
    }
    auto host_func = real_fn<LaunchHostFunc>(kId_cuLaunchHostFunc);
    const bool bypass = ep->reply->bypass.load(std::memory_order_relaxed) != 0;
    const bool track = g_track && host_func != nullptr && (!bypass || t_track_count++ % g_track_every == 0);
    if (!track) l.flags |= es::kFlagUntracked;
    std::uint64_t pos = 0;
    if (!post(*ep, bypass ? es::RecordType::started : es::RecordType::request, l, launch_function_index(l),
              pos)) {
        return call();  // ring full: this launch is not scheduled (counted as dropped)
    }
    if (!bypass) {
        ring_doorbell(*ep);
        (void)wait_grant(*ep, pos + 1, deadline);
    }
    const es_CUresult r = call();
    if (!track) return r;
    const auto index = static_cast<std::uint64_t>(ep - g_endpoints);
    if (r != cu::kSuccess || host_func(qs, on_kernel_complete,
                                       reinterpret_cast<void*>((index << 56) | (pos + 1))) != cu::kSuccess) {
        post_complete(static_cast<int>(index), pos + 1);
    }
    return r;
}

// Connects to one daemon and takes its channel. False (and a warning) when it cannot.
bool attach_endpoint(Endpoint& ep, const char* path, int device, const char* job, std::uint64_t deadline) {
    es::HelloMsg hello{};
    es::init_header(hello.h, es::MsgType::hello);
    hello.mode = g_mode;
    es::copy_field(hello.job, sizeof hello.job, job != nullptr ? job : "");
    auto dev_attr = real_fn<DeviceGetAttribute>(kId_cuDeviceGetAttribute);
    auto attr = [&](es_CUdevice_attribute a) -> std::uint32_t {
        int v = 0;
        if (dev_attr == nullptr || dev_attr(&v, a, device) != cu::kSuccess || v < 0) return 0;
        return static_cast<std::uint32_t>(v);
    };
    hello.sm_count = attr(cu::kDevMultiprocessorCount);
    hello.max_threads_per_sm = attr(cu::kDevMaxThreadsPerMultiprocessor);
    hello.max_regs_per_sm = attr(cu::kDevMaxRegistersPerMultiprocessor);
    hello.max_smem_per_sm = attr(cu::kDevMaxSharedMemoryPerMultiprocessor);
    hello.max_blocks_per_sm = attr(cu::kDevMaxBlocksPerMultiprocessor);
    explsched::Fd sock;
    std::string error;
    es::ClientAttach got;
    if (!es::client_begin(path, hello, sock, error) || !es::client_finish(sock.get(), deadline, got, error)) {
        fail_open("kernel scheduler endpoint unusable, its launches go straight through", error.c_str());
        return false;
    }
    const auto* status = got.status.as<es::StatusFile>();
    if (!es::heartbeat_alive(status->header.heartbeat_ns.load(std::memory_order_relaxed),
                             es::monotonic_ns())) {
        fail_open("kernel scheduler daemon is not running; launches go straight through", path);
        return false;
    }
    ep.status = static_cast<const es::StatusFile*>(got.status.release());
    ep.reply = static_cast<const es::ReplyPage*>(got.reply.release());
    ep.ch = static_cast<es::Channel*>(got.channel.release());
    ep.sock = sock.release();
    return true;
}

// Attaches to every endpoint. Runs once, and again in a forked child.
void register_client() {
    const char* mode = getenv("EXPLSCHED_KSCHED_MODE");
    std::uint32_t state = kPassthrough;
    if (mode != nullptr && std::strcmp(mode, "observe") == 0)
        state = kObserve;
    else if (mode != nullptr && std::strcmp(mode, "enforce") == 0)
        state = kEnforce;
    else if (mode != nullptr && *mode != '\0' && std::strcmp(mode, "off") != 0)
        warn_once(kWarnBadEnv,
                  "EXPLSCHED_KSCHED_MODE is not off, observe or enforce; kernel scheduling is off", mode);
    const char* endpoints = getenv("EXPLSCHED_KSCHED_ENDPOINTS");
    if (state == kPassthrough || endpoints == nullptr || *endpoints == '\0') {
        g_state.store(kPassthrough, std::memory_order_release);
        return;
    }
    g_mode = state == kEnforce ? es::ClientMode::enforce : es::ClientMode::observe;
    if (const char* track = getenv("EXPLSCHED_KSCHED_TRACK"); track != nullptr) {
        const unsigned long every = std::strtoul(track, nullptr, 10);
        g_track = every != 0;
        g_track_every = every == 0 ? 1 : static_cast<std::uint32_t>(std::min(every, 1UL << 20));
    }
    if (const char* w = getenv("EXPLSCHED_KSCHED_MAX_WAIT_MS"); w != nullptr) {
        const unsigned long long ms = std::strtoull(w, nullptr, 10);
        g_max_wait_ns = ms == 0 ? kMaxWaitNs : std::min<std::uint64_t>(ms * 1000000ULL, kMaxWaitNs);
    }
    // The step the process says it runs in. It buys no priority by itself: the daemon checks it
    // against the step registered by slurmstepd and this process's own credentials.
    const char* job = getenv("EXPLSCHED_KSCHED_JOB");

    const std::uint64_t deadline = es::monotonic_ns() + kAttachBudgetNs;
    int count = 0;
    int usable = 0;
    const char* cursor = endpoints;
    while (*cursor != '\0' && count < kMaxEndpoints) {
        const char* end = std::strchr(cursor, ':');
        const std::size_t len = end != nullptr ? static_cast<std::size_t>(end - cursor) : std::strlen(cursor);
        char path[4096];
        es::copy_field(path, std::min(len + 1, sizeof path), cursor);
        Endpoint& ep = g_endpoints[count];
        ep.dead.store(false, std::memory_order_relaxed);
        if (attach_endpoint(ep, path, count, job, deadline)) ++usable;
        ++count;
        cursor = end != nullptr ? end + 1 : cursor + len;
    }
    g_endpoint_count = count;
    g_state.store(usable > 0 ? state : kPassthrough, std::memory_order_release);
}

void atfork_prepare() {
    g_register_mutex.lock();
    g_func_mutex.lock();
}
void atfork_parent() {
    g_func_mutex.unlock();
    g_register_mutex.unlock();
}
void atfork_child() {
    g_func_mutex.unlock();
    g_register_mutex.unlock();
    // The child is a new client: it must not post to the parent's ring. Its function table
    // starts empty, so forget the cached indexes too.
    for (CacheEntry& e : g_cache) e.key.store(0, std::memory_order_relaxed);
    g_func_next = 0;
    // Its parent's connections are not its own: closing them keeps the daemon's view of who is
    // alive right (the parent's hang-up is seen when the parent exits).
    for (Endpoint& ep : g_endpoints) {
        if (ep.sock >= 0) close(ep.sock);
        ep.sock = -1;
        ep.ch = nullptr;
    }
    const std::uint32_t st = g_state.load(std::memory_order_relaxed);
    if (st == kObserve || st == kEnforce) g_state.store(kReregister, std::memory_order_release);
}

std::once_flag g_start_once;

__attribute__((noinline)) void start() {
    const SlowPathGuard guard;
    if (!guard.entered) return;  // re-entered from the driver: the caller passes through
    resolve_real_symbols();
    std::call_once(g_start_once, [] { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); });
    std::lock_guard<std::mutex> lock(g_register_mutex);
    const std::uint32_t st = g_state.load(std::memory_order_acquire);
    if (st == kUninit || st == kReregister) register_client();
}

// Observe mode's per-launch path, inlined into each exported hook: one acquire load of the
// process state (a plain load on x86) and a branch, a function-cache probe, one ring record.
// Returns false when the launch must take the slow path (any other state). The hook then
// tail-calls the driver, so the driver sees the application's own stack arguments.
__attribute__((always_inline)) inline bool observe_fast(es::Entry entry, std::uint16_t flags, es_CUfunction f,
                                                        std::uint64_t graph, unsigned gx, unsigned gy,
                                                        unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                                        unsigned smem, es_CUstream stream) {
    if (g_state.load(std::memory_order_acquire) != kObserve) return false;
    Endpoint* ep = endpoint_for_launch();
    if (ep == nullptr) return true;  // this device is not scheduled: launch directly
    std::uint32_t index = es::kGraphFunc;
    if (f != nullptr && !cache_find(reinterpret_cast<std::uintptr_t>(f), index)) index = register_function(f);
    const Launch l{entry, false, flags, f, graph, gx, gy, gz, bx, by, bz, smem, stream};
    std::uint64_t pos = 0;
    post(*ep, es::RecordType::launch, l, index, pos);  // a dropped record is counted; launch anyway
    return true;
}

// Every state but the observe fast path: first launch (start), enforce, pass-through.
template <typename Call>
__attribute__((noinline)) es_CUresult dispatch_slow(const Launch& l, Call&& call) {
    std::uint32_t st = g_state.load(std::memory_order_acquire);
    if (st == kUninit || st == kReregister) {
        start();
        st = g_state.load(std::memory_order_acquire);
    }
    if (st == kObserve) {
        if (Endpoint* ep = endpoint_for_launch()) {
            std::uint64_t pos = 0;
            post(*ep, es::RecordType::launch, l, launch_function_index(l), pos);
        }
        return call();
    }
    if (st == kEnforce) return enforce_launch(l, call);
    return call();
}

es_CUresult missing_driver() {
    warn_once(kWarnNoDriver, "CUDA driver entry point not found");
    return cu::kErrorNotInitialized;
}

// One wrapper template per hooks.def kind.
template <typename Fn>
inline Fn real_or_resolve(int id) {
    Fn f = real_fn<Fn>(id);
    if (f == nullptr) {
        resolve_real_symbols();
        f = real_fn<Fn>(id);
    }
    return f;
}

}  // namespace
}  // namespace explsched::intercept

namespace ei = explsched::intercept;

namespace {

using ei::real_or_resolve;

template <int Id>
es_CUresult hook_init(es::Entry, bool, unsigned int flags) {
    auto f = real_or_resolve<decltype(&::cuInit)>(Id);
    return f != nullptr ? f(flags) : ei::missing_driver();
}

template <int Id>
es_CUresult hook_procaddr(es::Entry, bool, const char* symbol, void** pfn, int version, es_cuuint64_t flags) {
    auto f = real_or_resolve<decltype(&::cuGetProcAddress)>(Id);
    if (f == nullptr) return ei::missing_driver();
    const es_CUresult r = f(symbol, pfn, version, flags);
    if (r == cu::kSuccess && pfn != nullptr) *pfn = ei::map_driver_pointer(symbol, *pfn, flags);
    return r;
}

template <int Id>
es_CUresult hook_procaddr_v2(es::Entry, bool, const char* symbol, void** pfn, int version,
                             es_cuuint64_t flags, es_CUdriverProcAddressQueryResult* status) {
    auto f = real_or_resolve<decltype(&::cuGetProcAddress_v2)>(Id);
    if (f == nullptr) return ei::missing_driver();
    const es_CUresult r = f(symbol, pfn, version, flags, status);
    if (r == cu::kSuccess && pfn != nullptr) *pfn = ei::map_driver_pointer(symbol, *pfn, flags);
    return r;
}

template <int Id>
__attribute__((noinline)) es_CUresult launch_slow(es::Entry entry, bool ptds, es_CUfunction f, unsigned gx,
                                                  unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                                  unsigned bz, unsigned smem, es_CUstream stream,
                                                  void** params, void** extra) {
    auto real = real_or_resolve<decltype(&::cuLaunchKernel)>(Id);
    if (real == nullptr) return ei::missing_driver();
    const ei::Launch l{entry, ptds, 0, f, 0, gx, gy, gz, bx, by, bz, smem, stream};
    return ei::dispatch_slow(l, [&] { return real(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra); });
}

template <int Id>
__attribute__((always_inline)) inline es_CUresult hook_launch(es::Entry entry, bool ptds, es_CUfunction f,
                                                              unsigned gx, unsigned gy, unsigned gz,
                                                              unsigned bx, unsigned by, unsigned bz,
                                                              unsigned smem, es_CUstream stream,
                                                              void** params, void** extra) {
    auto real = ei::real_fn<decltype(&::cuLaunchKernel)>(Id);
    if (real != nullptr && ei::observe_fast(entry, 0, f, 0, gx, gy, gz, bx, by, bz, smem, stream))
        return real(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
    return launch_slow<Id>(entry, ptds, f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
}

template <int Id>
__attribute__((noinline)) es_CUresult launch_coop_slow(es::Entry entry, bool ptds, es_CUfunction f,
                                                       unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                       unsigned by, unsigned bz, unsigned smem,
                                                       es_CUstream stream, void** params) {
    auto real = real_or_resolve<decltype(&::cuLaunchCooperativeKernel)>(Id);
    if (real == nullptr) return ei::missing_driver();
    const ei::Launch l{entry, ptds, es::kFlagCooperative, f, 0, gx, gy, gz, bx, by, bz, smem, stream};
    return ei::dispatch_slow(l, [&] { return real(f, gx, gy, gz, bx, by, bz, smem, stream, params); });
}

template <int Id>
__attribute__((always_inline)) inline es_CUresult hook_launch_coop(es::Entry entry, bool ptds,
                                                                   es_CUfunction f, unsigned gx, unsigned gy,
                                                                   unsigned gz, unsigned bx, unsigned by,
                                                                   unsigned bz, unsigned smem,
                                                                   es_CUstream stream, void** params) {
    auto real = ei::real_fn<decltype(&::cuLaunchCooperativeKernel)>(Id);
    if (real != nullptr &&
        ei::observe_fast(entry, es::kFlagCooperative, f, 0, gx, gy, gz, bx, by, bz, smem, stream))
        return real(f, gx, gy, gz, bx, by, bz, smem, stream, params);
    return launch_coop_slow<Id>(entry, ptds, f, gx, gy, gz, bx, by, bz, smem, stream, params);
}

std::uint16_t launch_ex_flags(const es_CUlaunchConfig* c) {
    std::uint16_t flags = 0;
    for (unsigned i = 0; c->attrs != nullptr && i < c->numAttrs; ++i) {
        if (c->attrs[i].id == cu::kLaunchAttributeCooperative && c->attrs[i].value.cooperative != 0)
            flags |= es::kFlagCooperative;
    }
    return flags;
}

template <int Id>
__attribute__((noinline)) es_CUresult launch_ex_slow(es::Entry entry, bool ptds, const es_CUlaunchConfig* c,
                                                     es_CUfunction f, void** params, void** extra) {
    auto real = real_or_resolve<decltype(&::cuLaunchKernelEx)>(Id);
    if (real == nullptr) return ei::missing_driver();
    if (c == nullptr) return real(c, f, params, extra);  // let the driver report the error
    const ei::Launch l{entry,
                       ptds,
                       launch_ex_flags(c),
                       f,
                       0,
                       c->gridDimX,
                       c->gridDimY,
                       c->gridDimZ,
                       c->blockDimX,
                       c->blockDimY,
                       c->blockDimZ,
                       c->sharedMemBytes,
                       c->hStream};
    return ei::dispatch_slow(l, [&] { return real(c, f, params, extra); });
}

template <int Id>
__attribute__((always_inline)) inline es_CUresult hook_launch_ex(es::Entry entry, bool ptds,
                                                                 const es_CUlaunchConfig* c, es_CUfunction f,
                                                                 void** params, void** extra) {
    auto real = ei::real_fn<decltype(&::cuLaunchKernelEx)>(Id);
    if (real != nullptr && c != nullptr &&
        ei::observe_fast(entry, launch_ex_flags(c), f, 0, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
                         c->blockDimY, c->blockDimZ, c->sharedMemBytes, c->hStream))
        return real(c, f, params, extra);
    return launch_ex_slow<Id>(entry, ptds, c, f, params, extra);
}

template <int Id>
__attribute__((noinline)) es_CUresult graph_slow(es::Entry entry, bool ptds, es_CUgraphExec graph,
                                                 es_CUstream stream) {
    auto real = real_or_resolve<decltype(&::cuGraphLaunch)>(Id);
    if (real == nullptr) return ei::missing_driver();
    const ei::Launch l{entry, ptds, 0, nullptr, reinterpret_cast<std::uintptr_t>(graph), 1, 1, 1, 1,
                       1,     1,    0, stream};
    return ei::dispatch_slow(l, [&] { return real(graph, stream); });
}

template <int Id>
__attribute__((always_inline)) inline es_CUresult hook_graph(es::Entry entry, bool ptds, es_CUgraphExec graph,
                                                             es_CUstream stream) {
    auto real = ei::real_fn<decltype(&::cuGraphLaunch)>(Id);
    if (real != nullptr && ei::observe_fast(entry, 0, nullptr, reinterpret_cast<std::uintptr_t>(graph), 1, 1,
                                            1, 1, 1, 1, 0, stream))
        return real(graph, stream);
    return graph_slow<Id>(entry, ptds, graph, stream);
}

}  // namespace

#define ES_EXPAND(...) __VA_ARGS__
#define ES_HOOK(symbol, kind, entry, ptds, params, args)                                     \
    extern "C" es_CUresult symbol params {                                                   \
        return hook_##kind<ei::kId_##symbol>(es::Entry::entry, (ptds) != 0, ES_EXPAND args); \
    }
#define ES_REAL(symbol, params)
#include "kernel_sched/hooks.def"
#undef ES_HOOK
#undef ES_REAL
