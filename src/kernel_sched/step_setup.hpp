// Step setup and teardown for the device level, called by the SPANK plugin in the remote
// (slurmstepd) context. Plain C++: no spank.h here, so it is tested without Slurm.
//
// setup_step() starts or reuses one explsched-kerneld per GPU of the step (the GPUs named by the
// step's CUDA_VISIBLE_DEVICES), optionally an MPS control daemon per GPU, and returns the
// environment every task needs (LD_PRELOAD, the endpoints, mode, priority, job). Daemons are
// shared by all steps on a GPU and reference counted by live steps: one file per step under
// <runtime>/gpu<N>/steps/, holding the pid whose life marks the step live (slurmstepd). Steps
// whose pid died are pruned, so a crashed slurmstepd does not pin a daemon forever.
// teardown_step() removes the step and stops the GPU's daemons when no live step is left.
// Setup and teardown on one GPU are serialised by an flock on <runtime>/gpu<N>/lock.
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

struct StepSetupRequest {
    std::uint32_t job_id = 0;
    std::uint32_t step_id = 0;
    std::string cuda_visible_devices;  // the step's value
    KschedMode mode = KschedMode::observe;
    double priority = 0.0;  // the job's utility-derived priority (cluster level)
    std::string runtime_dir = "/run/explsched/ksched";
    bool mps = false;            // also start nvidia-cuda-mps-control per GPU
    std::string kerneld_path;    // installed explsched-kerneld (absolute)
    std::string intercept_path;  // installed libexplsched_intercept.so (absolute)
    std::string mps_control_path = "nvidia-cuda-mps-control";
    std::vector<std::string> kerneld_args;  // extra daemon options, e.g. {"--profiles", DIR}
    std::string current_ld_preload;         // the step's LD_PRELOAD, kept after ours
    std::uint32_t start_timeout_ms = 5000;
    pid_t owner_pid = 0;  // 0: the caller (slurmstepd)
};

struct StepEnvironment {
    std::vector<std::pair<std::string, std::string>> env;  // set these in every task
    std::vector<std::uint32_t> gpus;
    std::vector<bool> started;  // per GPU: this call started its daemon
};

// Mode off returns an empty environment and touches nothing.
Result<StepEnvironment> setup_step(const StepSetupRequest& request);

struct StepTeardownRequest {
    std::uint32_t job_id = 0;
    std::uint32_t step_id = 0;
    std::string cuda_visible_devices;
    std::string runtime_dir = "/run/explsched/ksched";
    std::string mps_control_path = "nvidia-cuda-mps-control";
    std::uint32_t stop_timeout_ms = 2000;
};

struct StepTeardownResult {
    std::vector<std::uint32_t> daemons_stopped;  // GPUs whose last step this was
};

Result<StepTeardownResult> teardown_step(const StepTeardownRequest& request);

// Live steps registered on a GPU (after pruning dead ones); for tests and diagnostics.
Result<std::vector<std::string>> live_steps(const std::string& runtime_dir, std::uint32_t gpu);
// The pid of the GPU's running kerneld, or 0.
pid_t running_kerneld(const std::string& runtime_dir, std::uint32_t gpu);

}  // namespace explsched::ksched
