// Internal interface between the intercept's two translation units: intercept.cpp (process
// state, client registration, the launch paths) and intercept_lookup.cpp (real-symbol
// resolution and the dlsym / cuGetProcAddress overrides). Nothing here is exported.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/base/export.hpp"
#include "kernel_sched/cuda_abi.hpp"

// Prototypes of the exported hooks (defined in intercept.cpp). Exported with default visibility
// although the library is built with -fvisibility=hidden: every declaration must carry the
// attribute, or the symbol ends up hidden.
extern "C" {
#define ES_HOOK(symbol, kind, entry, ptds, params, args) EXPLSCHED_EXPORT es_CUresult symbol params;
#define ES_REAL(symbol, params)
#include "kernel_sched/hooks.def"
#undef ES_HOOK
#undef ES_REAL
EXPLSCHED_EXPORT void* dlsym(void* handle, const char* symbol) noexcept;
}

namespace explsched::intercept {

// One id per hooks.def row, hooks first.
enum HookId : int {
#define ES_HOOK(symbol, ...) kId_##symbol,
#define ES_REAL(symbol, ...) kId_##symbol,
#include "kernel_sched/hooks.def"
#undef ES_HOOK
#undef ES_REAL
    kHookCount
};

// Driver entry points, filled once by resolve_real_symbols() and later by the lookup overrides
// when an application obtains a driver pointer we had not resolved (e.g. a versioned variant).
extern std::atomic<void*> g_real[kHookCount];

// Resolves the real driver symbols once (std::call_once); safe to call from any hook.
void resolve_real_symbols();
// Records `real` as the driver's implementation of `id` unless one is already known.
void note_real(int id, void* real);
// The exported hook for `id`, or nullptr if `id` is not exported.
void* hook_address(int id);
// The id of an exported hook by exact symbol name, or -1.
int exported_id(const char* name);
// Maps a driver function pointer handed to the application to our hook for it (by the exact
// exported name dladdr reports, else by pointer identity, else by the requested name).
void* map_driver_pointer(const char* requested, void* real, es_cuuint64_t flags);

// Writes "explsched: <message>\n" to stderr once per `key` bit (never allocates).
void warn_once(unsigned key, const char* message, const char* detail = nullptr);
enum WarnKey : unsigned {
    kWarnNoDriver = 1u << 0,
    // One key for every reason the scheduler lets this process's launches through unscheduled
    // (no daemon, refused, dead, full, waited too long): one warning per process.
    kWarnFailOpen = 1u << 1,
    kWarnBadEnv = 1u << 5,
    kWarnNoDlsym = 1u << 6,
};

template <typename Fn>
inline Fn real_fn(int id) {
    return reinterpret_cast<Fn>(g_real[id].load(std::memory_order_relaxed));
}

}  // namespace explsched::intercept
