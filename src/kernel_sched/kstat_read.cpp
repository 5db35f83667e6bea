#include "kernel_sched/kstat_read.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "kernel_sched/ksched_shm.hpp"

namespace explsched::ksched {

Result<KstatGpu> read_kstat(const std::string& endpoint) {
    // The socket's path names the GPU; the statistics are in the status file beside it.
    const bool is_socket = endpoint.size() > 5 && endpoint.compare(endpoint.size() - 5, 5, ".sock") == 0;
    const std::string path = is_socket ? status_path_for(endpoint) : endpoint;
    std::string error;
    const Mapping map = attach_status(path, error);
    if (!map) return make_error(error);
    const StatusFile& seg = *map.as<StatusFile>();
    KstatGpu out;
    out.endpoint = endpoint;
    out.gpu_index = seg.header.gpu_index;
    out.daemon_pid = seg.header.daemon_pid;
    const std::uint64_t beat = seg.header.heartbeat_ns.load(std::memory_order_relaxed);
    const std::uint64_t now = monotonic_ns();
    out.heartbeat_age_ns = now > beat ? now - beat : 0;
    out.alive = heartbeat_alive(beat, now);
    out.clients_active = seg.header.clients_active.load(std::memory_order_relaxed);
    for (const JobStats& js : seg.jobs) {
        KstatJob j;
        bool consistent = false;
        // Seqlock read: retry while the daemon is writing.
        for (int attempt = 0; attempt < 1000 && !consistent; ++attempt) {
            const std::uint32_t v1 = js.version.load(std::memory_order_acquire);
            if ((v1 & 1U) != 0) continue;
            char name[kJobMax];
            std::memcpy(name, js.job, sizeof name);
            name[kJobMax - 1] = '\0';
            j.job = name;
            j.clients_live = js.clients_live;
            j.priority = js.priority;
            j.launches = js.launches;
            j.admitted = js.admitted;
            j.held = js.held;
            j.completed = js.completed;
            j.wait_ns_total = js.wait_ns_total;
            j.wait_ns_max = js.wait_ns_max;
            j.dropped = js.dropped;
            j.refused = js.refused;
            std::atomic_thread_fence(std::memory_order_acquire);
            consistent = js.version.load(std::memory_order_relaxed) == v1;
        }
        if (consistent && !j.job.empty()) out.jobs.push_back(std::move(j));
    }
    return out;
}

std::vector<std::string> find_endpoints(const std::string& runtime_dir) {
    std::vector<std::pair<unsigned long, std::string>> found;
    DIR* d = opendir(runtime_dir.c_str());
    if (d == nullptr) return {};
    while (dirent* e = readdir(d)) {
        const char* name = e->d_name;
        if (std::strncmp(name, "gpu", 3) != 0 || name[3] == '\0') continue;
        char* end = nullptr;
        const unsigned long gpu = std::strtoul(name + 3, &end, 10);
        if (end == nullptr || *end != '\0') continue;
        const std::string path = runtime_dir + "/" + name + "/kerneld.status";
        struct stat st {};
        if (stat(path.c_str(), &st) == 0) found.emplace_back(gpu, path);
    }
    closedir(d);
    std::sort(found.begin(), found.end());
    std::vector<std::string> out;
    for (auto& f : found) out.push_back(std::move(f.second));
    return out;
}

}  // namespace explsched::ksched
