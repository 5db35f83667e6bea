#include "kernel_sched/kerneld.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#include <nlohmann/json.hpp>

#include "core/base/errno_text.hpp"
#include "core/device/kernel_key.hpp"
#include "core/device/orion_profile.hpp"
#include "kernel_sched/ksched_socket.hpp"

namespace explsched::ksched {

namespace {

constexpr std::uint64_t kHousekeepingNs = 50'000'000;
constexpr std::uint64_t kSocketPollNs = 50'000;  // look at the sockets this often while busy
constexpr std::uint32_t kAcceptsPerTick = 16;
constexpr std::size_t kMaxStreamsPerClient = 64;  // more stream handles share one id
constexpr std::uint64_t kListenTag = ~std::uint64_t{0};
constexpr std::uint32_t kConnSlots = kMaxClients + kRegistrarReserve;

bool pid_alive(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH); }

std::string read_small_file(const std::string& path) {
    const Fd f(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!f.valid()) return {};
    char buf[4096];
    const ssize_t n = read(f.get(), buf, sizeof buf);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// "1234.0" -> 1234; nullopt when the step name does not start with a job id.
std::optional<std::uint32_t> step_job_id(const std::string& job) {
    std::uint64_t v = 0;
    std::size_t i = 0;
    for (; i < job.size() && i < 10 && job[i] >= '0' && job[i] <= '9'; ++i)
        v = v * 10 + static_cast<unsigned>(job[i] - '0');
    if (i == 0 || v > 0xFFFFFFFFu) return std::nullopt;
    return static_cast<std::uint32_t>(v);
}

Fd sealed_memfd(const char* name, std::size_t size, std::string& error) {
    Fd fd(memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd.valid() || ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
        error = std::string("memfd ") + name + ": " + errno_text(errno);
        return Fd();
    }
    return fd;
}

}  // namespace

std::optional<std::uint32_t> cgroup_job(const std::string& text) {
    const std::string tag = "/job_";
    std::size_t at = text.find(tag);
    if (at == std::string::npos) return std::nullopt;
    at += tag.size();
    std::uint64_t v = 0;
    std::size_t n = 0;
    while (at + n < text.size() && n < 10 && text[at + n] >= '0' && text[at + n] <= '9')
        v = v * 10 + static_cast<unsigned>(text[at + n++] - '0');
    if (n == 0 || v > 0xFFFFFFFFu) return std::nullopt;
    return static_cast<std::uint32_t>(v);
}

KernelDaemon::KernelDaemon(KerneldConfig config, Logger& log)
    : config_(std::move(config)),
      log_(log),
      profiles_(0.25, config_.default_kernel_ns),
      admission_(config_.admission),
      conns_(kConnSlots),
      departed_(kMaxJobs),
      job_names_(kMaxJobs),
      entry_totals_(kMaxJobs) {
    if (config_.status_file.empty()) config_.status_file = status_path_for(config_.socket_path);
    // Clients fail open on a heartbeat older than kDeadAfterNs: never sleep anywhere near it.
    config_.sleep_ns = std::min(config_.sleep_ns, kHeartbeatNs);
}

KernelDaemon::~KernelDaemon() {
    if (trace_ != nullptr) std::fclose(trace_);
}

Status KernelDaemon::create_status_file() {
    const std::string& path = config_.status_file;
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    unlink(tmp.c_str());
    const Fd f(open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!f.valid()) return make_error("cannot create " + tmp + ": " + errno_text(errno));
    // Readable by every user (clients, kstat), writable by nobody but us.
    if (fchmod(f.get(), 0644) != 0 || ftruncate(f.get(), static_cast<off_t>(kStatusSize)) != 0) {
        unlink(tmp.c_str());
        return make_error("cannot size " + tmp + ": " + errno_text(errno));
    }
    std::string error;
    Mapping m = map_fd(f.get(), kStatusSize, true, error);
    if (!m) {
        unlink(tmp.c_str());
        return make_error(tmp + ": " + error);
    }
    StatusHeader& h = m.as<StatusFile>()->header;
    h.version = kVersion;
    h.max_jobs = kMaxJobs;
    h.daemon_pid = getpid();
    h.gpu_index = config_.gpu_index;
    h.started_ns = monotonic_ns();
    h.status_size = kStatusSize;
    h.heartbeat_ns.store(h.started_ns, std::memory_order_relaxed);
    h.magic.store(kMagic, std::memory_order_release);
    // A read-only descriptor of the same file for clients: they cannot write through it.
    status_ro_.reset(open(tmp.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!status_ro_.valid() || rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = errno_text(errno);
        unlink(tmp.c_str());
        return make_error("cannot publish " + path + ": " + why);
    }
    status_map_ = std::move(m);
    return {};
}

Status KernelDaemon::create_socket() {
    const std::string& path = config_.socket_path;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof addr.sun_path)
        return make_error("socket path '" + path + "' is empty or too long");
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    struct stat st {};
    if (lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) return make_error(path + " exists and is not a socket");
        unlink(path.c_str());  // a previous daemon's
    }
    listen_.reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!listen_.valid()) return make_error("socket: " + errno_text(errno));
    if (bind(listen_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
        return make_error("cannot bind " + path + ": " + errno_text(errno));
    // Every user's CUDA processes connect; the socket is an endpoint, not shared memory.
    if (chmod(path.c_str(), 0666) != 0 || listen(listen_.get(), 64) != 0)
        return make_error("cannot listen on " + path + ": " + errno_text(errno));
    epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_.valid()) return make_error("epoll: " + errno_text(errno));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenTag;
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listen_.get(), &ev) != 0)
        return make_error("epoll: " + errno_text(errno));
    return {};
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
        trace_ = std::fopen(config_.trace_file.c_str(), "ae");
        if (trace_ == nullptr)
            return make_error("cannot open trace file " + config_.trace_file + ": " + errno_text(errno));
    }
    if (auto s = create_status_file(); !s) return s;
    if (auto s = create_socket(); !s) return s;
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
                                       config_.socket_path + " as uid " + std::to_string(getuid()) + " (" +
                                       std::to_string(profiles_.imported_names()) +
                                       " profiled kernel names)");
    }
    return {};
}

