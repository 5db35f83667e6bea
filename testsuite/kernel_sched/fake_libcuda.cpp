// FAKE CUDA driver (built as fakecuda/libcuda.so.1) for testing the intercept on machines
// without a GPU, which is what CI has. It is NOT a CUDA implementation: it implements exactly
// the driver entry points the intercept hooks or calls, plus cuGetProcAddress, with a toy
// execution model:
//   - a "kernel" is a handle made by fakecuda_function(name, regs, smem, threads, duration);
//   - each stream runs its kernels one after another, each for its duration in wall time;
//   - cuLaunchHostFunc runs the callback on a driver thread when the stream reaches it;
//   - cuStreamSynchronize / cuCtxSynchronize wait for that.
// Every launch is counted per entry point and, if FAKECUDA_LOG names a file, appended to it as
//   launch <pid> <entry point> <kernel name> <monotonic ns>
// so tests can compare what the driver saw with what the scheduler saw. FAKECUDA_FAST=1 makes
// launches only count (for overhead benchmarks). FAKECUDA_SMS sets the SM count (default 132).
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kernel_sched/cuda_abi.hpp"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct FakeFunc {
    char name[128];
    int regs;
    int smem;
    int max_threads;
    std::uint64_t duration_ns;
};
struct FakeGraph {
    std::uint64_t duration_ns;
};

enum EntryIndex {
    kLaunchKernel,
    kLaunchKernelPtsz,
    kLaunchKernelEx,
    kLaunchKernelExPtsz,
    kLaunchCoop,
    kLaunchCoopPtsz,
    kGraphLaunch,
    kGraphLaunchPtsz,
    kEntries
};
const char* const kEntryNames[kEntries] = {
    "cuLaunchKernel",        "cuLaunchKernel_ptsz",       "cuLaunchKernelEx",
    "cuLaunchKernelEx_ptsz", "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz",
    "cuGraphLaunch",         "cuGraphLaunch_ptsz"};

std::atomic<std::uint64_t> g_counts[kEntries];
std::atomic<bool> g_initialized{false};
std::atomic<int> g_capturing_streams{0};  // lets cuStreamIsCapturing skip the lock when none
thread_local int t_device = 0;

std::uint64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

bool fast_mode() {
    static const bool fast = [] {
        const char* f = getenv("FAKECUDA_FAST");
        return f != nullptr && std::strcmp(f, "1") == 0;
    }();
    return fast;
}

// The toy GPU: per-stream busy-until times and a queue of host callbacks.
struct Callback {
    std::uint64_t at;
    es_CUhostFn fn;
    void* data;
    std::uintptr_t stream;
};
struct Gpu {
    std::mutex mu;
    std::condition_variable cv;
    std::map<std::uintptr_t, std::uint64_t> busy_until;
    std::map<std::uintptr_t, int> pending;
    std::multimap<std::uint64_t, Callback> callbacks;
    std::map<std::uintptr_t, bool> capturing;
    bool worker_started = false;
};
Gpu* g_gpu = new Gpu;  // never destroyed: callbacks may run while the process exits

void worker() {
    std::unique_lock<std::mutex> lock(g_gpu->mu);
    for (;;) {
        if (g_gpu->callbacks.empty()) {
            g_gpu->cv.wait(lock);
            continue;
        }
        const std::uint64_t now = now_ns();
        auto first = g_gpu->callbacks.begin();
        if (first->first > now) {
            g_gpu->cv.wait_for(lock, std::chrono::nanoseconds(first->first - now));
            continue;
        }
        const Callback cb = first->second;
        g_gpu->callbacks.erase(first);
        lock.unlock();
        cb.fn(cb.data);
        lock.lock();
        g_gpu->pending[cb.stream] -= 1;
        g_gpu->cv.notify_all();
    }
}

void ensure_worker() {
    if (!g_gpu->worker_started) {
        g_gpu->worker_started = true;
        std::thread(worker).detach();
    }
}

