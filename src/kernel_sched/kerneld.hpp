// explsched-kerneld: the kernel scheduler of one GPU. It owns the GPU's shared-memory segment,
// drains every client's launch ring, keeps kernel profiles (imported Orion/Nsight profiles plus
// durations learned from completions), runs KernelAdmission for enforce-mode clients and
// publishes per-job statistics for `explsched kstat`.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/log.hpp"
#include "core/base/result.hpp"
#include "core/device/kernel_admission.hpp"
#include "core/device/kernel_occupancy.hpp"
#include "core/device/kernel_profile.hpp"
#include "kernel_sched/ksched_shm.hpp"

namespace explsched::ksched {

struct KerneldConfig {
    std::string endpoint;  // segment file
    std::uint32_t gpu_index = 0;
    GpuLimits limits;                     // used where a client does not report its device
    double sm_cap_fraction = 1.0;         // admission SM cap as a fraction of the SM count
    AdmissionConfig admission;            // sm_cap is derived from limits and the fraction
    std::vector<std::string> profiles;    // Orion-format CSV files to import
    std::uint32_t profile_sm_count = 80;  // SM count of the device the profiles come from
    std::uint64_t default_kernel_ns = 20000;
    std::uint64_t spin_ns = 200000;    // keep polling this long after the last record
    std::uint64_t sleep_ns = 1000000;  // then sleep at most this long between scans
    std::string stats_file;            // JSON written at exit
    std::string trace_file;            // one line per grant (tests, debugging)
    std::string pid_file;              // written once the segment is ready
};

// Parses the command line (argv[0] is the program). Errors name the option and value.
Result<KerneldConfig> parse_kerneld_args(int argc, char** argv);
const char* kerneld_usage();

class KernelDaemon {
public:
    KernelDaemon(KerneldConfig config, Logger& log);
    ~KernelDaemon();
    KernelDaemon(const KernelDaemon&) = delete;
    KernelDaemon& operator=(const KernelDaemon&) = delete;

    // Imports profiles, creates the segment, writes the pid file.
    Status start();
    // Serves until `stop` becomes true; then publishes final statistics.
    void run(const std::atomic<bool>& stop);
    // One scan of every client ring plus an admission pass; true if any record was read.
    bool poll_once(std::uint64_t now_ns);
    // Writes the JSON statistics file (if configured) and removes the segment file.
    void shutdown();

    std::string stats_json() const;
    Segment* segment() const { return map_.get(); }

private:
    struct FuncMeta {
        bool known = false;
        std::string name;
        std::uint64_t name_hash = 0;
        KernelClass cls = KernelClass::unknown;
        std::uint64_t prior_ns = 0;  // imported (or default) duration for the name
        std::uint32_t regs = 0, static_smem = 0;
    };
    struct Client {
        bool active = false;
        std::uint32_t generation = 0;
        std::int32_t pid = 0;
        std::string job;
        double priority = 0.0;
        ClientMode mode = ClientMode::observe;
        GpuLimits limits;
        int job_index = -1;
        std::vector<FuncMeta> funcs;
        std::uint64_t launches = 0;
        std::uint64_t by_entry[static_cast<int>(Entry::count)] = {};
        std::uint64_t captured = 0;
        std::uint64_t observe_seq = 0;  // synthetic sequence for observe-mode launches
        std::uint64_t claimed_since_ns = 0;
        bool bypass = false;
    };
    struct JobTotals {
        std::uint64_t launches = 0, admitted = 0, held = 0, completed = 0, wait_ns_total = 0, wait_ns_max = 0,
                      dropped = 0;
        void add(const JobTotals& t);
    };
    using EntryCounts = std::array<std::uint64_t, static_cast<std::size_t>(Entry::count)>;
    // One job as published: the clients that left plus the live ones.
    struct JobView {
        JobTotals totals;
        EntryCounts by_entry{};
        std::uint32_t clients_live = 0;
        double priority = 0.0;  // of its last live client
    };

    void adopt_client(std::uint32_t id, ClientSlot& slot, std::uint64_t now_ns);
    void retire_client(std::uint32_t id, ClientSlot& slot);
    void handle_record(std::uint32_t id, Client& c, ClientSlot& slot, const Record& r, std::uint64_t pos,
                       std::uint64_t now_ns);
    AdmissionRequest describe(std::uint32_t id, Client& c, ClientSlot& slot, const Record& r,
                              std::uint64_t seq, std::uint64_t now_ns);
    const FuncMeta* function(Client& c, ClientSlot& slot, std::uint32_t index);
    void housekeeping(std::uint64_t now_ns);
    void publish_jobs();
    int job_index(const std::string& job);
    JobTotals totals_of(const Client& c, std::uint32_t id, const ClientSlot& slot) const;
    // Per job table index.
    std::vector<JobView> job_views() const;

    KerneldConfig config_;
    Logger& log_;
    SegmentMap map_;
    KernelProfileStore profiles_;
    KernelAdmission admission_;
    std::vector<Client> clients_;
    std::vector<JobTotals> departed_;  // per job table index: totals of clients that left
    std::vector<std::string> job_names_;
    std::vector<EntryCounts> entry_totals_;  // per job table index: launches of clients that left
    std::vector<Grant> grants_;
    std::uint64_t last_housekeeping_ns_ = 0;
    std::uint64_t last_expire_ns_ = 0;
    bool clients_changed_ = false;
    std::FILE* trace_ = nullptr;
};

}  // namespace explsched::ksched