std::size_t KernelDaemon::clients() const {
    return static_cast<std::size_t>(
        std::count_if(conns_.begin(), conns_.end(), [](const Conn& c) { return c.used && c.attached; }));
}

std::uint32_t KernelDaemon::clients_of_uid(uid_t uid) const {
    std::uint32_t n = 0;
    for (const Conn& c : conns_)
        if (c.used && c.uid == uid) ++n;
    return n;
}

void KernelDaemon::accept_some(std::uint64_t now_ns) {
    for (std::uint32_t n = 0; n < kAcceptsPerTick; ++n) {
        Fd s(accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!s.valid()) return;  // EAGAIN, or an error the next tick retries
        ucred cred{};
        socklen_t len = sizeof cred;
        if (getsockopt(s.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) continue;
        const bool registrar = std::find(config_.registrar_uids.begin(), config_.registrar_uids.end(),
                                         cred.uid) != config_.registrar_uids.end();
        // Bounded tables: a user holds at most max_clients_per_uid connections, everyone together
        // kMaxClients; registrars (slurmstepd) have a reserve of their own.
        const std::uint32_t first = 0;
        const std::uint32_t last = registrar ? kConnSlots : kMaxClients;
        if (!registrar && clients_of_uid(cred.uid) >= config_.max_clients_per_uid) {
            if (log_.enabled(LogLevel::verbose))
                log_.write(LogLevel::verbose, "kerneld: uid " + std::to_string(cred.uid) +
                                                  " holds too many connections; refused pid " +
                                                  std::to_string(cred.pid));
            continue;  // closing is the answer: the client fails open
        }
        std::uint32_t id = last;
        for (std::uint32_t i = first; i < last; ++i)
            if (!conns_[i].used) {
                id = i;
                break;
            }
        if (id == last) continue;
        Conn& c = conns_[id];
        const std::uint32_t generation = c.generation + 1;
        c = Conn{};
        c.generation = generation;
        c.used = true;
        c.sock = std::move(s);
        c.uid = cred.uid;
        c.pid = cred.pid;
        c.registrar = registrar;
        c.accepted_ns = now_ns;
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;
        ev.data.u64 = (std::uint64_t{generation} << 32) | id;
        if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, c.sock.get(), &ev) != 0) {
            c = Conn{};
            c.generation = generation;
            continue;
        }
        read_messages(id, now_ns);  // the hello is usually there already: answer in this tick
    }
}