void atfork_prepare() { g_gpu->mu.lock(); }
void atfork_parent() { g_gpu->mu.unlock(); }
void atfork_child() {
    // The child has no driver thread and its own (empty) device state. Release the parent's lock
    // first (this thread took it in prepare): a mutex abandoned while held reads, to
    // ThreadSanitizer, as held forever, and every later lock in the child as an inversion.
    g_gpu->mu.unlock();
    g_gpu = new Gpu;
}
__attribute__((constructor)) void install_atfork() {
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

void log_launch(EntryIndex entry, const char* name) {
    static int fd = [] {
        const char* path = getenv("FAKECUDA_LOG");
        return path != nullptr && *path != '\0' ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
                                                : -1;
    }();
    if (fd < 0) return;
    char line[256];
    const int n = std::snprintf(line, sizeof line, "launch %d %s %s %llu\n", static_cast<int>(getpid()),
                                kEntryNames[entry], name, static_cast<unsigned long long>(now_ns()));
    if (n > 0) {
        ssize_t ignored = write(fd, line, static_cast<std::size_t>(std::min<int>(n, sizeof line - 1)));
        (void)ignored;
    }
}

es_CUresult launch(EntryIndex entry, const char* name, std::uint64_t duration_ns, es_CUstream stream) {
    g_counts[entry].fetch_add(1, std::memory_order_relaxed);
    if (fast_mode()) return explsched::cuda::kSuccess;
    if (!g_initialized.load()) return explsched::cuda::kErrorNotInitialized;
    log_launch(entry, name);
    std::lock_guard<std::mutex> lock(g_gpu->mu);
    const auto key = reinterpret_cast<std::uintptr_t>(stream);
    std::uint64_t& busy = g_gpu->busy_until[key];
    busy = std::max(busy, now_ns()) + duration_ns;
    return explsched::cuda::kSuccess;
}

es_CUresult launch_func(EntryIndex entry, es_CUfunction f, es_CUstream stream) {
    if (f == nullptr) return explsched::cuda::kErrorInvalidHandle;
    const auto* fn = reinterpret_cast<const FakeFunc*>(f);
    return launch(entry, fn->name, fn->duration_ns, stream);
}

}  // namespace

// ---- helpers for test programs (not part of the CUDA API) ----
FAKE_EXPORT es_CUfunction fakecuda_function(const char* name, int regs, int static_smem, int max_threads,
                                            unsigned long long duration_ns) {
    auto* f = new FakeFunc{};
    std::snprintf(f->name, sizeof f->name, "%s", name);
    f->regs = regs;
    f->smem = static_smem;
    f->max_threads = max_threads;
    f->duration_ns = duration_ns;
    return reinterpret_cast<es_CUfunction>(f);
}
FAKE_EXPORT es_CUgraphExec fakecuda_graph(unsigned long long duration_ns) {
    return reinterpret_cast<es_CUgraphExec>(new FakeGraph{duration_ns});
}
FAKE_EXPORT unsigned long long fakecuda_launches(int entry) {
    if (entry >= 0 && entry < kEntries) return g_counts[entry].load();
    unsigned long long total = 0;
    for (auto& c : g_counts) total += c.load();
    return total;
}
FAKE_EXPORT const char* fakecuda_entry_name(int entry) {
    return entry >= 0 && entry < kEntries ? kEntryNames[entry] : "?";
}
FAKE_EXPORT void fakecuda_set_capturing(es_CUstream stream, int on) {
    std::lock_guard<std::mutex> lock(g_gpu->mu);
    bool& flag = g_gpu->capturing[reinterpret_cast<std::uintptr_t>(stream)];
    if (flag != (on != 0)) g_capturing_streams.fetch_add(on != 0 ? 1 : -1);
    flag = on != 0;
}
FAKE_EXPORT void fakecuda_set_device(int device) { t_device = device; }

// ---- the CUDA driver API subset ----
FAKE_EXPORT es_CUresult cuInit(unsigned int flags) {
    if (flags != 0) return explsched::cuda::kErrorInvalidValue;
    g_initialized.store(true);
    return explsched::cuda::kSuccess;
}
FAKE_EXPORT es_CUresult cuDriverGetVersion(int* version) {
    if (version == nullptr) return explsched::cuda::kErrorInvalidValue;
    *version = 12040;
    return explsched::cuda::kSuccess;
}

