// explsched-kerneld: the kernel scheduler of one GPU. It listens on the GPU's socket, gives each
// client its own channel (ksched_shm.hpp), drains every channel with a bounded amount of work per
// tick, validates every record (record_check.hpp), keeps kernel profiles (imported Orion/Nsight
// profiles plus durations learned from completions, per user), runs KernelAdmission for
// enforce-mode clients and publishes per-job statistics for `explsched kstat`.
//
// Trust: clients are hostile. A client's priority comes only from a step registration sent by a
// privileged peer (uid 0 or a configured registrar uid: the SPANK plugin in slurmstepd), and only
// when the client's own credentials (SO_PEERCRED uid, and the Slurm job in its cgroup if any)
// match the registered step; every other client runs at the lowest priority.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/fd.hpp"
#include "core/base/log.hpp"
#include "core/base/result.hpp"
#include "core/device/kernel_admission.hpp"
#include "core/device/kernel_occupancy.hpp"
#include "core/device/kernel_profile.hpp"
#include "kernel_sched/ksched_shm.hpp"
#include "kernel_sched/record_check.hpp"

namespace explsched::ksched {

inline constexpr double kLowestPriority = 0.0;

struct KerneldConfig {
    std::string socket_path;  // the endpoint clients connect to (required)
    std::string status_file;  // published statistics; default: kerneld.status beside the socket
    std::uint32_t gpu_index = 0;
    GpuLimits limits;                     // the device's; a client's report only sizes its own demands
    double sm_cap_fraction = 1.0;         // admission SM cap as a fraction of the SM count
    AdmissionConfig admission;            // sm_cap is derived from limits and the fraction
    std::vector<std::string> profiles;    // Orion-format CSV files to import
    std::uint32_t profile_sm_count = 80;  // SM count of the device the profiles come from
    std::uint64_t default_kernel_ns = 20000;
    std::uint64_t spin_ns = 200000;                // keep polling this long after the last record
    std::uint64_t sleep_ns = 1000000;              // then sleep at most this long between scans
    std::string stats_file;                        // JSON written at exit
    std::string trace_file;                        // one line per grant (tests, debugging)
    std::string pid_file;                          // written once the socket is ready
    std::string user = "explsched";                // started as root: serve as this user
    std::vector<std::uint32_t> registrar_uids{0};  // peers allowed to register steps
    std::uint32_t max_clients_per_uid = kMaxClientsPerUid;
};

// Parses the command line (argv[0] is the program). Errors name the option and value.
Result<KerneldConfig> parse_kerneld_args(int argc, char** argv);
const char* kerneld_usage();

// The Slurm job a process's cgroup names (".../job_<id>/..."), if any.
std::optional<std::uint32_t> cgroup_job(const std::string& cgroup_text);

class KernelDaemon {
public:
    KernelDaemon(KerneldConfig config, Logger& log);
    ~KernelDaemon();
    KernelDaemon(const KernelDaemon&) = delete;
    KernelDaemon& operator=(const KernelDaemon&) = delete;

    // Imports profiles, creates the status file and the socket, writes the pid file.
    Status start();
    // Serves until `stop` becomes true; then publishes final statistics.
    void run(const std::atomic<bool>& stop);
    // Accepts connections and reads socket messages, waiting at most `timeout_ns` for the first.
    void service_sockets(std::uint64_t timeout_ns);
    // One scan of every client channel plus an admission pass; true if any record was read.
    bool poll_once(std::uint64_t now_ns);
    // Writes the JSON statistics file (if configured) and removes the socket and status file.
    void shutdown();

