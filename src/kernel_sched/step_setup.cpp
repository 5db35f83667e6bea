#include "kernel_sched/step_setup.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/base/errno_text.hpp"
#include "core/base/fd.hpp"
#include "core/base/strings.hpp"
#include "kernel_sched/ksched_shm.hpp"
#include "kernel_sched/ksched_socket.hpp"

namespace explsched::ksched {

namespace {

Result<uid_t> user_uid(const std::string& name) {
    passwd pw{};
    passwd* found = nullptr;
    char buf[4096];
    if (getpwnam_r(name.c_str(), &pw, buf, sizeof buf, &found) != 0 || found == nullptr)
        return make_error("kerneld user '" + name + "' does not exist");
    return found->pw_uid;
}

}  // namespace

Result<KschedMode> parse_ksched_mode(std::string_view text) {
    if (text == "off") return KschedMode::off;
    if (text == "observe") return KschedMode::observe;
    if (text == "enforce") return KschedMode::enforce;
    return make_error("kernel scheduling mode '" + std::string(text) + "': expected off, observe or enforce");
}

const char* to_string(KschedMode mode) {
    switch (mode) {
        case KschedMode::off:
            return "off";
        case KschedMode::observe:
            return "observe";
        case KschedMode::enforce:
            return "enforce";
    }
    return "off";
}

Result<std::vector<std::uint32_t>> parse_visible_devices(std::string_view text) {
    std::vector<std::uint32_t> out;
    if (trim(text).empty()) return make_error("CUDA_VISIBLE_DEVICES is empty: the step has no GPU");
    for (std::string_view item : split(text, ",")) {
        item = trim(item);
        const auto v = parse_uint64(item);
        if (!v || *v > 1023)
            return make_error("CUDA_VISIBLE_DEVICES item '" + std::string(item) +
                              "' is not a GPU index (UUIDs and MIG devices are not supported)");
        for (std::uint32_t g : out)
            if (g == *v) return make_error("CUDA_VISIBLE_DEVICES lists GPU " + std::string(item) + " twice");
        out.push_back(static_cast<std::uint32_t>(*v));
    }
    return out;
}

std::string step_name(std::uint32_t job_id, std::uint32_t step_id) {
    std::string step;
    switch (step_id) {
        case 0xfffffffbU:
            step = "batch";
            break;
        case 0xfffffffcU:
            step = "extern";
            break;
        case 0xfffffffdU:
            step = "interactive";
            break;
        default:
            step = std::to_string(step_id);
            break;
    }
    return std::to_string(job_id) + "." + step;
}

Status check_trusted_dir(const std::string& path, std::size_t owner_from, uid_t other_uid) {
    if (path.empty() || path[0] != '/') return make_error("'" + path + "' is not an absolute path");
    Fd dir(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir.valid()) return make_error("cannot open /: " + errno_text(errno));
    std::string walked;
    std::size_t pos = 1;
    for (std::size_t index = 0;; ++index) {
        struct stat st {};
        if (fstat(dir.get(), &st) != 0)
            return make_error("cannot stat " + walked + "/: " + errno_text(errno));
        const std::string shown = walked.empty() ? "/" : walked;
        const bool owner_ok = st.st_uid == 0 || (index >= owner_from && st.st_uid == other_uid);
        if (!owner_ok)
            return make_error(
                shown + " is owned by uid " + std::to_string(st.st_uid) +
                (index >= owner_from ? " (expected root or the kerneld user)" : " (expected root)"));
        // A root-owned sticky directory (/tmp) lets nobody replace what root created in it.
        const bool sticky_root = st.st_uid == 0 && (st.st_mode & S_ISVTX) != 0;
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !(sticky_root && pos < path.size())) {
            char mode[8];
            std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
            return make_error(shown + " is writable by group or others (mode " + mode + ")");
        }
        while (pos < path.size() && path[pos] == '/') ++pos;
        if (pos >= path.size()) return {};
        const std::size_t end = std::min(path.find('/', pos), path.size());
        const std::string comp = path.substr(pos, end - pos);
        walked += "/" + comp;
        if (comp == "..") return make_error(path + ": '..' is not allowed");
        Fd next(openat(dir.get(), comp.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!next.valid())
            return make_error(
                "cannot open " + walked + ": " + errno_text(errno) +
                (errno == ELOOP || errno == ENOTDIR ? " (a symbolic link or not a directory)" : ""));
        dir = std::move(next);
        pos = end;
    }
}

Result<RegistrationResult> register_step(const StepRegistration& r, bool unregister) {
    const std::uint64_t deadline = monotonic_ns() + std::uint64_t{r.timeout_ms} * 1000000ULL;
    auto gpus = parse_visible_devices(r.cuda_visible_devices);
    if (!gpus) return gpus.error();
    if (auto s = check_trusted_dir(r.runtime_dir); !s)
        return make_error("runtime_dir " + r.runtime_dir + " is not trusted: " + s.error().message);
    auto kuid = user_uid(r.kerneld_user);
    const uid_t kerneld_uid = kuid ? *kuid : 0;  // without the user only root-owned directories pass
    RegistrationResult out;
    const std::string name = step_name(r.job_id, r.step_id);
    RegisterMsg msg{};
    init_header(msg.h, unregister ? MsgType::unregister_step : MsgType::register_step);
    msg.uid = r.uid;
    msg.owner_pid = r.owner_pid > 0 ? r.owner_pid : getpid();
    msg.priority = r.priority;
    copy_field(msg.job, sizeof msg.job, name.c_str());
    const std::size_t depth =
        static_cast<std::size_t>(std::count(r.runtime_dir.begin(), r.runtime_dir.end(), '/'));
    for (std::uint32_t gpu : *gpus) {
        const std::string dir = gpu_dir(r.runtime_dir, gpu);
        const std::string sock = endpoint_path(r.runtime_dir, gpu);
        if (auto s = check_trusted_dir(dir, depth + 1, kerneld_uid); !s) {
            out.errors.push_back("GPU " + std::to_string(gpu) + ": " + s.error().message);
            continue;
        }
        struct stat st {};
        if (lstat(sock.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode) ||
            (st.st_uid != 0 && st.st_uid != kerneld_uid)) {
            out.errors.push_back("GPU " + std::to_string(gpu) + ": no kerneld socket " + sock +
                                 " owned by root or " + r.kerneld_user + " (is explsched-kerneld running?)");
            continue;
        }
        ReplyMsg reply{};
        std::string error;
        if (!exchange(sock, &msg, sizeof msg, reply, deadline, error)) {
            out.errors.push_back("GPU " + std::to_string(gpu) + ": " + error);
            continue;
        }
        out.registered.push_back(gpu);
    }
    return out;
}

Result<StepEnvironment> step_environment(const StepEnvRequest& r) {
    StepEnvironment out;
    if (r.mode == KschedMode::off) return out;
    auto gpus = parse_visible_devices(r.cuda_visible_devices);
    if (!gpus) return gpus.error();
    if (r.intercept_path.empty() || r.intercept_path[0] != '/')
        return make_error("intercept library path '" + r.intercept_path + "' must be absolute");
    if (r.mps && gpus->size() > 1)
        return make_error("MPS with more than one GPU per step is not supported (CUDA_VISIBLE_DEVICES=" +
                          r.cuda_visible_devices + ")");
    std::string endpoints;
    for (std::uint32_t gpu : *gpus) {
        endpoints += (endpoints.empty() ? "" : ":") + endpoint_path(r.runtime_dir, gpu);
        out.gpus.push_back(gpu);
    }
    std::string preload = r.intercept_path;
    if (!r.current_ld_preload.empty() && r.current_ld_preload.find(r.intercept_path) == std::string::npos)
        preload += ":" + r.current_ld_preload;
    else if (!r.current_ld_preload.empty())
        preload = r.current_ld_preload;
    out.env = {{"LD_PRELOAD", preload},
               {"EXPLSCHED_KSCHED_MODE", to_string(r.mode)},
               {"EXPLSCHED_KSCHED_ENDPOINTS", endpoints},
               {"EXPLSCHED_KSCHED_JOB", step_name(r.job_id, r.step_id)}};
    if (r.mps) {
        const std::string mps = gpu_dir(r.runtime_dir, out.gpus.front()) + "/mps";
        out.env.emplace_back("CUDA_MPS_PIPE_DIRECTORY", mps + "/pipe");
        out.env.emplace_back("CUDA_MPS_LOG_DIRECTORY", mps + "/log");
    }
    return out;
}

}  // namespace explsched::ksched