FAKE_EXPORT es_CUresult cuLaunchKernel(es_CUfunction f, unsigned, unsigned, unsigned, unsigned, unsigned,
                                       unsigned, unsigned, es_CUstream stream, void**, void**) {
    return launch_func(kLaunchKernel, f, stream);
}
FAKE_EXPORT es_CUresult cuLaunchKernel_ptsz(es_CUfunction f, unsigned, unsigned, unsigned, unsigned, unsigned,
                                            unsigned, unsigned, es_CUstream stream, void**, void**) {
    return launch_func(kLaunchKernelPtsz, f, stream);
}
FAKE_EXPORT es_CUresult cuLaunchKernelEx(const es_CUlaunchConfig* c, es_CUfunction f, void**, void**) {
    if (c == nullptr) return explsched::cuda::kErrorInvalidValue;
    return launch_func(kLaunchKernelEx, f, c->hStream);
}
FAKE_EXPORT es_CUresult cuLaunchKernelEx_ptsz(const es_CUlaunchConfig* c, es_CUfunction f, void**, void**) {
    if (c == nullptr) return explsched::cuda::kErrorInvalidValue;
    return launch_func(kLaunchKernelExPtsz, f, c->hStream);
}
FAKE_EXPORT es_CUresult cuLaunchCooperativeKernel(es_CUfunction f, unsigned, unsigned, unsigned, unsigned,
                                                  unsigned, unsigned, unsigned, es_CUstream stream, void**) {
    return launch_func(kLaunchCoop, f, stream);
}
FAKE_EXPORT es_CUresult cuLaunchCooperativeKernel_ptsz(es_CUfunction f, unsigned, unsigned, unsigned,
                                                       unsigned, unsigned, unsigned, unsigned,
                                                       es_CUstream stream, void**) {
    return launch_func(kLaunchCoopPtsz, f, stream);
}
FAKE_EXPORT es_CUresult cuGraphLaunch(es_CUgraphExec g, es_CUstream stream) {
    if (g == nullptr) return explsched::cuda::kErrorInvalidHandle;
    return launch(kGraphLaunch, "graph", reinterpret_cast<FakeGraph*>(g)->duration_ns, stream);
}
FAKE_EXPORT es_CUresult cuGraphLaunch_ptsz(es_CUgraphExec g, es_CUstream stream) {
    if (g == nullptr) return explsched::cuda::kErrorInvalidHandle;
    return launch(kGraphLaunchPtsz, "graph", reinterpret_cast<FakeGraph*>(g)->duration_ns, stream);
}

