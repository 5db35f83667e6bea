// The device level's part in a step, called by the SPANK plugin in the remote (slurmstepd)
// context. Plain C++: no spank.h here, so it is tested without Slurm.
//
// explsched-kerneld runs outside every job, as its own unprivileged user, started by the site's
// service manager (contrib/systemd/explsched-kerneld@.service) or the Slurm prolog
// (contrib/slurm/prolog-kerneld.sh). The step only connects to it:
//  - register_step() (once per step, as root in slurmstepd): tells each GPU's kerneld "step J.S
//    belongs to uid U and has priority P". Priority reaches the device level only this way.
//  - step_environment() (per task, no I/O): the environment a task needs (LD_PRELOAD, endpoints,
//    mode, step name).
//  - unregister_step() (at step exit).
// Nothing here waits longer than the request's timeout (1 s by default) in all, takes a lock a
// user can hold, or follows a symbolic link; the runtime directory and each GPU directory are
// checked component by component (root-owned or the kerneld user's, not group/other-writable).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/result.hpp"

namespace explsched::ksched {

enum class KschedMode { off, observe, enforce };
Result<KschedMode> parse_ksched_mode(std::string_view text);
const char* to_string(KschedMode mode);

// CUDA_VISIBLE_DEVICES as Slurm sets it for GPU gres ("0", "1,3"). UUIDs and MIG names are
// refused with an error naming the item.
Result<std::vector<std::uint32_t>> parse_visible_devices(std::string_view text);

// "<job>.<step>" with Slurm's special step ids spelled as squeue does (batch, extern, ...).
std::string step_name(std::uint32_t job_id, std::uint32_t step_id);

// Checks that `path` is a directory every component of which is root's (or, for components at
// or below `owner_from`, root's or `other_uid`'s) and not writable by group or others (a
// root-owned sticky directory such as /tmp is allowed on the way). Symbolic links are refused.
Status check_trusted_dir(const std::string& path, std::size_t owner_from = std::string::npos,
                         uid_t other_uid = 0);

inline constexpr const char* kDefaultKerneldUser = "explsched";

struct StepRegistration {
    std::uint32_t job_id = 0;
    std::uint32_t step_id = 0;
    std::uint32_t uid = 0;             // the step's user
    std::string cuda_visible_devices;  // the step's value
    double priority = 0.0;             // the job's priority from slurmctld
    std::string runtime_dir = "/run/explsched/ksched";
    std::string kerneld_user = kDefaultKerneldUser;
    pid_t owner_pid = 0;              // 0: the caller (slurmstepd); the step is live while it is
    std::uint32_t timeout_ms = 1000;  // for all GPUs together
};

struct RegistrationResult {
    std::vector<std::uint32_t> registered;  // GPUs whose kerneld accepted the step
    std::vector<std::string> errors;        // one per GPU that did not, naming it
};

// Registers (or, with `unregister`, forgets) the step with every GPU's kerneld. An error when the
// request itself is bad or the runtime directory is not trusted; per-GPU failures are listed.
Result<RegistrationResult> register_step(const StepRegistration& r, bool unregister = false);

struct StepEnvRequest {
    std::uint32_t job_id = 0;
    std::uint32_t step_id = 0;
    std::string cuda_visible_devices;  // the task's value
    KschedMode mode = KschedMode::observe;
    std::string runtime_dir = "/run/explsched/ksched";
    std::string intercept_path;      // installed libexplsched_intercept.so (absolute)
    std::string current_ld_preload;  // the task's LD_PRELOAD, kept after ours
    bool mps = false;                // point CUDA at the GPU's MPS daemon (started by the unit/prolog)
};

struct StepEnvironment {
    std::vector<std::pair<std::string, std::string>> env;  // set these in the task
    std::vector<std::uint32_t> gpus;
};

// Mode off returns an empty environment.
Result<StepEnvironment> step_environment(const StepEnvRequest& request);

}  // namespace explsched::ksched
