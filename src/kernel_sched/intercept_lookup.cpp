// Real-symbol resolution and the two ways an application obtains driver pointers without the
// dynamic linker binding them to us: dlsym() and cuGetProcAddress(_v2). Both hand out our hook
// for every driver function hooks.def lists, so that each launch passes the intercept exactly
// once however it was reached.
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <dlfcn.h>
#include <unistd.h>

#include "kernel_sched/intercept_internal.hpp"

namespace explsched::intercept {

std::atomic<void*> g_real[kHookCount];

namespace {

constexpr const char* kNames[kHookCount] = {
#define ES_HOOK(symbol, ...) #symbol,
#define ES_REAL(symbol, ...) #symbol,
#include "kernel_sched/hooks.def"
#undef ES_HOOK
#undef ES_REAL
};

void* const kHookAddress[kHookCount] = {
#define ES_HOOK(symbol, ...) reinterpret_cast<void*>(&::symbol),
#define ES_REAL(symbol, ...) nullptr,
#include "kernel_sched/hooks.def"
#undef ES_HOOK
#undef ES_REAL
};

using dlsym_fn = void* (*)(void*, const char*);
dlsym_fn g_real_dlsym = nullptr;  // __atomic builtins: std::atomic's members are instrumented
std::once_flag g_resolve_once;
std::atomic<unsigned> g_warned{0};

// ThreadSanitizer's runtime resolves the functions it intercepts with dlsym(RTLD_NEXT, ...)
// while it initialises, before any instrumented code may run: in the TSan tree the path from our
// dlsym to the C library's is left uninstrumented (it touches only one atomic pointer).
#if defined(__SANITIZE_THREAD__)
#define ES_NO_TSAN __attribute__((no_sanitize_thread))
#else
#define ES_NO_TSAN
#endif

ES_NO_TSAN dlsym_fn real_dlsym() {
    dlsym_fn f = __atomic_load_n(&g_real_dlsym, __ATOMIC_ACQUIRE);
    if (f != nullptr) return f;
    // dlvsym is not overridden, so this cannot recurse into our dlsym. Threads racing here all
    // find and store the same pointer.
    void* p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (p == nullptr) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    __atomic_store_n(&g_real_dlsym, reinterpret_cast<dlsym_fn>(p), __ATOMIC_RELEASE);
    return reinterpret_cast<dlsym_fn>(p);
}

ES_NO_TSAN bool is_driver_symbol(const char* s) {
    return s != nullptr && s[0] == 'c' && s[1] == 'u' && s[2] >= 'A' && s[2] <= 'Z';
}

}  // namespace

void warn_once(unsigned key, const char* message, const char* detail) {
    if ((g_warned.fetch_or(key, std::memory_order_relaxed) & key) != 0) return;
    char buf[512];
    std::size_t n = 0;
    auto put = [&](const char* s) {
        while (s != nullptr && *s != '\0' && n + 2 < sizeof buf) buf[n++] = *s++;
    };
    put("explsched: ");
    put(message);
    if (detail != nullptr) {
        put(": ");
        put(detail);
    }
    buf[n++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, buf, n);
    (void)ignored;
}

void note_real(int id, void* real) {
    if (id < 0 || id >= kHookCount || real == nullptr) return;
    if (real == kHookAddress[id]) return;  // never record ourselves as the driver
    void* expected = nullptr;
    g_real[id].compare_exchange_strong(expected, real, std::memory_order_acq_rel);
}

void* hook_address(int id) { return id >= 0 && id < kHookCount ? kHookAddress[id] : nullptr; }

int exported_id(const char* name) {
    if (name == nullptr) return -1;
    for (int i = 0; i < kHookCount; ++i) {
        if (kHookAddress[i] != nullptr && std::strcmp(kNames[i], name) == 0) return i;
    }
    return -1;
}

void resolve_real_symbols() {
    std::call_once(g_resolve_once, [] {
        dlsym_fn lookup = real_dlsym();
        if (lookup == nullptr) {
            warn_once(kWarnNoDlsym, "cannot find the C library's dlsym; CUDA calls will fail");
            return;
        }
        const char* path = getenv("EXPLSCHED_KSCHED_DRIVER");
        if (path == nullptr || *path == '\0') path = "libcuda.so.1";
        // Our own reference keeps the driver loaded; RTLD_NOLOAD first so an already loaded
        // driver (the usual case) is the one we bind to.
        void* h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        if (h == nullptr) h = dlopen(path, RTLD_NOW);
        if (h == nullptr) {
            warn_once(kWarnNoDriver, "cannot load the CUDA driver", dlerror());
            return;
        }
        for (int i = 0; i < kHookCount; ++i) note_real(i, lookup(h, kNames[i]));
    });
}

void* map_driver_pointer(const char* requested, void* real, es_cuuint64_t flags) {
    if (real == nullptr) return real;
    int id = -1;
    Dl_info info{};
    if (dladdr(real, &info) != 0 && info.dli_sname != nullptr && info.dli_saddr == real)
        id = exported_id(info.dli_sname);
    if (id < 0) {
        for (int i = 0; i < kHookCount && id < 0; ++i) {
            if (kHookAddress[i] != nullptr && g_real[i].load(std::memory_order_relaxed) == real) id = i;
        }
    }
    if (id < 0 && requested != nullptr) {
        // No symbol name for the pointer (a stripped driver): fall back to the requested name;
        // launch entry points kept their signature across versions, cuGetProcAddress did not.
        char name[96];
        const bool ptds = (flags & explsched::cuda::kGetProcAddressPerThreadDefaultStream) != 0;
        std::size_t n = 0;
        for (; requested[n] != '\0' && n + 6 < sizeof name; ++n) name[n] = requested[n];
        name[n] = '\0';
        if (std::strncmp(name, "cuGetProcAddress", 16) != 0) {
            if (ptds) std::memcpy(name + n, "_ptsz", 6);
            id = exported_id(name);
            if (id < 0 && ptds) {
                name[n] = '\0';
                id = exported_id(name);
            }
        }
    }
    if (id < 0) return real;
    note_real(id, real);
    return kHookAddress[id];
}

}  // namespace explsched::intercept

namespace ei = explsched::intercept;

// dlsym override. Anything that is not a driver symbol goes straight to the C library's dlsym
// as a tail call, so the caller's return address (which RTLD_NEXT is relative to) is kept.
extern "C" ES_NO_TSAN void* dlsym(void* handle, const char* symbol) noexcept {
    if (!ei::is_driver_symbol(symbol)) {
        const auto real = ei::real_dlsym();
        return real != nullptr ? real(handle, symbol) : nullptr;
    }
    const auto real = ei::real_dlsym();
    if (real == nullptr) return nullptr;
    const int id = ei::exported_id(symbol);
    if (id < 0) return real(handle, symbol);
    if (handle == RTLD_NEXT || handle == RTLD_DEFAULT) {
        // Global lookups would find our own export first; answer from the driver instead, and
        // never fall back to a global lookup when the driver lacks the symbol.
        ei::resolve_real_symbols();
        return ei::g_real[id].load(std::memory_order_acquire) != nullptr ? ei::hook_address(id) : nullptr;
    }
    void* found = real(handle, symbol);
    if (found == nullptr) return nullptr;
    ei::resolve_real_symbols();
    ei::note_real(id, found);
    return ei::hook_address(id);
}
