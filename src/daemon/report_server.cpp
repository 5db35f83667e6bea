#include "daemon/report_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include "core/base/errno_text.hpp"
#include "core/report/curve_wire.hpp"
#include "daemon/authenticator.hpp"

namespace explsched::daemon {

namespace {

constexpr uint64_t kListenKey = ~uint64_t{0};
constexpr uint64_t kDoneKey = kListenKey - 1;
constexpr uint64_t kSignalKey = kListenKey - 2;

std::string peer_name(const sockaddr_storage& addr) {
    char host[INET6_ADDRSTRLEN] = "?";
    uint16_t port = 0;
    if (addr.ss_family == AF_INET) {
        const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
    }
    return std::string(host) + ":" + std::to_string(port);
}

double wall_clock() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

wire::Reply busy_reply(std::string message) {
    wire::Reply r;
    r.status = wire::ReplyStatus::retry;
    r.code = wire::Code::busy;
    r.message = std::move(message);
    return r;
}

}  // namespace

ReportServer::ReportServer(const ServerOptions& options, JobOwners& owners, Committer& committer,
                           CompletionQueue& done, Logger& log)
    : options_(options),
      owners_(owners),
      committer_(committer),
      done_(done),
      log_(log),
      self_uid_(static_cast<uint32_t>(geteuid())) {}

ReportServer::~ReportServer() {
    auth_queue_.close();
    for (auto& t : workers_) t.join();
    // The sockets and the epoll instance close with their members.
}

Result<std::unique_ptr<ReportServer>> ReportServer::create(const ServerOptions& options, JobOwners& owners,
                                                           Committer& committer, CompletionQueue& done,
                                                           Logger& log) {
    std::unique_ptr<ReportServer> s(new ReportServer(options, owners, committer, done, log));
    const std::string where = options.host + ":" + std::to_string(options.port);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const std::string port = std::to_string(options.port);
    if (int rc = getaddrinfo(options.host.c_str(), port.c_str(), &hints, &res); rc != 0)
        return make_error("cannot resolve report_host " + where + ": " + gai_strerror(rc));
    std::string last_error = "no address";
    for (addrinfo* ai = res; ai != nullptr && !s->listen_fd_.valid(); ai = ai->ai_next) {
        Fd fd(socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
        if (!fd.valid()) {
            last_error = errno_text(errno);
            continue;
        }
        const int one = 1;
        setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd.get(), 1024) != 0) {
            last_error = errno_text(errno);
            continue;
        }
        s->listen_fd_ = std::move(fd);
    }
    freeaddrinfo(res);
    if (!s->listen_fd_.valid()) return make_error("cannot listen on " + where + ": " + last_error);
    s->address_ = where;

    s->epoll_fd_.reset(epoll_create1(EPOLL_CLOEXEC));
    if (!s->epoll_fd_.valid()) return make_error("epoll_create1: " + errno_text(errno));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenKey;
    epoll_ctl(s->epoll_fd_.get(), EPOLL_CTL_ADD, s->listen_fd_.get(), &ev);
    ev.data.u64 = kDoneKey;
    epoll_ctl(s->epoll_fd_.get(), EPOLL_CTL_ADD, done.fd(), &ev);

    const int threads = options.auth_threads < 1 ? 1 : options.auth_threads;
    for (int i = 0; i < threads; ++i) s->workers_.emplace_back([p = s.get()] { p->auth_worker(); });
    return s;
}

void ReportServer::auth_worker() {
    Authenticator auth(options_.munge_socket, owners_, options_.limits, rates_, options_.db_path);
    for (;;) {
        auto tasks = auth_queue_.pop(4);
        if (tasks.empty()) return;
        std::vector<Completion> out;
        out.reserve(tasks.size());
        for (const auto& t : tasks) {
            Completion c;
            c.stage = Completion::Stage::auth;
            c.ticket = t.ticket;
            if (t.request.curve) {
                c.text = auth.read_curve(t.request, t.rate_charged, c.authenticated);
                out.push_back(std::move(c));
                continue;
            }
            AuthResult r = auth.check(t.request, t.rate_charged);
            c.uid = r.uid;
            c.job_submit = r.job_submit;
            c.job_restarts = r.job_restarts;
            c.authenticated = r.authenticated;
            if (!r.ok) c.reply = std::move(r.refusal);
            out.push_back(std::move(c));
        }
        done_.post(std::move(out));
    }
}