FAKE_EXPORT es_CUresult cuFuncGetName(const char** name, es_CUfunction f) {
    if (name == nullptr || f == nullptr) return explsched::cuda::kErrorInvalidValue;
    *name = reinterpret_cast<const FakeFunc*>(f)->name;
    return explsched::cuda::kSuccess;
}
FAKE_EXPORT es_CUresult cuFuncGetAttribute(int* value, es_CUfunction_attribute a, es_CUfunction f) {
    if (value == nullptr || f == nullptr) return explsched::cuda::kErrorInvalidValue;
    const auto* fn = reinterpret_cast<const FakeFunc*>(f);
    if (a == explsched::cuda::kFuncNumRegs)
        *value = fn->regs;
    else if (a == explsched::cuda::kFuncSharedSizeBytes)
        *value = fn->smem;
    else if (a == explsched::cuda::kFuncMaxThreadsPerBlock)
        *value = fn->max_threads;
    else
        return explsched::cuda::kErrorNotSupported;
    return explsched::cuda::kSuccess;
}
FAKE_EXPORT es_CUresult cuDeviceGetAttribute(int* value, es_CUdevice_attribute a, es_CUdevice dev) {
    if (value == nullptr || dev < 0) return explsched::cuda::kErrorInvalidValue;
    if (!g_initialized.load()) return explsched::cuda::kErrorNotInitialized;
    switch (a) {
        case explsched::cuda::kDevMultiprocessorCount: {
            const char* sms = getenv("FAKECUDA_SMS");
            *value = sms != nullptr ? std::atoi(sms) : 132;
            break;
        }
        case explsched::cuda::kDevMaxThreadsPerMultiprocessor:
            *value = 2048;
            break;
        case explsched::cuda::kDevMaxSharedMemoryPerMultiprocessor:
            *value = 233472;
            break;
        case explsched::cuda::kDevMaxRegistersPerMultiprocessor:
            *value = 65536;
            break;
        case explsched::cuda::kDevMaxBlocksPerMultiprocessor:
            *value = 32;
            break;
        default:
            return explsched::cuda::kErrorInvalidValue;
    }
    return explsched::cuda::kSuccess;
}
FAKE_EXPORT es_CUresult cuCtxGetDevice(es_CUdevice* device) {
    if (device == nullptr) return explsched::cuda::kErrorInvalidValue;
    *device = t_device;
    return explsched::cuda::kSuccess;
}
FAKE_EXPORT es_CUresult cuStreamIsCapturing(es_CUstream stream, es_CUstreamCaptureStatus* status) {
    if (status == nullptr) return explsched::cuda::kErrorInvalidValue;
    if (g_capturing_streams.load(std::memory_order_relaxed) == 0) {
        *status = explsched::cuda::kStreamCaptureStatusNone;
        return explsched::cuda::kSuccess;
    }
    std::lock_guard<std::mutex> lock(g_gpu->mu);
    auto it = g_gpu->capturing.find(reinterpret_cast<std::uintptr_t>(stream));
    *status = it != g_gpu->capturing.end() && it->second ? 1 : 0;
    return explsched::cuda::kSuccess;
}
FAKE_EXPORT es_CUresult cuLaunchHostFunc(es_CUstream stream, es_CUhostFn fn, void* data) {
    if (fn == nullptr) return explsched::cuda::kErrorInvalidValue;
    std::lock_guard<std::mutex> lock(g_gpu->mu);
    ensure_worker();
    const auto key = reinterpret_cast<std::uintptr_t>(stream);
    std::uint64_t& busy = g_gpu->busy_until[key];
    busy = std::max(busy, now_ns());
    g_gpu->callbacks.emplace(busy, Callback{busy, fn, data, key});
    g_gpu->pending[key] += 1;
    g_gpu->cv.notify_all();
    return explsched::cuda::kSuccess;
}

namespace {
void wait_streams(bool all, std::uintptr_t key) {
    std::unique_lock<std::mutex> lock(g_gpu->mu);
    for (;;) {
        std::uint64_t until = 0;
        int pending = 0;
        for (const auto& [s, t] : g_gpu->busy_until)
            if (all || s == key) until = std::max(until, t);
        for (const auto& [s, n] : g_gpu->pending)
            if (all || s == key) pending += n;
        const std::uint64_t now = now_ns();
        if (until <= now && pending == 0) return;
        g_gpu->cv.wait_for(lock, std::chrono::nanoseconds(until > now ? until - now : 100000));
    }
}
}  // namespace

FAKE_EXPORT es_CUresult cuStreamSynchronize(es_CUstream stream) {
    wait_streams(false, reinterpret_cast<std::uintptr_t>(stream));
    return explsched::cuda::kSuccess;
}
FAKE_EXPORT es_CUresult cuCtxSynchronize() {
    wait_streams(true, 0);
    return explsched::cuda::kSuccess;
}

// cuGetProcAddress as the CUDA 12 driver answers it: the per-thread-default-stream flag picks
// the _ptsz variant, and entry points newer than the requested version are not found.
namespace {
struct ProcEntry {
    const char* name;
    void* legacy;
    void* ptsz;
    int since;
};
es_CUresult proc_address(const char* symbol, void** pfn, int version, es_cuuint64_t flags,
                         es_CUdriverProcAddressQueryResult* status);
}  // namespace

FAKE_EXPORT es_CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, es_cuuint64_t flags) {
    return proc_address(symbol, pfn, version, flags, nullptr);
}
FAKE_EXPORT es_CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, es_cuuint64_t flags,
                                            es_CUdriverProcAddressQueryResult* status) {
    return proc_address(symbol, pfn, version, flags, status);
}
// The address the fake itself would hand out for a symbol (tests check they get a hook instead).
FAKE_EXPORT void* fakecuda_real_address(const char* symbol);

