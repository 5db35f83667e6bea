#include "kernel_sched/step_setup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/base/errno_text.hpp"
#include "core/base/fd.hpp"
#include "core/base/strings.hpp"
#include "kernel_sched/ksched_shm.hpp"

namespace explsched::ksched {

namespace {

std::string sys_error(const std::string& what) { return what + ": " + errno_text(errno); }

// An exclusive flock held for the object's lifetime (closing the descriptor releases it).
class FileLock {
public:
    Status acquire(const std::string& path) {
        fd_.reset(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
        if (!fd_.valid()) return make_error(sys_error("cannot open lock " + path));
        while (flock(fd_.get(), LOCK_EX) != 0) {
            if (errno != EINTR) return make_error(sys_error("cannot lock " + path));
        }
        return {};
    }

private:
    Fd fd_;
};

Status make_dir(const std::string& path, mode_t mode) {
    if (mkdir(path.c_str(), mode) == 0 || errno == EEXIST) {
        struct stat st {};
        if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            return make_error("runtime path " + path + " exists but is not a directory");
        return {};
    }
    return make_error(sys_error("cannot create directory " + path));
}

Status make_dirs(const std::string& path) {
    std::size_t pos = 0;
    while ((pos = path.find('/', pos + 1)) != std::string::npos) {
        if (auto s = make_dir(path.substr(0, pos), 0755); !s) return s;
    }
    return make_dir(path, 0755);
}

bool pid_alive(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

pid_t read_pid(const std::string& path) {
    std::ifstream in(path);
    long pid = 0;
    if (!(in >> pid) || pid <= 0 || pid > 0x7fffffff) return 0;
    return static_cast<pid_t>(pid);
}

// A pid is only ours if it still runs explsched-kerneld (pids are reused).
bool is_kerneld(pid_t pid) {
    if (!pid_alive(pid)) return false;
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::string argv0;
    std::getline(in, argv0, '\0');
    return argv0.find("explsched-kerneld") != std::string::npos;
}

bool endpoint_ready(const std::string& path) {
    SegmentMap map;
    std::string error;
    if (!map.attach(path, false, error)) return false;
    const std::uint64_t beat = map->header.heartbeat_ns.load(std::memory_order_relaxed);
    return monotonic_ns() < beat + kDeadAfterNs;
}

std::vector<std::string> list_dir(const std::string& path) {
    std::vector<std::string> out;
    DIR* d = opendir(path.c_str());
    if (d == nullptr) return out;
    while (dirent* e = readdir(d)) {
        if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    }
    closedir(d);
    return out;
}

// Removes step files whose owner died; returns the live ones.
std::vector<std::string> prune_steps(const std::string& steps_dir) {
    std::vector<std::string> live;
    for (const std::string& name : list_dir(steps_dir)) {
        const std::string path = steps_dir + "/" + name;
        if (pid_alive(read_pid(path)))
            live.push_back(name);
        else
            unlink(path.c_str());
    }
    return live;
}

// Runs a program to completion with extra environment and optional stdin text.
Result<int> run_program(const std::string& path, const std::vector<std::string>& args,
                        const std::vector<std::string>& extra_env, const std::string& input) {
    std::vector<std::string> env_store;
    for (char** e = environ; *e != nullptr; ++e) env_store.emplace_back(*e);
    env_store.insert(env_store.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> argv{const_cast<char*>(path.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (std::string& e : env_store) envp.push_back(e.data());
    envp.push_back(nullptr);
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return make_error(sys_error("pipe for " + path));
    Fd read_end(pipe_fds[0]);
    Fd write_end(pipe_fds[1]);
    const pid_t pid = fork();
    if (pid < 0) return make_error(sys_error("cannot fork to run " + path));
    if (pid == 0) {
        dup2(read_end.get(), STDIN_FILENO);
        execve(path.c_str(), argv.data(), envp.data());
        if (path.find('/') == std::string::npos) execvpe(path.c_str(), argv.data(), envp.data());
        _exit(127);
    }
    read_end.reset();
    if (!input.empty()) {
        ssize_t ignored = write(write_end.get(), input.data(), input.size());
        (void)ignored;
    }
    write_end.reset();  // EOF for the program before we wait for it
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return make_error(sys_error("waiting for " + path));
    }
    if (!WIFEXITED(status))
        return make_error(path + " was killed by signal " + std::to_string(WTERMSIG(status)));
    return WEXITSTATUS(status);
}

// Starts explsched-kerneld detached from the caller (double fork, own session) so that it
// outlives the step that started it, with stdout/stderr appended to its log.
Status spawn_kerneld(const StepSetupRequest& r, std::uint32_t gpu, const std::string& dir) {
    const std::string endpoint = endpoint_path(r.runtime_dir, gpu);
    const std::string pid_file = dir + "/kerneld.pid";
    const std::string log = dir + "/kerneld.log";
    unlink(pid_file.c_str());
    std::vector<std::string> args = {r.kerneld_path,      "--endpoint", endpoint, "--gpu",
                                     std::to_string(gpu), "--pid-file", pid_file};
    args.insert(args.end(), r.kerneld_args.begin(), r.kerneld_args.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    const pid_t child = fork();
    if (child < 0)
        return make_error(sys_error("cannot fork explsched-kerneld for GPU " + std::to_string(gpu)));
    if (child == 0) {
        // Only async-signal-safe calls from here to exec: the caller may be multithreaded.
        setsid();
        if (fork() != 0) _exit(0);
        const int null_fd = open("/dev/null", O_RDONLY);
        const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
        if (log_fd >= 0) {
            dup2(log_fd, STDOUT_FILENO);
            dup2(log_fd, STDERR_FILENO);
        }
        for (int fd = 3; fd < 1024; ++fd) close(fd);
        execv(argv[0], argv.data());
        _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    for (std::uint32_t waited = 0; waited <= r.start_timeout_ms; waited += 10) {
        const pid_t pid = read_pid(pid_file);
        if (pid > 0 && endpoint_ready(endpoint)) return {};
        usleep(10000);
    }
    return make_error("explsched-kerneld for GPU " + std::to_string(gpu) + " did not start within " +
                      std::to_string(r.start_timeout_ms) + " ms (" + r.kerneld_path + "); see " + log);
}

Status start_mps(const std::string& control, std::uint32_t gpu, const std::string& dir) {
    const std::string mps = dir + "/mps";
    if (access((mps + "/started").c_str(), F_OK) == 0) return {};
    for (const std::string& d : {mps, mps + "/pipe", mps + "/log"})
        if (auto s = make_dir(d, 0755); !s) return s;
    auto rc =
        run_program(control, {"-d"},
                    {"CUDA_VISIBLE_DEVICES=" + std::to_string(gpu),
                     "CUDA_MPS_PIPE_DIRECTORY=" + mps + "/pipe", "CUDA_MPS_LOG_DIRECTORY=" + mps + "/log"},
                    "");
    if (!rc) return rc.error();
    if (*rc != 0)
        return make_error("MPS control daemon for GPU " + std::to_string(gpu) + " (" + control +
                          " -d) exited with status " + std::to_string(*rc));
    std::ofstream(mps + "/started") << "1\n";
    return {};
}

void stop_mps(const std::string& control, const std::string& dir) {
    const std::string mps = dir + "/mps";
    if (access((mps + "/started").c_str(), F_OK) != 0) return;
    // `quit` on the control pipe stops the MPS control daemon and its server.
    (void)run_program(control, {},
                      {"CUDA_MPS_PIPE_DIRECTORY=" + mps + "/pipe", "CUDA_MPS_LOG_DIRECTORY=" + mps + "/log"},
                      "quit\n");
    unlink((mps + "/started").c_str());
}

void stop_kerneld(const std::string& dir, const std::string& endpoint, std::uint32_t timeout_ms) {
    const std::string pid_file = dir + "/kerneld.pid";
    const pid_t pid = read_pid(pid_file);
    if (is_kerneld(pid)) {
        kill(pid, SIGTERM);
        std::uint32_t waited = 0;
        while (is_kerneld(pid) && waited < timeout_ms) {
            usleep(10000);
            waited += 10;
        }
        if (is_kerneld(pid)) kill(pid, SIGKILL);
    }
    unlink(pid_file.c_str());
    unlink(endpoint.c_str());
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

Result<StepEnvironment> setup_step(const StepSetupRequest& r) {
    StepEnvironment out;
    if (r.mode == KschedMode::off) return out;
    auto gpus = parse_visible_devices(r.cuda_visible_devices);
    if (!gpus) return gpus.error();
    if (r.kerneld_path.empty() || r.kerneld_path[0] != '/')
        return make_error("kerneld path '" + r.kerneld_path + "' must be absolute");
    if (r.intercept_path.empty() || r.intercept_path[0] != '/')
        return make_error("intercept library path '" + r.intercept_path + "' must be absolute");
    if (access(r.kerneld_path.c_str(), X_OK) != 0)
        return make_error(sys_error("cannot execute " + r.kerneld_path));
    if (access(r.intercept_path.c_str(), R_OK) != 0)
        return make_error(sys_error("cannot read " + r.intercept_path));
    if (r.mps && gpus->size() > 1)
        return make_error("MPS with more than one GPU per step is not supported (CUDA_VISIBLE_DEVICES=" +
                          r.cuda_visible_devices + ")");
    if (auto s = make_dirs(r.runtime_dir); !s) return s.error();

    const std::string name = step_name(r.job_id, r.step_id);
    const pid_t owner = r.owner_pid > 0 ? r.owner_pid : getpid();
    std::string endpoints;
    for (std::uint32_t gpu : *gpus) {
        const std::string dir = gpu_dir(r.runtime_dir, gpu);
        for (const std::string& d : {dir, dir + "/steps"})
            if (auto s = make_dir(d, 0755); !s) return s.error();
        FileLock lock;
        if (auto s = lock.acquire(dir + "/lock"); !s) return s.error();
        prune_steps(dir + "/steps");
        {
            std::ofstream step(dir + "/steps/" + name);
            step << owner << "\n";
            if (!step) return make_error(sys_error("cannot register step in " + dir + "/steps/" + name));
        }
        const std::string endpoint = endpoint_path(r.runtime_dir, gpu);
        const bool running = is_kerneld(read_pid(dir + "/kerneld.pid")) && endpoint_ready(endpoint);
        if (!running) {
            if (auto s = spawn_kerneld(r, gpu, dir); !s) {
                unlink((dir + "/steps/" + name).c_str());
                return s.error();
            }
        }
        if (r.mps) {
            if (auto s = start_mps(r.mps_control_path, gpu, dir); !s) return s.error();
        }
        out.gpus.push_back(gpu);
        out.started.push_back(!running);
        endpoints += (endpoints.empty() ? "" : ":") + endpoint;
    }

    std::string preload = r.intercept_path;
    if (!r.current_ld_preload.empty() && r.current_ld_preload.find(r.intercept_path) == std::string::npos)
        preload += ":" + r.current_ld_preload;
    else if (!r.current_ld_preload.empty())
        preload = r.current_ld_preload;
    char prio[64];
    std::snprintf(prio, sizeof prio, "%.17g", r.priority);
    out.env = {{"LD_PRELOAD", preload},
               {"EXPLSCHED_KSCHED_MODE", to_string(r.mode)},
               {"EXPLSCHED_KSCHED_ENDPOINTS", endpoints},
               {"EXPLSCHED_KSCHED_PRIORITY", prio},
               {"EXPLSCHED_KSCHED_JOB", name}};
    if (r.mps) {
        const std::string mps = gpu_dir(r.runtime_dir, out.gpus.front()) + "/mps";
        out.env.emplace_back("CUDA_MPS_PIPE_DIRECTORY", mps + "/pipe");
        out.env.emplace_back("CUDA_MPS_LOG_DIRECTORY", mps + "/log");
    }
    return out;
}

Result<StepTeardownResult> teardown_step(const StepTeardownRequest& r) {
    StepTeardownResult out;
    auto gpus = parse_visible_devices(r.cuda_visible_devices);
    if (!gpus) return gpus.error();
    const std::string name = step_name(r.job_id, r.step_id);
    for (std::uint32_t gpu : *gpus) {
        const std::string dir = gpu_dir(r.runtime_dir, gpu);
        if (access(dir.c_str(), F_OK) != 0) continue;  // never set up (mode off, or failed early)
        FileLock lock;
        if (auto s = lock.acquire(dir + "/lock"); !s) return s.error();
        unlink((dir + "/steps/" + name).c_str());
        if (!prune_steps(dir + "/steps").empty()) continue;
        stop_kerneld(dir, endpoint_path(r.runtime_dir, gpu), r.stop_timeout_ms);
        stop_mps(r.mps_control_path, dir);
        out.daemons_stopped.push_back(gpu);
    }
    return out;
}

Result<std::vector<std::string>> live_steps(const std::string& runtime_dir, std::uint32_t gpu) {
    const std::string dir = gpu_dir(runtime_dir, gpu);
    FileLock lock;
    if (auto s = lock.acquire(dir + "/lock"); !s) return s.error();
    auto steps = prune_steps(dir + "/steps");
    std::sort(steps.begin(), steps.end());
    return steps;
}

pid_t running_kerneld(const std::string& runtime_dir, std::uint32_t gpu) {
    const pid_t pid = read_pid(gpu_dir(runtime_dir, gpu) + "/kerneld.pid");
    return is_kerneld(pid) ? pid : 0;
}

}  // namespace explsched::ksched
