#include "daemon/job_owners.hpp"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>

namespace explsched::daemon {

namespace {

constexpr auto kCtlConfRetry = std::chrono::seconds(10);
// After slurmctld failed to answer, reports are told to retry for this long without asking it
// again: a down controller must not cost every report a full RPC timeout.
constexpr auto kCtlDownPause = std::chrono::seconds(2);

bool file_exists(const std::string& path) {
    struct stat st;
    return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string unknown_text(uint32_t job_id) {
    return "job " + std::to_string(job_id) + " is not known to slurmctld";
}

}  // namespace

JobOwners::JobOwners(std::string slurm_conf, Logger& log, OwnerCacheOptions cache)
    : conf_path_(std::move(slurm_conf)), log_(log), cache_options_(cache) {
    if (conf_path_.empty()) {
        const char* env = std::getenv("SLURM_CONF");
        conf_path_ = (env != nullptr && *env != '\0') ? env : "/etc/slurm/slurm.conf";
    }
    if (cache_options_.capacity < 16) cache_options_.capacity = 16;
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

std::size_t JobOwners::cached_entries() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cache_.size();
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
                log_.write(LogLevel::verbose,
                           std::string("cannot ask slurmctld for SlurmUser: ") + slurm_strerror(errno));
            return false;
        }
    }
    return uid == *slurm_user_;
}

std::optional<uint32_t> JobOwners::slurm_user() {
    privileged(static_cast<uint32_t>(-1));  // fills slurm_user_ when slurmctld answers
    std::lock_guard<std::mutex> lock(mutex_);
    return slurm_user_;
}

JobOwners::Answer JobOwners::ask_slurmctld(uint32_t job_id) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        std::string error;
        if (!init_locked(error)) return {Kind::unavailable, 0, 0, false, false, error};
    }
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS) {
        const int err = errno;
        if (err == ESLURM_INVALID_JOB_ID)
            return {Kind::unknown_job, 0, 0, false, false, unknown_text(job_id)};
        return {Kind::unavailable,
                0,
                0,
                false,
                false,
                "cannot look up job " + std::to_string(job_id) + " in slurmctld: " + slurm_strerror(err)};
    }
    Answer answer{Kind::unknown_job, 0, 0, false, false, unknown_text(job_id)};
    if (msg != nullptr && msg->record_count > 0) {
        const slurm_job_info_t& job = msg->job_array[0];
        const uint32_t base = job.job_state & JOB_STATE_BASE;
        answer = {Kind::owner,
                  job.user_id,
                  static_cast<int64_t>(job.submit_time),
                  base == JOB_PENDING || base == JOB_RUNNING || base == JOB_SUSPENDED,
                  false,
                  {},
                  job.restart_cnt};
    }
    slurm_free_job_info_msg(msg);
    return answer;
}

void JobOwners::remember_locked(uint32_t job_id, const Answer& answer,
                                std::chrono::steady_clock::time_point now) {
    if (cache_.size() >= cache_options_.capacity) {
        for (auto it = cache_.begin(); it != cache_.end();)
            it = it->second.expires <= now ? cache_.erase(it) : std::next(it);
        // Still full of live entries: drop an arbitrary eighth (they are refilled on demand).
        for (auto it = cache_.begin(); it != cache_.end() && cache_.size() > cache_options_.capacity * 7 / 8;)
            it = cache_.erase(it);
    }
    const auto ttl = answer.kind == Kind::owner ? cache_options_.owner_ttl : cache_options_.unknown_ttl;
    cache_[job_id] = Entry{answer, now + ttl};
}

JobOwners::Answer JobOwners::lookup(uint32_t job_id, bool fresh) {
    const auto now = std::chrono::steady_clock::now();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = cache_.find(job_id); it != cache_.end()) {
            const bool usable = !(fresh && it->second.answer.kind == Kind::owner);
            if (now < it->second.expires && usable) {
                Answer a = it->second.answer;
                a.cached = true;
                return a;
            }
            if (now >= it->second.expires) cache_.erase(it);
        }
        if (now < ctl_down_until_) return {Kind::unavailable, 0, 0, false, false, ctl_down_error_};
    }
    Answer answer = ask_slurmctld(job_id);  // without the lock: other jobs' lookups go on meanwhile
    std::lock_guard<std::mutex> lock(mutex_);
    if (answer.kind == Kind::unavailable) {
        ctl_down_until_ = std::chrono::steady_clock::now() + kCtlDownPause;
        ctl_down_error_ = answer.error;
    } else {
        remember_locked(job_id, answer, std::chrono::steady_clock::now());
    }
    return answer;
}

}  // namespace explsched::daemon
