// The SPANK plugin's dispatcher: the only file Slurm's SPANK hooks enter. It catches everything
// (no exception may cross into srun, sbatch or slurmstepd), switches on spank_context() and hands
// each context to its own file (spank_allocator.cpp, spank_remote.cpp) with its own state.
#include <exception>
#include <string>

#include <vector>
#include "core/base/export.hpp"

#include "spank/spank_api.hpp"

#include "core/sched/settings.hpp"
#include "spank/spank_contexts.hpp"
#include "spank/spank_options.hpp"

extern "C" {
EXPLSCHED_EXPORT extern const char plugin_name[] = "explsched";
EXPLSCHED_EXPORT extern const char plugin_type[] = "spank";
EXPLSCHED_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;

EXPLSCHED_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av);
EXPLSCHED_EXPORT int slurm_spank_init_post_opt(spank_t sp, int ac, char** av);
EXPLSCHED_EXPORT int slurm_spank_user_init(spank_t sp, int ac, char** av);
EXPLSCHED_EXPORT int slurm_spank_task_init_privileged(spank_t sp, int ac, char** av);
EXPLSCHED_EXPORT int slurm_spank_exit(spank_t sp, int ac, char** av);
}

namespace {

using namespace explsched;

// plugstack.conf arguments, parsed once per process in slurm_spank_init.
Settings g_settings;

// Slurm treats only a negative return as failure (sbatch then refuses the submission), while
// SPANK's error codes are positive: map every failure to -1.
template <typename F>
int guarded(const char* hook, F&& body) {
    try {
        return body() == 0 ? 0 : -1;
    } catch (const std::exception& e) {
        slurm_error("explsched: %s: internal error: %s", hook, e.what());
    } catch (...) {
        slurm_error("explsched: %s: internal error", hook);
    }
    return -1;
}

}  // namespace

extern "C" {

int slurm_spank_init(spank_t sp, int ac, char** av) {
    return guarded("init", [&] {
        auto parsed = parse_settings_args(std::vector<std::string>(av, av + ac));
        if (!parsed) {
            slurm_error("explsched: plugstack.conf: %s", parsed.error().message.c_str());
            return static_cast<int>(ESPANK_BAD_ARG);
        }
        g_settings = std::move(parsed).value();
        switch (spank_context()) {
            case S_CTX_LOCAL:
            case S_CTX_ALLOCATOR:
            case S_CTX_REMOTE:
                return spank::register_options(sp);
            default:
                return 0;
        }
    });
}

int slurm_spank_init_post_opt(spank_t sp, int, char**) {
    return guarded("init_post_opt", [&] {
        switch (spank_context()) {
            case S_CTX_LOCAL:
            case S_CTX_ALLOCATOR:
                return spank::allocator_post_opt(sp, g_settings);
            case S_CTX_REMOTE:
                return spank::remote_post_opt(sp, g_settings);
            default:
                return 0;
        }
    });
}

int slurm_spank_user_init(spank_t sp, int, char**) {
    return guarded("user_init", [&] {
        if (spank_context() != S_CTX_REMOTE) return 0;
        return spank::remote_user_init(sp, g_settings);
    });
}

int slurm_spank_task_init_privileged(spank_t sp, int, char**) {
    return guarded("task_init_privileged", [&] {
        if (spank_context() != S_CTX_REMOTE) return 0;
        return spank::remote_task_init_privileged(sp, g_settings);
    });
}

int slurm_spank_exit(spank_t sp, int, char**) {
    return guarded("exit", [&] {
        if (spank_context() != S_CTX_REMOTE) return 0;
        return spank::remote_exit(sp, g_settings);
    });
}

}  // extern "C"