namespace {
const ProcEntry kProcs[] = {
    {"cuInit", reinterpret_cast<void*>(&cuInit), nullptr, 2000},
    {"cuDriverGetVersion", reinterpret_cast<void*>(&cuDriverGetVersion), nullptr, 2020},
    {"cuLaunchKernel", reinterpret_cast<void*>(&cuLaunchKernel),
     reinterpret_cast<void*>(&cuLaunchKernel_ptsz), 4000},
    {"cuLaunchKernelEx", reinterpret_cast<void*>(&cuLaunchKernelEx),
     reinterpret_cast<void*>(&cuLaunchKernelEx_ptsz), 11060},
    {"cuLaunchCooperativeKernel", reinterpret_cast<void*>(&cuLaunchCooperativeKernel),
     reinterpret_cast<void*>(&cuLaunchCooperativeKernel_ptsz), 9000},
    {"cuGraphLaunch", reinterpret_cast<void*>(&cuGraphLaunch), reinterpret_cast<void*>(&cuGraphLaunch_ptsz),
     10000},
    {"cuFuncGetName", reinterpret_cast<void*>(&cuFuncGetName), nullptr, 12030},
    {"cuFuncGetAttribute", reinterpret_cast<void*>(&cuFuncGetAttribute), nullptr, 2020},
    {"cuDeviceGetAttribute", reinterpret_cast<void*>(&cuDeviceGetAttribute), nullptr, 2000},
    {"cuCtxGetDevice", reinterpret_cast<void*>(&cuCtxGetDevice), nullptr, 2000},
    {"cuStreamIsCapturing", reinterpret_cast<void*>(&cuStreamIsCapturing), nullptr, 10000},
    {"cuLaunchHostFunc", reinterpret_cast<void*>(&cuLaunchHostFunc), nullptr, 10000},
    {"cuStreamSynchronize", reinterpret_cast<void*>(&cuStreamSynchronize), nullptr, 2000},
    {"cuCtxSynchronize", reinterpret_cast<void*>(&cuCtxSynchronize), nullptr, 2000},
};

es_CUresult proc_address(const char* symbol, void** pfn, int version, es_cuuint64_t flags,
                         es_CUdriverProcAddressQueryResult* status) {
    if (symbol == nullptr || pfn == nullptr) return explsched::cuda::kErrorInvalidValue;
    *pfn = nullptr;
    if (status != nullptr) *status = explsched::cuda::kGetProcAddressSymbolNotFound;
    if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
        *pfn = version >= 12000 ? reinterpret_cast<void*>(&cuGetProcAddress_v2)
                                : reinterpret_cast<void*>(&cuGetProcAddress);
    } else {
        for (const ProcEntry& e : kProcs) {
            if (std::strcmp(e.name, symbol) != 0) continue;
            if (version < e.since) {
                if (status != nullptr) *status = 2;  // CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                return explsched::cuda::kErrorNotFound;
            }
            const bool ptds = (flags & explsched::cuda::kGetProcAddressPerThreadDefaultStream) != 0;
            *pfn = ptds && e.ptsz != nullptr ? e.ptsz : e.legacy;
        }
    }
    if (*pfn == nullptr) return explsched::cuda::kErrorNotFound;
    if (status != nullptr) *status = explsched::cuda::kGetProcAddressSuccess;
    return explsched::cuda::kSuccess;
}
}  // namespace

FAKE_EXPORT void* fakecuda_real_address(const char* symbol) {
    void* p = nullptr;
    if (symbol != nullptr && std::strstr(symbol, "_ptsz") != nullptr) {
        std::string base(symbol, std::strstr(symbol, "_ptsz"));
        (void)proc_address(base.c_str(), &p, 13000, explsched::cuda::kGetProcAddressPerThreadDefaultStream,
                           nullptr);
    } else {
        (void)proc_address(symbol, &p, 13000, 0, nullptr);
    }
    return p;
}
