#include "kernel_sched/kerneld.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>

#include <sched.h>

#include <sys/types.h>
#include <nlohmann/json.hpp>

#include "core/base/errno_text.hpp"
#include "core/device/kernel_key.hpp"
#include "core/device/orion_profile.hpp"

namespace explsched::ksched {

namespace {

constexpr std::uint64_t kHousekeepingNs = 50'000'000;
constexpr std::uint64_t kClaimTimeoutNs = 2'000'000'000;

LaunchShape launch_shape(const Record& r) {
    return LaunchShape{r.grid_x, r.grid_y, r.grid_z, r.block_x, r.block_y, r.block_z, r.smem_dynamic};
}

bool pid_alive(std::int32_t pid) {
    if (pid <= 0) return false;
    return kill(pid, 0) == 0 || errno != ESRCH;
}

}  // namespace

KernelDaemon::KernelDaemon(KerneldConfig config, Logger& log)
    : config_(std::move(config)),
      log_(log),
      profiles_(0.25, config_.default_kernel_ns),
      admission_(config_.admission),
      clients_(kMaxClients),
      departed_(kMaxJobs),
      job_names_(kMaxJobs),
      entry_totals_(kMaxJobs) {}

KernelDaemon::~KernelDaemon() {
    if (trace_ != nullptr) std::fclose(trace_);
}

Status KernelDaemon::start() {
    for (const std::string& path : config_.profiles) {
        auto p = load_orion_profile(path, config_.profile_sm_count);
        if (!p) return p.error();
        profiles_.import(*p);
    }
    AdmissionConfig a = config_.admission;
    a.sm_cap = config_.sm_cap_fraction * config_.limits.sm_count;
    if (auto v = validate(a); !v) return v;
    admission_ = KernelAdmission(a);
    if (!config_.trace_file.empty()) {
        trace_ = std::fopen(config_.trace_file.c_str(), "a");
        if (trace_ == nullptr)
            return make_error("cannot open trace file " + config_.trace_file + ": " + errno_text(errno));
    }
    std::string error;
    if (!map_.create(config_.endpoint, config_.gpu_index, error)) return make_error(error);
    map_.publish_ready();
    if (!config_.pid_file.empty()) {
        const std::string tmp = config_.pid_file + ".tmp";
        std::ofstream out(tmp);
        out << getpid() << "\n";
        out.close();
        if (!out || std::rename(tmp.c_str(), config_.pid_file.c_str()) != 0)
            return make_error("cannot write pid file " + config_.pid_file + ": " + errno_text(errno));
    }
    if (log_.enabled(LogLevel::info)) {
        log_.write(LogLevel::info, "kerneld: GPU " + std::to_string(config_.gpu_index) + " serving " +
                                       config_.endpoint + " (" + std::to_string(profiles_.imported_names()) +
                                       " profiled kernel names)");
    }
    return {};
}

int KernelDaemon::job_index(const std::string& job) {
    for (std::size_t i = 0; i < job_names_.size(); ++i)
        if (job_names_[i] == job && !job.empty()) return static_cast<int>(i);
    for (std::size_t i = 0; i < job_names_.size(); ++i) {
        if (job_names_[i].empty()) {
            job_names_[i] = job.empty() ? "(none)" : job;
            return static_cast<int>(i);
        }
    }
    return -1;  // table full: the client still runs, its statistics are not published
}

void KernelDaemon::adopt_client(std::uint32_t id, ClientSlot& slot, std::uint64_t now_ns) {
    Client& c = clients_[id];
    c = Client{};
    c.active = true;
    c.generation = slot.generation.load(std::memory_order_relaxed);
    c.pid = slot.pid;
    c.job = std::string(slot.job, strnlen(slot.job, sizeof slot.job));
    c.priority = slot.priority;
    c.mode = slot.mode;
    c.limits = config_.limits;
    if (slot.sm_count > 0) {
        c.limits.sm_count = slot.sm_count;
        if (slot.max_threads_per_sm > 0) c.limits.max_threads_per_sm = slot.max_threads_per_sm;
        if (slot.max_regs_per_sm > 0) c.limits.max_regs_per_sm = slot.max_regs_per_sm;
        if (slot.max_smem_per_sm > 0) c.limits.max_smem_per_sm = slot.max_smem_per_sm;
        if (slot.max_blocks_per_sm > 0) c.limits.max_blocks_per_sm = slot.max_blocks_per_sm;
        if (slot.sm_count != config_.limits.sm_count) {
            // The client saw the real device: size the caps to it.
            config_.limits.sm_count = slot.sm_count;
            admission_.set_caps(config_.sm_cap_fraction * slot.sm_count, config_.admission.bw_cap);
        }
    }
    c.job_index = job_index(c.job);
    c.claimed_since_ns = now_ns;
    admission_.set_client(id, c.priority);
    clients_changed_ = true;
    if (log_.enabled(LogLevel::verbose)) {
        log_.write(LogLevel::verbose, "kerneld: client pid " + std::to_string(c.pid) + " job " + c.job +
                                          " mode " + (c.mode == ClientMode::enforce ? "enforce" : "observe") +
                                          " priority " + std::to_string(c.priority));
    }
}

KernelDaemon::JobTotals KernelDaemon::totals_of(const Client& c, std::uint32_t id,
                                                const ClientSlot& slot) const {
    const AdmissionStats a = admission_.stats(id);
    JobTotals t;
    t.launches = c.launches;
    t.admitted = a.admitted;
    t.held = a.held;
    t.completed = a.completed;
    t.wait_ns_total = a.wait_ns_total;
    t.wait_ns_max = a.wait_ns_max;
    t.dropped = slot.dropped.load(std::memory_order_relaxed);
    return t;
}

void KernelDaemon::JobTotals::add(const JobTotals& t) {
    launches += t.launches;
    admitted += t.admitted;
    held += t.held;
    completed += t.completed;
    wait_ns_total += t.wait_ns_total;
    wait_ns_max = std::max(wait_ns_max, t.wait_ns_max);
    dropped += t.dropped;
}

std::vector<KernelDaemon::JobView> KernelDaemon::job_views() const {
    std::vector<JobView> jobs(kMaxJobs);
    for (std::size_t j = 0; j < kMaxJobs; ++j) {
        jobs[j].totals = departed_[j];
        jobs[j].by_entry = entry_totals_[j];
    }
    for (std::uint32_t id = 0; id < kMaxClients; ++id) {
        const Client& c = clients_[id];
        if (!c.active || c.job_index < 0) continue;
        JobView& v = jobs[static_cast<std::size_t>(c.job_index)];
        v.totals.add(totals_of(c, id, map_->slots[id]));
        for (std::size_t e = 0; e < v.by_entry.size(); ++e) v.by_entry[e] += c.by_entry[e];
        v.clients_live += 1;
        v.priority = c.priority;
    }
    return jobs;
}

void KernelDaemon::retire_client(std::uint32_t id, ClientSlot& slot) {
    Client& c = clients_[id];
    if (c.active && c.job_index >= 0) {
        const auto j = static_cast<std::size_t>(c.job_index);
        departed_[j].add(totals_of(c, id, slot));
        for (std::size_t e = 0; e < entry_totals_[j].size(); ++e) entry_totals_[j][e] += c.by_entry[e];
    }
    admission_.remove_client(id);
    clients_changed_ = true;
    c = Client{};
    ring_reset(slot);
    slot.state.store(static_cast<std::uint32_t>(SlotState::free), std::memory_order_release);
}

const KernelDaemon::FuncMeta* KernelDaemon::function(Client& c, ClientSlot& slot, std::uint32_t index) {
    if (index >= kMaxFuncs) return nullptr;
    if (c.funcs.size() <= index) c.funcs.resize(index + 1);
    FuncMeta& m = c.funcs[index];
    if (!m.known) {
        FuncInfo& fi = slot.funcs[index];
        if (fi.ready.load(std::memory_order_acquire) == 0) return nullptr;
        m.name.assign(fi.name, strnlen(fi.name, sizeof fi.name));
        m.regs = fi.regs;
        m.static_smem = fi.static_smem;
        m.name_hash = fnv1a64(m.name);
        m.cls = profiles_.kernel_class(m.name);
        m.prior_ns = profiles_.imported_duration_ns(m.name);
        m.known = true;
    }
    return &m;
}

AdmissionRequest KernelDaemon::describe(std::uint32_t id, Client& c, ClientSlot& slot, const Record& r,
                                        std::uint64_t seq, std::uint64_t now_ns) {
    AdmissionRequest q;
    q.client = id;
    q.seq = seq;
    q.stream = r.stream;
    q.submitted_ns = now_ns;
    q.tracked = (r.flags & kFlagUntracked) == 0;
    const GpuLimits& g = c.limits;
    std::uint64_t prior_ns = config_.default_kernel_ns;
    if (r.func_index == kGraphFunc) {
        // A graph is many kernels in one call; without walking it, assume it fills the GPU.
        q.key = kernel_key(fnv1a64("cuGraphLaunch"), r.arg);  // the graph handle stands for the shape
        q.demand.sms = g.sm_count;
        q.demand.cls = KernelClass::unknown;
    } else {
        const FuncMeta* m = function(c, slot, r.func_index);
        const std::uint64_t threads = std::uint64_t{r.block_x} * r.block_y * r.block_z;
        const std::uint64_t blocks = std::uint64_t{r.grid_x} * r.grid_y * r.grid_z;
        const std::uint32_t per_sm = blocks_per_sm(
            g, static_cast<std::uint32_t>(std::min<std::uint64_t>(threads, 0xFFFFFFFFu)),
            m != nullptr ? m->regs : 0, std::uint64_t{m != nullptr ? m->static_smem : 0} + r.smem_dynamic);
        q.demand.sms = sms_needed(g, blocks, per_sm);
        q.demand.cls = m != nullptr ? m->cls : KernelClass::unknown;
        if (m != nullptr) prior_ns = m->prior_ns;
        q.key = kernel_key(m != nullptr ? m->name_hash : 0, launch_shape(r));
    }
    q.demand.bw = bandwidth_demand(q.demand.cls, q.demand.sms, g.sm_count);
    q.demand.duration_ns = profiles_.expected_duration_ns(q.key, prior_ns);
    return q;
}

void KernelDaemon::handle_record(std::uint32_t id, Client& c, ClientSlot& slot, const Record& r,
                                 std::uint64_t pos, std::uint64_t now_ns) {
    const std::uint64_t seq = pos + 1;
    if (r.type == RecordType::complete) {
        const std::uint64_t at = r.time_ns != 0 ? std::min(r.time_ns, now_ns) : now_ns;
        if (auto done = admission_.complete(id, r.arg, at))
            profiles_.observe_duration(done->key, done->duration_ns);
        return;
    }
    c.launches += 1;
    if (r.entry < Entry::count) c.by_entry[static_cast<int>(r.entry)] += 1;
    if ((r.flags & kFlagCaptured) != 0) {
        c.captured += 1;
        return;
    }
    AdmissionRequest q = describe(id, c, slot, r, seq, now_ns);
    switch (r.type) {
        case RecordType::launch:
            // Observe mode: no completion follows; the kernel counts as running for its expected time.
            q.tracked = false;
            admission_.note_running(q, now_ns);
            break;
        case RecordType::request:
            admission_.submit(q);
            break;
        case RecordType::started:
            admission_.note_running(q, now_ns);
            break;
        case RecordType::complete:
            break;
    }
}

bool KernelDaemon::poll_once(std::uint64_t now_ns) {
    Segment* seg = map_.get();
    bool activity = false;
    for (std::uint32_t id = 0; id < kMaxClients; ++id) {
        ClientSlot& slot = seg->slots[id];
        Client& c = clients_[id];
        const auto state = static_cast<SlotState>(slot.state.load(std::memory_order_acquire));
        if (state != SlotState::active) continue;
        if (!c.active || c.generation != slot.generation.load(std::memory_order_relaxed)) {
            if (c.active) retire_client(id, slot);
            adopt_client(id, slot, now_ns);
        }
        // Bounded per scan so one busy client cannot starve the others' grants.
        for (int n = 0; n < static_cast<int>(kRingSize); ++n) {
            std::uint64_t pos = 0;
            Record* r = ring_peek(slot, pos);
            if (r == nullptr) break;
            handle_record(id, c, slot, *r, pos, now_ns);
            ring_release(slot, *r, pos);
            activity = true;
        }
    }
    // Expiry walks every in-flight list: at most every 10 us, it only releases estimates.
    if (activity || now_ns >= last_expire_ns_ + 10000) {
        admission_.expire(now_ns);
        last_expire_ns_ = now_ns;
    }
    grants_.clear();
    admission_.admit(now_ns, grants_);
    for (const Grant& g : grants_) {
        ClientSlot& slot = seg->slots[g.client];
        if (slot.granted_upto.load(std::memory_order_relaxed) < g.seq)
            slot.granted_upto.store(g.seq, std::memory_order_release);
        slot.grant_futex.fetch_add(1, std::memory_order_release);
        if (slot.waiters.load(std::memory_order_seq_cst) != 0) futex_wake_all(&slot.grant_futex);
        if (trace_ != nullptr) {
            const Client& c = clients_[g.client];
            std::fprintf(trace_, "grant pid=%d job=%s seq=%llu waited_ns=%llu\n", c.pid, c.job.c_str(),
                         static_cast<unsigned long long>(g.seq),
                         static_cast<unsigned long long>(g.waited_ns));
            std::fflush(trace_);
        }
    }
    if (!grants_.empty()) activity = true;
    // Who is protected depends only on the priorities present: recompute when clients change.
    if (clients_changed_) {
        clients_changed_ = false;
        for (std::uint32_t id = 0; id < kMaxClients; ++id) {
            Client& c = clients_[id];
            if (!c.active || c.mode != ClientMode::enforce) continue;
            const bool bypass = admission_.is_protected(id);
            if (bypass != c.bypass) {
                c.bypass = bypass;
                seg->slots[id].bypass.store(bypass ? 1 : 0, std::memory_order_relaxed);
            }
        }
    }
    if (now_ns >= last_housekeeping_ns_ + kHousekeepingNs) housekeeping(now_ns);
    return activity;
}

void KernelDaemon::housekeeping(std::uint64_t now_ns) {
    last_housekeeping_ns_ = now_ns;
    Segment* seg = map_.get();
    for (std::uint32_t id = 0; id < kMaxClients; ++id) {
        ClientSlot& slot = seg->slots[id];
        const auto state = static_cast<SlotState>(slot.state.load(std::memory_order_acquire));
        if (state == SlotState::active && clients_[id].active && !pid_alive(clients_[id].pid)) {
            if (log_.enabled(LogLevel::verbose))
                log_.write(LogLevel::verbose,
                           "kerneld: client pid " + std::to_string(clients_[id].pid) + " exited");
            // Drain what it left so its last completions and counts are not lost.
            for (;;) {
                std::uint64_t pos = 0;
                Record* r = ring_peek(slot, pos);
                if (r == nullptr) break;
                handle_record(id, clients_[id], slot, *r, pos, now_ns);
                ring_release(slot, *r, pos);
            }
            retire_client(id, slot);
        } else if (state == SlotState::claiming) {
            // A client that died while claiming leaves the slot half-written.
            if (clients_[id].claimed_since_ns == 0)
                clients_[id].claimed_since_ns = now_ns;
            else if (now_ns > clients_[id].claimed_since_ns + kClaimTimeoutNs)
                retire_client(id, slot);
        }
    }
    publish_jobs();
}

void KernelDaemon::publish_jobs() {
    Segment* seg = map_.get();
    const std::vector<JobView> jobs = job_views();
    for (std::size_t j = 0; j < kMaxJobs; ++j) {
        if (job_names_[j].empty()) continue;
        const JobView& job = jobs[j];
        JobStats& s = seg->jobs[j];
        const std::uint32_t v = s.version.load(std::memory_order_relaxed);
        s.version.store(v + 1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
        copy_field(s.job, sizeof s.job, job_names_[j].c_str());
        s.clients_live = job.clients_live;
        if (job.clients_live > 0) s.priority = job.priority;
        s.launches = job.totals.launches;
        s.admitted = job.totals.admitted;
        s.held = job.totals.held;
        s.completed = job.totals.completed;
        s.wait_ns_total = job.totals.wait_ns_total;
        s.wait_ns_max = job.totals.wait_ns_max;
        s.dropped = job.totals.dropped;
        std::atomic_thread_fence(std::memory_order_release);
        s.version.store(v + 2, std::memory_order_release);
    }
}

void KernelDaemon::run(const std::atomic<bool>& stop) {
    SegmentHeader& h = map_->header;
    std::uint64_t last_activity = monotonic_ns();
    std::uint32_t spins = 0;
    while (!stop.load(std::memory_order_relaxed)) {
        const std::uint64_t now = monotonic_ns();
        h.heartbeat_ns.store(now, std::memory_order_relaxed);
        if (poll_once(now)) {
            last_activity = now;
            continue;
        }
        if (now < last_activity + config_.spin_ns) {
            // Poll for the next request; yield now and then so a busy node's clients can run.
            if ((++spins & 4095) == 0)
                sched_yield();
            else
                cpu_relax();
            continue;
        }
        // Sleep until a client rings (enforce requests do when they see us asleep) or the
        // timeout: observe records and completions are picked up at the next scan. While
        // requests wait on time-based decisions, wake often enough to re-evaluate them.
        const std::uint32_t bell = h.doorbell.load(std::memory_order_acquire);
        h.daemon_sleeping.store(1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (poll_once(now)) {
            h.daemon_sleeping.store(0, std::memory_order_relaxed);
            last_activity = now;
            continue;
        }
        const std::uint64_t timeout =
            admission_.waiting() > 0 ? std::min<std::uint64_t>(config_.sleep_ns, 100000) : config_.sleep_ns;
        futex_wait(&h.doorbell, bell, timeout);
        h.daemon_sleeping.store(0, std::memory_order_relaxed);
    }
    publish_jobs();
}

std::string KernelDaemon::stats_json() const {
    nlohmann::json out;
    out["gpu"] = config_.gpu_index;
    out["endpoint"] = config_.endpoint;
    out["profiles"] = {{"imported_names", profiles_.imported_names()},
                       {"learned_keys", profiles_.learned_keys()}};
    nlohmann::json jobs = nlohmann::json::array();
    const std::vector<JobView> views = job_views();
    for (std::size_t j = 0; j < kMaxJobs; ++j) {
        if (job_names_[j].empty()) continue;
        const JobView& view = views[j];
        const JobTotals& t = view.totals;
        nlohmann::json entries = nlohmann::json::object();
        for (std::size_t e = 0; e < view.by_entry.size(); ++e)
            entries[entry_name(static_cast<Entry>(e))] = view.by_entry[e];
        jobs.push_back({{"job", job_names_[j]},
                        {"clients_live", view.clients_live},
                        {"launches", t.launches},
                        {"by_entry", entries},
                        {"admitted", t.admitted},
                        {"held", t.held},
                        {"completed", t.completed},
                        {"wait_us_total", static_cast<double>(t.wait_ns_total) / 1000.0},
                        {"wait_us_max", static_cast<double>(t.wait_ns_max) / 1000.0},
                        {"dropped", t.dropped}});
    }
    out["jobs"] = jobs;
    return out.dump(2);
}

void KernelDaemon::shutdown() {
    if (!map_) return;
    // Count what clients posted before we stop: a test may kill us right after its clients end.
    poll_once(monotonic_ns());
    for (std::uint32_t id = 0; id < kMaxClients; ++id) {
        ClientSlot& slot = map_->slots[id];
        if (clients_[id].active && !pid_alive(clients_[id].pid)) retire_client(id, slot);
    }
    publish_jobs();
    if (!config_.stats_file.empty()) {
        std::ofstream out(config_.stats_file);
        out << stats_json() << "\n";
        if (!out && log_.enabled(LogLevel::error))
            log_.write(LogLevel::error, "cannot write statistics file " + config_.stats_file);
    }
    // Clients of this daemon fail open on the stale heartbeat; new ones must not attach.
    unlink(config_.endpoint.c_str());
    if (!config_.pid_file.empty()) unlink(config_.pid_file.c_str());
}

}  // namespace explsched::ksched