Status ReportServer::run(int signal_fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kSignalKey;
    epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, signal_fd, &ev);
    log(LogLevel::info, "listening on " + address_);

    std::chrono::steady_clock::time_point deadline{};
    epoll_event events[256];
    time_t last_idle_check = time(nullptr);
    for (;;) {
        if (stopping_) {
            // Close whatever has nothing left to say; leave when no connection remains.
            std::vector<uint64_t> finished;
            for (auto& [id, c] : conns_)
                if (c.slots.empty() && c.out_off >= c.out.size()) finished.push_back(id);
            for (uint64_t id : finished) close_connection(id);
            if (conns_.empty()) break;
            if (std::chrono::steady_clock::now() > deadline) {
                log(LogLevel::error, "shutdown: " + std::to_string(conns_.size()) +
                                         " connection(s) still waiting after " +
                                         std::to_string(options_.shutdown_grace_s) + " s; closing them");
                break;
            }
        }
        const int n = epoll_wait(epoll_fd_.get(), events, 256, 1000);
        if (n < 0) {
            if (errno == EINTR) continue;
            return make_error("epoll_wait: " + errno_text(errno));
        }
        for (int i = 0; i < n; ++i) {
            const uint64_t key = events[i].data.u64;
            if (key == kListenKey) {
                accept_clients();
            } else if (key == kDoneKey) {
                on_completions();
            } else if (key == kSignalKey) {
                signalfd_siginfo si{};
                if (::read(signal_fd, &si, sizeof si) != sizeof si) continue;
                if (si.ssi_signo == SIGUSR1) {
                    log_stats();
                } else if ((si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) && !stopping_) {
                    log(LogLevel::info, std::string("caught ") + strsignal(static_cast<int>(si.ssi_signo)) +
                                            ": finishing reports in flight");
                    stopping_ = true;
                    deadline =
                        std::chrono::steady_clock::now() + std::chrono::seconds(options_.shutdown_grace_s);
                    epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, listen_fd_.get(), nullptr);
                    listen_fd_.reset();
                    for (auto& [id, c] : conns_) {
                        c.read_closed = true;
                        update_interest(c);
                    }
                }
            } else {
                auto it = conns_.find(key);
                if (it == conns_.end()) continue;
                Connection& c = it->second;
                if (events[i].events & EPOLLERR) {
                    close_connection(key);
                    continue;
                }
                if (events[i].events & EPOLLIN) on_readable(c);
                if (conns_.count(key) == 0) continue;
                if (events[i].events & EPOLLHUP) {
                    // Both directions are shut: nobody will read a reply, and a level-triggered
                    // HUP would wake this loop until the reports in flight finish. Those still
                    // complete (and are stored); their replies are dropped.
                    close_connection(key);
                    continue;
                }
                if (events[i].events & EPOLLOUT) after_activity(c);
            }
        }
        const time_t now = time(nullptr);
        if (now != last_idle_check) {
            last_idle_check = now;
            check_idle(now);
        }
    }
    log_stats();
    return {};
}

void ReportServer::accept_clients() {
    for (int i = 0; i < 64; ++i) {
        sockaddr_storage addr{};
        socklen_t len = sizeof addr;
        Fd fd(accept4(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len,
                      SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!fd.valid()) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
                log(LogLevel::error, "accept: " + errno_text(errno));
            return;
        }
        const DaemonLimits& limits = options_.limits;
        if (conns_.size() >= limits.max_connections) {
            refuse_connection(fd, "explschedd: too many connections in all (max_connections=" +
                                      std::to_string(limits.max_connections) + ")");
            ++rejected_busy_;
            continue;
        }
        PeerIdentity who = identifier_.identify(fd.get());
        const bool limited = !exempt(who);
        const std::string key = who.key();
        if (limited) {
            const std::size_t cap = who.uid ? limits.max_conns_per_user : limits.max_conns_per_host;
            if (conns_per_peer_[key] >= cap) {
                refuse_connection(fd, who.uid ? "explschedd: too many connections from this user on " +
                                                    who.address +
                                                    " (max_conns_per_user=" + std::to_string(cap) + ")"
                                              : "explschedd: too many connections from " + who.address +
                                                    " (max_conns_per_host=" + std::to_string(cap) + ")");
                ++rejected_peer_;
                continue;
            }
            ++conns_per_peer_[key];
        }
        const int one = 1;
        setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const uint64_t id = next_conn_id_++;
        Connection& c = conns_[id];
        c.fd = std::move(fd);
        c.id = id;
        c.peer = peer_name(addr);
        c.who = std::move(who);
        c.peer_key = key;
        c.limited = limited;
        c.last_activity = time(nullptr);
        c.accepted_at = c.last_activity;
        ++accepted_;
        epoll_event ev{};
        ev.events = 0;
        ev.data.u64 = id;
        epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, c.fd.get(), &ev);
        update_interest(c);
        log(LogLevel::debug,
            "connection " + std::to_string(id) + " from " + c.peer + " (" + c.peer_key + ")");
    }
}

