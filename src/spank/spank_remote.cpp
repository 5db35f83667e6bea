// Remote context (slurmstepd): runs in every step of a job that asked for ExplSched. It exports to
// the tasks what the training code needs to report its curve (the sweep, the metric, where
// explschedd listens), and connects the step to the device level for steps that share GPUs:
// once per step (init_post_opt, root, before any task exists) it registers the step's user and
// priority with each GPU's explsched-kerneld, which the site runs outside every job (systemd
// unit or Slurm prolog); each task then gets LD_PRELOAD of the intercept and the endpoints. The
// device level fails open: if it cannot be set up, the step runs unmanaged and the reason is
// logged; it never fails a user's step and never holds slurmstepd longer than a second.
#include <unistd.h>

#include <cstring>
#include <string>

#include "kernel_sched/step_setup.hpp"
#include "spank/spank_contexts.hpp"
#include "spank/spank_options.hpp"

extern "C" {
#include <slurm/slurm.h>
}
extern "C" slurm_conf_t slurm_conf;  // slurmstepd's (libslurmfull): SlurmUser is explschedd's uid

#ifndef EXPLSCHED_INTERCEPT_PATH
#define EXPLSCHED_INTERCEPT_PATH "/usr/lib/libexplsched_intercept.so"
#endif

namespace explsched::spank {

namespace {

int set_env(spank_t sp, const std::string& name, const std::string& value) {
    const spank_err_t rc = spank_setenv(sp, name.c_str(), value.c_str(), 1);
    if (rc != ESPANK_SUCCESS) {
        slurm_error("explsched: cannot set %s in the step: %s", name.c_str(), spank_strerror(rc));
        return rc;
    }
    return 0;
}

std::string get_env(spank_t sp, const char* name) {
    char buf[4096];
    if (spank_getenv(sp, name, buf, sizeof buf) != ESPANK_SUCCESS) return {};
    return buf;
}

// What the device level needs to know of the step; empty mode: not managed.
struct DeviceStep {
    bool managed = false;
    ksched::KschedMode mode = ksched::KschedMode::off;
    uint32_t job_id = 0;
    uint32_t step_id = 0;
    std::string visible_devices;
};

DeviceStep device_step(spank_t sp, const ExploreSpec& spec, const Settings& settings) {
    DeviceStep d;
    // A job's --kernel-sched wins; otherwise trials get the site's default (plugstack.conf).
    const KernelSchedMode mode =
        spec.kernel_sched.value_or(spec.exploratory() ? settings.kernel_sched : KernelSchedMode::off);
    if (mode == KernelSchedMode::off) return d;
    d.visible_devices = get_env(sp, "CUDA_VISIBLE_DEVICES");
    if (d.visible_devices.empty()) return d;  // no GPU in this step
    if (spank_get_item(sp, S_JOB_ID, &d.job_id) != ESPANK_SUCCESS) return d;
    if (spank_get_item(sp, S_JOB_STEPID, &d.step_id) != ESPANK_SUCCESS) return d;
    d.mode = mode == KernelSchedMode::enforce ? ksched::KschedMode::enforce : ksched::KschedMode::observe;
    d.managed = true;
    return d;
}

std::string ksched_runtime(const Settings& settings) { return settings.runtime_dir + "/ksched"; }

// Set in init_post_opt (slurmstepd, before it forks the tasks, so the tasks inherit it): at
// least one GPU's kerneld accepted the step. Without, the tasks run unmanaged and quiet.
bool g_device_registered = false;

// The job's rank at the cluster level, for the kernel scheduler to prefer: its Slurm priority,
// which priority/explsched derives from the trial's utility against the GPU price. Looked up
// once per step, by slurmstepd.
double cluster_priority(uint32_t job_id) {
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job(&msg, job_id, SHOW_DETAIL) != SLURM_SUCCESS || msg == nullptr) return 0.0;
    double priority = 0.0;
    if (msg->record_count > 0) priority = static_cast<double>(msg->job_array[0].priority);
    slurm_free_job_info_msg(msg);
    return priority;
}

ksched::StepRegistration registration(spank_t sp, const DeviceStep& d, const Settings& settings) {
    ksched::StepRegistration reg;
    reg.job_id = d.job_id;
    reg.step_id = d.step_id;
    uid_t uid = 0;
    if (spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS) reg.uid = uid;
    reg.cuda_visible_devices = d.visible_devices;
    reg.runtime_dir = ksched_runtime(settings);
    reg.kerneld_user = settings.kerneld_user;
    reg.owner_pid = getpid();  // slurmstepd: the step is live while it is
    return reg;
}

void register_device_step(spank_t sp, const DeviceStep& d, const Settings& settings) {
    ksched::StepRegistration reg = registration(sp, d, settings);
    reg.priority = cluster_priority(d.job_id);
    auto done = ksched::register_step(reg);
    if (!done) {
        slurm_error("explsched: device level not set up for step %u.%u (it runs unmanaged): %s", d.job_id,
                    d.step_id, done.error().message.c_str());
        return;
    }
    for (const std::string& e : done->errors)
        slurm_error("explsched: step %u.%u: kernel scheduler: %s (launches there are not scheduled)",
                    d.job_id, d.step_id, e.c_str());
    g_device_registered = !done->registered.empty();
    if (g_device_registered)
        slurm_info("explsched: step %u.%u: kernel scheduling (%s) on GPU(s) %s, uid %u, priority %.0f",
                   d.job_id, d.step_id, ksched::to_string(d.mode), d.visible_devices.c_str(), reg.uid,
                   reg.priority);
}

void set_task_environment(spank_t sp, const DeviceStep& d, const Settings& settings) {
    ksched::StepEnvRequest req;
    req.job_id = d.job_id;
    req.step_id = d.step_id;
    req.cuda_visible_devices = d.visible_devices;
    req.mode = d.mode;
    req.runtime_dir = ksched_runtime(settings);
    req.mps = settings.mps;
    const std::string dir = settings.libexec_dir;
    req.intercept_path = dir.empty() ? EXPLSCHED_INTERCEPT_PATH : dir + "/libexplsched_intercept.so";
    req.current_ld_preload = get_env(sp, "LD_PRELOAD");
    auto env = ksched::step_environment(req);
    if (!env) {
        slurm_error("explsched: device level not set up for a task of step %u.%u (it runs unmanaged): %s",
                    d.job_id, d.step_id, env.error().message.c_str());
        return;
    }
    for (const auto& [name, value] : env->env) set_env(sp, name, value);
}

}  // namespace