void KernelDaemon::service_sockets(std::uint64_t timeout_ns) {
    epoll_event events[64];
    const timespec ts{static_cast<time_t>(timeout_ns / 1000000000ULL),
                      static_cast<long>(timeout_ns % 1000000000ULL)};
    const int n = epoll_pwait2(epoll_.get(), events, 64, &ts, nullptr);
    const std::uint64_t now = monotonic_ns();
    last_socket_ns_ = now;
    for (int i = 0; i < n; ++i) {
        const std::uint64_t tag = events[i].data.u64;
        if (tag == kListenTag) {
            accept_some(now);
            continue;
        }
        const auto id = static_cast<std::uint32_t>(tag & 0xFFFFFFFFu);
        if (id >= conns_.size() || !conns_[id].used || conns_[id].generation != (tag >> 32)) continue;
        if ((events[i].events & EPOLLIN) != 0) read_messages(id, now);
        if (conns_[id].used && (events[i].events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)) != 0 &&
            (events[i].events & EPOLLIN) == 0)
            drop(id);
    }
}

void KernelDaemon::read_messages(std::uint32_t id, std::uint64_t) {
    union {
        HelloMsg hello;
        RegisterMsg reg;
        char bytes[256];
    } msg{};
    for (std::uint32_t n = 0; n < kMessagesPerTick && conns_[id].used; ++n) {
        Conn& c = conns_[id];
        int nfds = 0;
        const long got = recv_msg(c.sock.get(), &msg, sizeof msg, nullptr, 0, nfds);
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (got <= 0) {  // hang-up (the client exited) or an error
            drop(id);
            return;
        }
        if (got == 1) continue;  // doorbell: waking us was the point
        if (!c.attached && got == static_cast<long>(sizeof(HelloMsg)) &&
            header_ok(msg.hello.h, MsgType::hello)) {
            attach_client(id, msg.hello);
            continue;
        }
        const bool reg =
            got == static_cast<long>(sizeof(RegisterMsg)) &&
            (header_ok(msg.reg.h, MsgType::register_step) || header_ok(msg.reg.h, MsgType::unregister_step));
        if (reg && !c.attached) {
            handle_registration(id, msg.reg, msg.reg.h.type == MsgType::unregister_step);
            continue;
        }
        // Anything else is a protocol violation: the peer loses its connection (and channel).
        if (log_.enabled(LogLevel::verbose))
            log_.write(LogLevel::verbose, "kerneld: malformed message from pid " + std::to_string(c.pid) +
                                              " uid " + std::to_string(c.uid) + "; connection closed");
        drop(id);
        return;
    }
}

void KernelDaemon::reply_to(Conn& c, MsgType type, int status, const std::string& message, const int* fds,
                            int nfds) {
    ReplyMsg r{};
    init_header(r.h, type);
    r.status = status;
    r.client_id = 0;
    r.channel_size = kChannelSize;
    r.reply_size = kReplySize;
    r.status_size = kStatusSize;
    r.priority = c.priority;
    copy_field(r.message, sizeof r.message, message.c_str());
    send_msg(c.sock.get(), &r, sizeof r, fds, nfds);
}