bool ReportServer::exempt(const PeerIdentity& who) const {
    return who.uid && (*who.uid == 0 || *who.uid == self_uid_);
}

void ReportServer::refuse_connection(const Fd& fd, const std::string& message) {
    // Tell the client why, then hang up (the Fd closes with its owner); a non-blocking write of
    // one short line never stalls the loop.
    const std::string text = wire::format_reply(busy_reply(message));
    [[maybe_unused]] const ssize_t w =
        ::send(fd.get(), text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    log(LogLevel::verbose, message);
}

bool ReportServer::want_read(const Connection& c) const {
    return !c.read_closed && !stopping_ && c.slots.size() < options_.max_inflight_per_conn &&
           c.out.size() - c.out_off < options_.max_output_bytes && inflight_ < options_.max_inflight_total &&
           c.framer.room() > 0;
}

void ReportServer::update_interest(Connection& c) {
    uint32_t events = 0;
    if (want_read(c)) events |= EPOLLIN;
    if (c.out_off < c.out.size()) events |= EPOLLOUT;
    if (events == c.interest) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = c.id;
    epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, c.fd.get(), &ev);
    c.interest = events;
    if (!(events & EPOLLIN) && !c.read_closed && !c.paused && inflight_ >= options_.max_inflight_total) {
        c.paused = true;
        paused_.push_back(c.id);
    }
}

void ReportServer::on_readable(Connection& c) {
    if (!want_read(c)) {
        if (c.read_closed && c.slots.empty() && c.out_off >= c.out.size()) {
            close_connection(c.id);  // hung up and nothing left to answer
            return;
        }
        update_interest(c);
        return;
    }
    char buf[16384];
    const std::size_t room = std::min(sizeof buf, c.framer.room());
    const ssize_t n = ::recv(c.fd.get(), buf, room, 0);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
        log(LogLevel::debug, "connection " + std::to_string(c.id) + ": " + errno_text(errno));
        close_connection(c.id);
        return;
    }
    c.last_activity = time(nullptr);
    if (n == 0) {
        c.read_closed = true;  // the client sent everything; answer what is in flight
    } else {
        c.framer.append(std::string_view(buf, static_cast<std::size_t>(n)));
    }
    process_lines(c);
    after_activity(c);
}

void ReportServer::process_lines(Connection& c) {
    std::string line;
    while (c.slots.size() < options_.max_inflight_per_conn && inflight_ < options_.max_inflight_total &&
           c.out.size() - c.out_off < options_.max_output_bytes && !c.curve_pending) {
        const auto next = c.framer.next(line);
        if (next == wire::LineFramer::Next::need_more) break;
        if (next == wire::LineFramer::Next::too_long) {
            wire::Reply r;
            r.status = wire::ReplyStatus::refused;
            r.code = wire::Code::line_too_long;
            r.message = "request line longer than " + std::to_string(wire::kMaxLineBytes) +
                        " bytes; closing the connection";
            add_done_slot(c, r);
            c.read_closed = true;
            log(LogLevel::verbose,
                "connection " + std::to_string(c.id) + " from " + c.peer + ": " + r.message);
            break;
        }
        if (line.empty()) continue;
        handle_line(c, line);
    }
}