int remote_user_init(spank_t sp, const Settings& settings) {
    const RawOptions& raw = recorded_options();
    auto spec = validated_spec(raw);
    if (!spec) {
        // Submit-time validation makes this unreachable unless the record was altered.
        slurm_error("explsched: %s", spec.error().message.c_str());
        return ESPANK_BAD_ARG;
    }
    if (!raw.any()) return 0;
    for (const auto& [name, value] : explore_env(*spec))
        if (int rc = set_env(sp, name, value); rc != 0) return rc;
    if (!spec->exploratory()) return 0;
    uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) == ESPANK_SUCCESS)
        if (int rc = set_env(sp, "EXPLSCHED_JOB_ID", std::to_string(job_id)); rc != 0) return rc;
    if (!settings.munge_socket.empty())
        if (int rc = set_env(sp, "EXPLSCHED_MUNGE_SOCKET", settings.munge_socket); rc != 0) return rc;
    if (int rc = set_env(sp, "EXPLSCHED_REPORT_UID", std::to_string(slurm_conf.slurm_user_id)); rc != 0)
        return rc;
    return set_env(sp, "EXPLSCHED_REPORT_ADDR",
                   settings.report_host + ":" + std::to_string(settings.report_port));
}

int remote_post_opt(spank_t sp, const Settings& settings) {
    auto spec = validated_spec(recorded_options());
    if (!spec) return 0;  // reported by user_init
    const DeviceStep device = device_step(sp, *spec, settings);
    if (device.managed) register_device_step(sp, device, settings);
    return 0;
}

// Runs in each task, as root, just before it drops privileges and execs: only sets the task's
// environment (its CUDA_VISIBLE_DEVICES may be a subset of the step's). No I/O, no RPC.
int remote_task_init_privileged(spank_t sp, const Settings& settings) {
    if (!g_device_registered) return 0;
    auto spec = validated_spec(recorded_options());
    if (!spec) return 0;
    const DeviceStep device = device_step(sp, *spec, settings);
    if (device.managed) set_task_environment(sp, device, settings);
    return 0;
}

int remote_exit(spank_t sp, const Settings& settings) {
    auto spec = validated_spec(recorded_options());
    if (!spec) return 0;
    const DeviceStep device = device_step(sp, *spec, settings);
    if (!device.managed || !g_device_registered) return 0;
    auto done = ksched::register_step(registration(sp, device, settings), true);
    if (!done)
        slurm_error("explsched: device level: unregistering step %u.%u: %s", device.job_id, device.step_id,
                    done.error().message.c_str());
    return 0;
}

}  // namespace explsched::spank
