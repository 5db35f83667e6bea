#include "daemon/job_owners.hpp"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <sys/stat.h>

#include <cstdlib>

namespace explsched::daemon {

namespace {

constexpr std::size_t kMaxCachedOwners = 1 << 20;
constexpr auto kUnknownJobMemory = std::chrono::seconds(5);
constexpr auto kCtlConfRetry = std::chrono::seconds(10);

bool file_exists(const std::string& path) {
    struct stat st;
    return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

JobOwners::JobOwners(std::string slurm_conf, Logger& log) : conf_path_(std::move(slurm_conf)), log_(log) {
    if (conf_path_.empty()) {
        const char* env = std::getenv("SLURM_CONF");
        conf_path_ = (env != nullptr && *env != '\0') ? env : "/etc/slurm/slurm.conf";
    }
}

JobOwners::~JobOwners() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (initialized_) slurm_fini();
}

std::string JobOwners::describe() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string error;
    if (!init_locked(error)) return error;
    return "job owners from slurmctld (" + conf_path_ + ")";
}

// libslurm fatal()s (exits the process) on a missing or broken slurm.conf: check the file first so
// that explschedd keeps serving root's reports and says why others are refused.
bool JobOwners::init_locked(std::string& error) {
    if (initialized_) return true;
    if (!file_exists(conf_path_)) {
        error =
            "cannot check job owners: no slurm.conf at " + conf_path_ + " (set SLURM_CONF or --slurm-conf)";
        return false;
    }
    slurm_init(conf_path_.c_str());
    initialized_ = true;
    return true;
}

bool JobOwners::privileged(uint32_t uid) {
    if (uid == 0) return true;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!slurm_user_) {
        std::string error;
        const auto now = std::chrono::steady_clock::now();
        if (now < next_ctl_try_ || !init_locked(error)) return false;
        slurm_conf_t* conf = nullptr;
        if (slurm_load_ctl_conf(static_cast<time_t>(0), &conf) == SLURM_SUCCESS && conf != nullptr) {
            slurm_user_ = conf->slurm_user_id;
            slurm_free_ctl_conf(conf);
            if (log_.enabled(LogLevel::info))
                log_.write(LogLevel::info, "SlurmUser is uid " + std::to_string(*slurm_user_));
        } else {
            next_ctl_try_ = now + kCtlConfRetry;
            if (log_.enabled(LogLevel::verbose))
                log_.write(LogLevel::verbose, std::string("cannot ask slurmctld for SlurmUser: ") +
                                                  slurm_strerror(slurm_get_errno()));
            return false;
        }
    }
    return uid == *slurm_user_;
}

JobOwners::Answer JobOwners::lookup(uint32_t job_id) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = owners_.find(job_id); it != owners_.end()) return {Kind::owner, it->second, {}};
    const auto now = std::chrono::steady_clock::now();
    const std::string unknown = "job " + std::to_string(job_id) + " is not known to slurmctld";
    if (auto it = unknown_until_.find(job_id); it != unknown_until_.end()) {
        if (now < it->second) return {Kind::unknown_job, 0, unknown};
        unknown_until_.erase(it);
    }
    std::string error;
    if (!init_locked(error)) return {Kind::unavailable, 0, error};

    job_info_msg_t* msg = nullptr;
    if (slurm_load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS) {
        const int err = slurm_get_errno();
        if (err == ESLURM_INVALID_JOB_ID) {
            if (unknown_until_.size() > kMaxCachedOwners) unknown_until_.clear();
            unknown_until_[job_id] = now + kUnknownJobMemory;
            return {Kind::unknown_job, 0, unknown};
        }
        return {Kind::unavailable, 0,
                "cannot look up job " + std::to_string(job_id) + " in slurmctld: " + slurm_strerror(err)};
    }
    Answer answer{Kind::unknown_job, 0, unknown};
    if (msg != nullptr && msg->record_count > 0) {
        answer = {Kind::owner, msg->job_array[0].user_id, {}};
        if (owners_.size() >= kMaxCachedOwners) owners_.clear();  // rare; refilled on demand
        owners_[job_id] = answer.uid;
    }
    slurm_free_job_info_msg(msg);
    return answer;
}

}  // namespace explsched::daemon