double KernelDaemon::priority_for(const Conn& c) const {
    for (const Step& s : steps_) {
        if (s.job != c.job) continue;
        if (s.uid != c.uid) return kLowestPriority;  // naming another user's step buys nothing
        const auto in_cgroup = cgroup_job(read_small_file("/proc/" + std::to_string(c.pid) + "/cgroup"));
        if (in_cgroup && in_cgroup != step_job_id(s.job)) return kLowestPriority;
        return s.priority;
    }
    return kLowestPriority;
}

void KernelDaemon::attach_client(std::uint32_t id, const HelloMsg& hello) {
    Conn& c = conns_[id];
    std::string error;
    Fd ch_fd = sealed_memfd("explsched-channel", kChannelSize, error);
    Fd rp_fd = ch_fd.valid() ? sealed_memfd("explsched-reply", kReplySize, error) : Fd();
    if (rp_fd.valid()) c.channel_map = map_fd(ch_fd.get(), kChannelSize, true, error);
    if (c.channel_map) c.reply_map = map_fd(rp_fd.get(), kReplySize, true, error);
    // The channel can no longer change size (no SIGBUS for anyone); the reply page can no longer
    // be written through any new mapping or descriptor: the client maps it read-only.
    if (c.reply_map && (fcntl(ch_fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
                        fcntl(rp_fd.get(), F_ADD_SEALS,
                              F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)) {
        error = "cannot seal: " + errno_text(errno);
        c.reply_map = Mapping();
    }
    if (!c.reply_map) {
        if (log_.enabled(LogLevel::error)) log_.write(LogLevel::error, "kerneld: client channel: " + error);
        reply_to(c, MsgType::welcome, ENOMEM, "the daemon cannot create a channel");
        drop(id);
        return;
    }
    c.channel = c.channel_map.as<Channel>();
    c.reply = c.reply_map.as<ReplyPage>();
    channel_init(*c.channel);
    c.job = check_job_name(hello.job, sizeof hello.job);
    c.mode = hello.mode == ClientMode::enforce ? ClientMode::enforce : ClientMode::observe;
    c.limits = check_limits(hello, config_.limits);
    c.key_salt = fnv1a64("uid:" + std::to_string(c.uid));
    c.priority = priority_for(c);
    c.reply->magic = kMagic;
    c.reply->version = kVersion;
    c.reply->client_id = id;
    c.reply->priority = c.priority;
    c.attached = true;
    c.job_index = job_index(c.job);
    admission_.set_client(id, c.priority);
    clients_changed_ = true;
    const int fds[3] = {ch_fd.get(), rp_fd.get(), status_ro_.get()};
    reply_to(c, MsgType::welcome, 0, "ok", fds, 3);
    if (log_.enabled(LogLevel::verbose)) {
        log_.write(LogLevel::verbose, "kerneld: client pid " + std::to_string(c.pid) + " uid " +
                                          std::to_string(c.uid) + " job " + c.job + " mode " +
                                          (c.mode == ClientMode::enforce ? "enforce" : "observe") +
                                          " priority " + std::to_string(c.priority));
    }
}

void KernelDaemon::handle_registration(std::uint32_t id, const RegisterMsg& msg, bool unregister) {
    Conn& c = conns_[id];
    if (!c.registrar) {
        reply_to(c, MsgType::ack, EPERM, "only a privileged peer may register steps");
        drop(id);
        return;
    }
    const std::string job = check_job_name(msg.job, sizeof msg.job);
    auto it = std::find_if(steps_.begin(), steps_.end(), [&](const Step& s) { return s.job == job; });
    if (unregister) {
        if (it != steps_.end()) steps_.erase(it);
    } else if (job.empty()) {
        reply_to(c, MsgType::ack, EINVAL, "empty step name");
        return;
    } else {
        if (it == steps_.end()) {
            if (steps_.size() >= kMaxSteps) {
                reply_to(c, MsgType::ack, ENOSPC, "step table full");
                return;
            }
            steps_.push_back(Step{});
            it = steps_.end() - 1;
        }
        it->job = job;
        it->uid = msg.uid;
        it->owner = msg.owner_pid;
        it->priority = std::isfinite(msg.priority) ? msg.priority : kLowestPriority;
    }
    apply_priorities();
    if (log_.enabled(LogLevel::verbose))
        log_.write(LogLevel::verbose,
                   std::string("kerneld: ") + (unregister ? "unregistered" : "registered") + " step " + job +
                       " uid " + std::to_string(msg.uid) + " priority " + std::to_string(msg.priority));
    reply_to(c, MsgType::ack, 0, "ok");
}

void KernelDaemon::apply_priorities() {
    for (std::uint32_t id = 0; id < conns_.size(); ++id) {
        Conn& c = conns_[id];
        if (!c.used || !c.attached) continue;
        const double p = priority_for(c);
        if (p != c.priority) {
            c.priority = p;
            c.reply->priority = p;
            admission_.set_client(id, p);
            clients_changed_ = true;
        }
    }
}

int KernelDaemon::job_index(const std::string& job) {
    const std::string name = job.empty() ? "(none)" : job;
    for (std::size_t i = 0; i < job_names_.size(); ++i)
        if (job_names_[i] == name) return static_cast<int>(i);
    for (std::size_t i = 0; i < job_names_.size(); ++i) {
        if (job_names_[i].empty()) {
            job_names_[i] = name;
            return static_cast<int>(i);
        }
    }
    return -1;  // table full: the client still runs, its statistics are not published
}

KernelDaemon::JobTotals KernelDaemon::totals_of(const Conn& c, std::uint32_t id) const {
    const AdmissionStats a = admission_.stats(id);
    JobTotals t;
    t.launches = c.launches;
    t.admitted = a.admitted;
    t.held = a.held;
    t.completed = a.completed;
    t.wait_ns_total = a.wait_ns_total;
    t.wait_ns_max = a.wait_ns_max;
    t.dropped =
        c.channel != nullptr
            ? std::min<std::uint64_t>(c.channel->header.dropped.load(std::memory_order_relaxed), 1ULL << 48)
            : 0;
    t.refused = c.refused;
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
    refused += t.refused;
}

std::vector<KernelDaemon::JobView> KernelDaemon::job_views() const {
    std::vector<JobView> jobs(kMaxJobs);
    for (std::size_t j = 0; j < kMaxJobs; ++j) {
        jobs[j].totals = departed_[j];
        jobs[j].by_entry = entry_totals_[j];
    }
    for (std::uint32_t id = 0; id < conns_.size(); ++id) {
        const Conn& c = conns_[id];
        if (!c.used || !c.attached || c.job_index < 0) continue;
        JobView& v = jobs[static_cast<std::size_t>(c.job_index)];
        v.totals.add(totals_of(c, id));
        for (std::size_t e = 0; e < v.by_entry.size(); ++e) v.by_entry[e] += c.by_entry[e];
        v.clients_live += 1;
        v.priority = c.priority;
    }
    return jobs;
}

void KernelDaemon::drop(std::uint32_t id) {
    Conn& c = conns_[id];
    if (!c.used) return;
    if (c.attached) {
        // Count what it left (bounded: one ring's worth) so its last completions are not lost.
        drain(id, c, kRingSize, monotonic_ns());
        if (c.job_index >= 0) {
            const auto j = static_cast<std::size_t>(c.job_index);
            departed_[j].add(totals_of(c, id));
            for (std::size_t e = 0; e < entry_totals_[j].size(); ++e) entry_totals_[j][e] += c.by_entry[e];
        }
        admission_.remove_client(id);
        clients_changed_ = true;
        if (log_.enabled(LogLevel::verbose))
            log_.write(LogLevel::verbose, "kerneld: client pid " + std::to_string(c.pid) + " left");
    }
    if (c.sock.valid()) epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c.sock.get(), nullptr);
    const std::uint32_t generation = c.generation;
    c = Conn{};
    c.generation = generation;
}

const KernelDaemon::FuncMeta* KernelDaemon::function(Conn& c, std::uint32_t index) {
    if (index >= kMaxFuncs) return nullptr;
    if (c.funcs.size() <= index) c.funcs.resize(index + 1);
    FuncMeta& m = c.funcs[index];
    if (!m.known) {
        const FuncInfo& shared = c.channel->funcs[index];
        if (shared.ready.load(std::memory_order_acquire) == 0) return nullptr;
        FuncInfo copy;  // one copy out of shared memory, then only the copy is looked at
        std::memcpy(static_cast<void*>(&copy), static_cast<const void*>(&shared), sizeof copy);
        const CheckedFunc f = check_func(copy);
        m.name = f.name;
        m.regs = f.regs;
        m.static_smem = f.static_smem;
        m.name_hash = fnv1a64(m.name);
        m.cls = profiles_.kernel_class(m.name);
        m.prior_ns = profiles_.imported_duration_ns(m.name);
        m.known = true;
    }
    return &m;
}

std::uint64_t KernelDaemon::stream_id(Conn& c, std::uint64_t handle) {
    if (auto it = c.streams.find(handle); it != c.streams.end()) return it->second;
    if (c.streams.size() >= kMaxStreamsPerClient) return kMaxStreamsPerClient;
    const auto id = static_cast<std::uint64_t>(c.streams.size());
    c.streams.emplace(handle, id);
    return id;
}

AdmissionRequest KernelDaemon::describe(std::uint32_t id, Conn& c, const CheckedRecord& r, std::uint64_t seq,
                                        std::uint64_t now_ns) {
    AdmissionRequest q;
    q.client = id;
    q.seq = seq;
    q.stream = stream_id(c, r.stream);
    q.submitted_ns = now_ns;
    q.tracked = (r.flags & kFlagUntracked) == 0;
    const GpuLimits& g = c.limits;
    std::uint64_t prior_ns = config_.default_kernel_ns;
    if (r.func_index == kGraphFunc) {
        // A graph is many kernels in one call; without walking it, assume it fills the GPU.
        q.key = kernel_key(fnv1a64("cuGraphLaunch") ^ c.key_salt, r.arg);
        q.demand.sms = g.sm_count;
        q.demand.cls = KernelClass::unknown;
    } else {
        const FuncMeta* m = function(c, r.func_index);
        const std::uint32_t per_sm =
            blocks_per_sm(g, r.threads, m != nullptr ? m->regs : 0,
                          std::uint64_t{m != nullptr ? m->static_smem : 0} + r.smem_dynamic);
        q.demand.sms = sms_needed(g, r.blocks, per_sm);
        q.demand.cls = m != nullptr ? m->cls : KernelClass::unknown;
        if (m != nullptr) prior_ns = m->prior_ns;
        const LaunchShape shape{r.grid_x,  r.grid_y,  r.grid_z,      r.block_x,
                                r.block_y, r.block_z, r.smem_dynamic};
        q.key = kernel_key((m != nullptr ? m->name_hash : 0) ^ c.key_salt, shape);
    }
    q.demand.bw = bandwidth_demand(q.demand.cls, q.demand.sms, g.sm_count);
    q.demand.duration_ns = profiles_.expected_duration_ns(q.key, prior_ns);
    return q;
}

void KernelDaemon::handle_record(std::uint32_t id, Conn& c, const RecordBody& body, std::uint64_t seq,
                                 std::uint64_t now_ns) {
    CheckedRecord r;
    if (check_record(body, kMaxFuncs, r) != Refusal::none) {
        c.refused += 1;
        refused_total_ += 1;
        return;
    }
    if (r.type == RecordType::complete) {
        const std::uint64_t at = r.time_ns != 0 ? std::min(r.time_ns, now_ns) : now_ns;
        if (auto done = admission_.complete(id, r.arg, at))
            profiles_.observe_duration(done->key, done->duration_ns);
        return;
    }
    c.launches += 1;
    c.by_entry[static_cast<int>(r.entry)] += 1;
    if ((r.flags & kFlagCaptured) != 0) {
        c.captured += 1;
        return;
    }
    AdmissionRequest q = describe(id, c, r, seq, now_ns);
    switch (r.type) {
        case RecordType::launch:
            // Observe mode: no completion follows; the kernel counts as running for its expected time.
            q.tracked = false;
            admission_.note_running(q, now_ns);
            break;
        case RecordType::request:
            if (c.mode == ClientMode::enforce)
                admission_.submit(q);
            else
                admission_.note_running(q, now_ns);
            break;
        case RecordType::started:
            admission_.note_running(q, now_ns);
            break;
        case RecordType::complete:
            break;
    }
}

std::uint32_t KernelDaemon::drain(std::uint32_t id, Conn& c, std::uint32_t budget, std::uint64_t now_ns) {
    std::uint32_t n = 0;
    RecordBody body{};
    while (n < budget && ring_take(*c.channel, c.head, body)) {
        handle_record(id, c, body, c.head, now_ns);
        ++n;
    }
    return n;
}

bool KernelDaemon::poll_once(std::uint64_t now_ns) {
    if (last_socket_ns_ == 0 || now_ns >= last_socket_ns_ + kSocketPollNs) service_sockets(0);
    bool activity = false;
    // Round robin with a per-client budget: one busy (or hostile) client cannot starve the others.
    const auto slots = static_cast<std::uint32_t>(conns_.size());
    for (std::uint32_t k = 0; k < slots; ++k) {
        const std::uint32_t id = (rr_ + k) % slots;
        Conn& c = conns_[id];
        if (!c.used || !c.attached) continue;
        if (drain(id, c, kRecordsPerTick, now_ns) > 0) activity = true;
    }
    rr_ = (rr_ + 1) % slots;
    // Expiry walks every in-flight list: at most every 10 us, it only releases estimates.
    if (activity || now_ns >= last_expire_ns_ + 10000) {
        admission_.expire(now_ns);
        last_expire_ns_ = now_ns;
    }
    grants_.clear();
    admission_.admit(now_ns, grants_);
    for (const Grant& g : grants_) {
        if (g.client >= conns_.size()) continue;
        Conn& c = conns_[g.client];
        if (!c.used || !c.attached) continue;
        if (c.reply->granted_upto.load(std::memory_order_relaxed) < g.seq)
            c.reply->granted_upto.store(g.seq, std::memory_order_release);
        c.reply->grant_futex.fetch_add(1, std::memory_order_release);
        // `waiters` is the client's word: a lie costs it a missed wake-up or us one syscall.
        if (c.channel->header.waiters.load(std::memory_order_seq_cst) != 0)
            futex_wake_all(&c.reply->grant_futex);
        if (trace_ != nullptr) {
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
        for (std::uint32_t id = 0; id < conns_.size(); ++id) {
            Conn& c = conns_[id];
            if (!c.used || !c.attached || c.mode != ClientMode::enforce) continue;
            const bool bypass = admission_.is_protected(id);
            if (bypass != c.bypass) {
                c.bypass = bypass;
                c.reply->bypass.store(bypass ? 1 : 0, std::memory_order_relaxed);
            }
        }
    }
    if (now_ns >= last_housekeeping_ns_ + kHousekeepingNs) housekeeping(now_ns);
    return activity;
}

void KernelDaemon::housekeeping(std::uint64_t now_ns) {
    last_housekeeping_ns_ = now_ns;
    for (std::uint32_t id = 0; id < conns_.size(); ++id) {
        const Conn& c = conns_[id];
        // A connection that never says hello (or a registrar that never asks) holds a slot only
        // until its deadline.
        if (c.used && !c.attached && now_ns > c.accepted_ns + kHelloDeadlineNs) drop(id);
    }
    const std::size_t before = steps_.size();
    steps_.erase(
        std::remove_if(steps_.begin(), steps_.end(), [](const Step& s) { return !pid_alive(s.owner); }),
        steps_.end());
    if (steps_.size() != before) apply_priorities();
    publish_jobs();
}

void KernelDaemon::publish_jobs() {
    StatusFile* st = status();
    if (st == nullptr) return;
    st->header.clients_active.store(static_cast<std::uint32_t>(clients()), std::memory_order_relaxed);
    const std::vector<JobView> jobs = job_views();
    for (std::size_t j = 0; j < kMaxJobs; ++j) {
        if (job_names_[j].empty()) continue;
        const JobView& job = jobs[j];
        JobStats& s = st->jobs[j];
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
        s.refused = job.totals.refused;
        std::atomic_thread_fence(std::memory_order_release);
        s.version.store(v + 2, std::memory_order_release);
    }
}

void KernelDaemon::run(const std::atomic<bool>& stop) {
    StatusHeader& h = status()->header;
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
        // Sleep until a client rings (a one-byte message on its socket: enforce requests do when
        // they see us asleep), a connection arrives, or the timeout.
        h.daemon_sleeping.store(1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (poll_once(now)) {
            h.daemon_sleeping.store(0, std::memory_order_relaxed);
            last_activity = now;
            continue;
        }
        const std::uint64_t timeout =
            admission_.waiting() > 0 ? std::min<std::uint64_t>(config_.sleep_ns, 100000) : config_.sleep_ns;
        service_sockets(timeout);
        h.daemon_sleeping.store(0, std::memory_order_relaxed);
    }
    publish_jobs();
}

std::string KernelDaemon::stats_json() const {
    nlohmann::json out;
    out["gpu"] = config_.gpu_index;
    out["endpoint"] = config_.socket_path;
    out["refused_records"] = refused_total_;
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
                        {"priority", view.priority},
                        {"launches", t.launches},
                        {"by_entry", entries},
                        {"admitted", t.admitted},
                        {"held", t.held},
                        {"completed", t.completed},
                        {"wait_us_total", static_cast<double>(t.wait_ns_total) / 1000.0},
                        {"wait_us_max", static_cast<double>(t.wait_ns_max) / 1000.0},
                        {"dropped", t.dropped},
                        {"refused", t.refused}});
    }
    out["jobs"] = jobs;
    return out.dump(2);
}

void KernelDaemon::shutdown() {
    if (!status_map_) return;
    // Count what clients posted before we stop: a test may kill us right after its clients end.
    service_sockets(0);
    poll_once(monotonic_ns());
    for (std::uint32_t id = 0; id < conns_.size(); ++id)
        if (conns_[id].used && conns_[id].attached && !pid_alive(conns_[id].pid)) drop(id);
    publish_jobs();
    if (!config_.stats_file.empty()) {
        std::ofstream out(config_.stats_file);
        out << stats_json() << "\n";
        if (!out && log_.enabled(LogLevel::error))
            log_.write(LogLevel::error, "cannot write statistics file " + config_.stats_file);
    }
    // Clients of this daemon fail open on the stale heartbeat (and the hang-up); new ones must
    // not connect.
    unlink(config_.socket_path.c_str());
    unlink(config_.status_file.c_str());
    if (!config_.pid_file.empty()) unlink(config_.pid_file.c_str());
}

}  // namespace explsched::ksched
