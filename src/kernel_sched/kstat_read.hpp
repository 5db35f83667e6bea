// Reading a kernel scheduler's published statistics (for `explsched kstat`), read-only and
// without disturbing the daemon: the per-job table is read under its seqlock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace explsched::ksched {

struct KstatJob {
    std::string job;
    std::uint32_t clients_live = 0;
    double priority = 0.0;
    std::uint64_t launches = 0;
    std::uint64_t admitted = 0;
    std::uint64_t held = 0;
    std::uint64_t completed = 0;
    std::uint64_t wait_ns_total = 0;
    std::uint64_t wait_ns_max = 0;
    std::uint64_t dropped = 0;
    std::uint64_t refused = 0;  // records the daemon's validator refused
};

struct KstatGpu {
    std::string endpoint;
    std::uint32_t gpu_index = 0;
    std::int32_t daemon_pid = 0;
    bool alive = false;  // heartbeat fresh
    std::uint64_t heartbeat_age_ns = 0;
    std::uint32_t clients_active = 0;
    std::vector<KstatJob> jobs;
};

// Reads a GPU's status file (<dir>/gpu<N>/kerneld.status), or the one beside a socket path.
Result<KstatGpu> read_kstat(const std::string& endpoint);
// Status files under a runtime directory (<dir>/gpu<N>/kerneld.status), in GPU order.
std::vector<std::string> find_endpoints(const std::string& runtime_dir);

}  // namespace explsched::ksched