    std::string stats_json() const;
    StatusFile* status() const { return status_map_.as<StatusFile>(); }
    std::size_t clients() const;
    std::size_t steps() const { return steps_.size(); }
    std::uint64_t refused() const { return refused_total_; }

private:
    struct FuncMeta {
        bool known = false;
        std::string name;
        std::uint64_t name_hash = 0;
        KernelClass cls = KernelClass::unknown;
        std::uint64_t prior_ns = 0;  // imported (or default) duration for the name
        std::uint32_t regs = 0, static_smem = 0;
    };
    struct Conn {
        bool used = false;
        std::uint32_t generation = 0;
        Fd sock;
        uid_t uid = 0;
        pid_t pid = 0;
        bool registrar = false;  // uid may register steps
        bool attached = false;   // hello done: a client with a channel
        std::uint64_t accepted_ns = 0;
        Mapping channel_map, reply_map;
        Channel* channel = nullptr;
        ReplyPage* reply = nullptr;
        std::uint64_t head = 0;  // consumer position: ours, never read back from the channel
        std::string job;
        double priority = kLowestPriority;
        ClientMode mode = ClientMode::observe;
        GpuLimits limits;
        std::uint64_t key_salt = 0;  // learned durations are per user
        int job_index = -1;
        std::vector<FuncMeta> funcs;
        std::unordered_map<std::uint64_t, std::uint64_t> streams;  // client handle -> small id
        std::uint64_t launches = 0;
        std::uint64_t by_entry[static_cast<int>(Entry::count)] = {};
        std::uint64_t captured = 0;
        std::uint64_t refused = 0;
        bool bypass = false;
    };
    struct Step {
        std::string job;
        std::uint32_t uid = 0;
        pid_t owner = 0;
        double priority = kLowestPriority;
    };
    struct JobTotals {
        std::uint64_t launches = 0, admitted = 0, held = 0, completed = 0, wait_ns_total = 0, wait_ns_max = 0,
                      dropped = 0, refused = 0;
        void add(const JobTotals& t);
    };
    using EntryCounts = std::array<std::uint64_t, static_cast<std::size_t>(Entry::count)>;
    struct JobView {
        JobTotals totals;
        EntryCounts by_entry{};
        std::uint32_t clients_live = 0;
        double priority = 0.0;  // of its last live client
    };

    Status create_status_file();
    Status create_socket();
    void accept_some(std::uint64_t now_ns);
    void read_messages(std::uint32_t id, std::uint64_t now_ns);
    void attach_client(std::uint32_t id, const HelloMsg& hello);
    void handle_registration(std::uint32_t id, const RegisterMsg& msg, bool unregister);
    void reply_to(Conn& c, MsgType type, int status, const std::string& message, const int* fds = nullptr,
                  int nfds = 0);
    double priority_for(const Conn& c) const;
    void apply_priorities();
    void drop(std::uint32_t id);
    std::uint32_t drain(std::uint32_t id, Conn& c, std::uint32_t budget, std::uint64_t now_ns);
    void handle_record(std::uint32_t id, Conn& c, const RecordBody& body, std::uint64_t seq,
                       std::uint64_t now_ns);
    AdmissionRequest describe(std::uint32_t id, Conn& c, const CheckedRecord& r, std::uint64_t seq,
                              std::uint64_t now_ns);
    const FuncMeta* function(Conn& c, std::uint32_t index);
    std::uint64_t stream_id(Conn& c, std::uint64_t handle);
    void housekeeping(std::uint64_t now_ns);
    void publish_jobs();
    int job_index(const std::string& job);
    JobTotals totals_of(const Conn& c, std::uint32_t id) const;
    std::vector<JobView> job_views() const;
    std::uint32_t clients_of_uid(uid_t uid) const;

    KerneldConfig config_;
    Logger& log_;
    Mapping status_map_;
    Fd status_ro_;  // handed to clients
    Fd listen_;
    Fd epoll_;
    KernelProfileStore profiles_;
    KernelAdmission admission_;
    std::vector<Conn> conns_;
    std::vector<Step> steps_;
    std::vector<JobTotals> departed_;  // per job table index: totals of clients that left
    std::vector<std::string> job_names_;
    std::vector<EntryCounts> entry_totals_;  // per job table index: launches of clients that left
    std::vector<Grant> grants_;
    std::uint32_t rr_ = 0;  // round-robin start of the next scan
    std::uint64_t last_housekeeping_ns_ = 0;
    std::uint64_t last_expire_ns_ = 0;
    std::uint64_t last_socket_ns_ = 0;
    std::uint64_t refused_total_ = 0;
    bool clients_changed_ = false;
    std::FILE* trace_ = nullptr;
};

}  // namespace explsched::ksched