void ReportServer::handle_line(Connection& c, const std::string& line) {
    ++lines_;
    wire::Code code = wire::Code::none;
    const bool curve = wire::is_curve_request(line);
    auto req = curve ? wire::parse_curve_request(line, &code) : wire::parse_request(line, &code);
    if (!req) {
        ++refused_early_;
        wire::Reply r;
        r.status = wire::ReplyStatus::refused;
        r.code = code == wire::Code::none ? wire::Code::bad_request : code;
        r.message = req.error().message;
        add_done_slot(c, r);
        log(LogLevel::verbose, "refused from " + c.peer + ": " + r.message);
        return;
    }
    // Charge the rate before munge where the kernel told who the peer is: a flood is answered here,
    // at the cost of parsing a line, and never reaches munged or slurmctld.
    const DaemonLimits& limits = options_.limits;
    bool charged = false;
    if (c.who.uid) {
        if (!exempt(c.who)) {
            if (!rates_.take("uid=" + std::to_string(*c.who.uid), limits.user_rate, limits.user_burst,
                             RateLimiter::Clock::now(), curve ? kCurveReadCost : 1.0)) {
                ++rate_limited_;
                add_done_slot(c, rate_limited_reply(req->body, limits));
                return;
            }
            charged = true;
        }
    } else if (!rates_.take("host=" + c.who.address, limits.host_rate, limits.host_burst,
                            RateLimiter::Clock::now(), curve ? kCurveReadCost : 1.0)) {
        ++rate_limited_;
        wire::Reply r = rate_limited_reply(req->body, limits);
        r.message = "too many reports from " + c.who.address +
                    ": the limit is host_rate=" + std::to_string(static_cast<int64_t>(limits.host_rate)) +
                    " reports/s; not stored, send it later";
        add_done_slot(c, r);
        return;
    }
    Slot slot;
    slot.seq = c.next_seq++;
    slot.state = Slot::State::authing;
    slot.input.body = req->body;
    c.slots.push_back(std::move(slot));
    ++inflight_;
    // One curve at a time per connection: its answer may be large (wire::kMaxCurvePoints lines).
    if (curve) c.curve_pending = true;
    auth_queue_.push(c.peer_key, AuthTask{Ticket{c.id, c.slots.back().seq}, std::move(req).value(), charged});
}

void ReportServer::add_done_slot(Connection& c, const wire::Reply& reply) {
    Slot slot;
    slot.seq = c.next_seq++;
    slot.state = Slot::State::done;
    slot.reply = wire::format_reply(reply);
    c.slots.push_back(std::move(slot));
}

void ReportServer::on_completions() {
    std::vector<uint64_t> touched;
    for (Completion& comp : done_.take()) {
        auto it = conns_.find(comp.ticket.conn);
        if (it == conns_.end()) {
            // The client left: its task leaves flight here (a committed report stays stored). Tasks
            // of closed connections count until they finish, so connect-send-hang-up loops cannot
            // pile up work behind the limits.
            --inflight_;
            continue;
        }
        Connection& c = it->second;
        if (c.slots.empty() || comp.ticket.seq < c.slots.front().seq ||
            comp.ticket.seq - c.slots.front().seq >= c.slots.size()) {
            log(LogLevel::error,
                "internal: completion for an unknown request on connection " + std::to_string(c.id));
            continue;
        }
        Slot& slot = c.slots[comp.ticket.seq - c.slots.front().seq];
        if (comp.authenticated) c.authenticated = true;
        if (comp.text) {
            --inflight_;
            slot.state = Slot::State::done;
            slot.reply = std::move(*comp.text);
            c.curve_pending = false;
        } else if (comp.reply) {
            --inflight_;
            slot.state = Slot::State::done;
            slot.reply = wire::format_reply(*comp.reply);
            if (comp.reply->status == wire::ReplyStatus::refused && log_.enabled(LogLevel::verbose))
                log(LogLevel::verbose, "refused from " + c.peer + ": " + comp.reply->message);
        } else {
            slot.state = Slot::State::authed;
            slot.input.uid = comp.uid;
            slot.input.job_submit = comp.job_submit;
            slot.input.job_restarts = comp.job_restarts;
        }
        if (touched.empty() || touched.back() != c.id) touched.push_back(c.id);
    }
    for (uint64_t id : touched) {
        auto it = conns_.find(id);
        if (it != conns_.end()) after_activity(it->second);
    }
}

void ReportServer::advance(Connection& c) {
    // Commit in request order: a report waits for the munge check of every earlier report on its
    // connection, so two pipelined steps of a job never reach the database swapped.
    for (Slot& slot : c.slots) {
        if (slot.state == Slot::State::authing) break;
        if (slot.state == Slot::State::authed) {
            slot.state = Slot::State::committing;
            slot.input.server_time = wall_clock();
            committer_.push(CommitTask{Ticket{c.id, slot.seq}, slot.input});
        }
    }
    while (!c.slots.empty() && c.slots.front().state == Slot::State::done) {
        c.out += c.slots.front().reply;
        c.slots.pop_front();
    }
}

void ReportServer::flush(Connection& c) {
    while (c.out_off < c.out.size()) {
        const ssize_t n =
            ::send(c.fd.get(), c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
            close_connection(c.id);
            return;
        }
        c.out_off += static_cast<std::size_t>(n);
    }
    if (c.out_off == c.out.size()) {
        c.out.clear();
        c.out_off = 0;
    } else if (c.out_off > 16384) {
        c.out.erase(0, c.out_off);
        c.out_off = 0;
    }
}

void ReportServer::after_activity(Connection& c) {
    const uint64_t id = c.id;
    advance(c);
    flush(c);
    if (conns_.count(id) == 0) return;
    if (c.read_closed && c.slots.empty() && c.out_off >= c.out.size()) {
        close_connection(id);
        return;
    }
    process_lines(c);  // room may have freed for lines already buffered
    advance(c);
    flush(c);
    if (conns_.count(id) == 0) return;
    update_interest(c);
    if (inflight_ < options_.max_inflight_total * 3 / 4) resume_paused();
}

void ReportServer::close_connection(uint64_t id) {
    auto it = conns_.find(id);
    if (it == conns_.end()) return;
    Connection& c = it->second;
    // Authenticated reports not yet handed to the committer never complete: they leave flight now.
    // Those with a worker or the committer leave when their completion arrives.
    for (const Slot& s : c.slots)
        if (s.state == Slot::State::authed) --inflight_;
    epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
    c.fd.reset();
    if (c.limited) {
        auto counted = conns_per_peer_.find(c.peer_key);
        if (counted != conns_per_peer_.end() && --counted->second == 0) conns_per_peer_.erase(counted);
    }
    log(LogLevel::debug, "connection " + std::to_string(id) + " from " + c.peer + " closed");
    conns_.erase(it);
}

void ReportServer::check_idle(time_t now) {
    const DaemonLimits& limits = options_.limits;
    std::vector<uint64_t> late, idle;
    for (auto& [id, c] : conns_) {
        // Unauthenticated past the deadline: closed even with reports in flight (whose replies,
        // refusals all so far, are dropped), or a stream of garbage would keep it open.
        if (!c.authenticated && now - c.accepted_at >= static_cast<time_t>(limits.auth_deadline))
            late.push_back(id);
        else if (c.slots.empty() && now - c.last_activity > static_cast<time_t>(limits.idle_timeout))
            idle.push_back(id);
    }
    for (uint64_t id : late) {
        auto it = conns_.find(id);
        log(LogLevel::verbose, "connection " + std::to_string(id) + " from " + it->second.peer +
                                   ": nothing authenticated within auth_deadline=" +
                                   std::to_string(limits.auth_deadline) + "s; closed");
        close_connection(id);
    }
    for (uint64_t id : idle) close_connection(id);
    auth_deadline_closed_ += late.size();
    idle_closed_ += idle.size();
    if (now - last_prune_ >= 60) {
        last_prune_ = now;
        rates_.prune(std::min(limits.user_rate, limits.host_rate),
                     std::max(limits.user_burst, limits.host_burst));
    }
}

void ReportServer::resume_paused() {
    std::vector<uint64_t> ids;
    ids.swap(paused_);
    for (uint64_t id : ids) {
        auto it = conns_.find(id);
        if (it == conns_.end()) continue;
        it->second.paused = false;
        update_interest(it->second);
    }
}

void ReportServer::log_stats() {
    const CommitStats& s = committer_.stats();
    log(LogLevel::info,
        "stats: connections open=" + std::to_string(conns_.size()) +
            " accepted=" + std::to_string(accepted_) + " turned_away=" + std::to_string(rejected_busy_) +
            " turned_away_per_peer=" + std::to_string(rejected_peer_) + " closed_unauthenticated=" +
            std::to_string(auth_deadline_closed_) + " closed_idle=" + std::to_string(idle_closed_) +
            " rate_limited=" + std::to_string(rate_limited_) + " lines=" + std::to_string(lines_) +
            " refused_unparsed=" + std::to_string(refused_early_) + " stored=" +
            std::to_string(s.stored.load()) + " duplicate=" + std::to_string(s.duplicates.load()) +
            " refused_by_store=" + std::to_string(s.refused.load()) +
            " failed=" + std::to_string(s.failed.load()) + " commits=" + std::to_string(s.batches.load()));
}

}  // namespace explsched::daemon
