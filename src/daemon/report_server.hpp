// explschedd's network side: one epoll loop owns every socket; munge checks run on a few worker
// threads (munge_decode blocks on munged) and database writes on the committer thread.
//
// Limits keep a hostile or broken client from hurting others (daemon_limits.hpp has the values):
//  - a peer is identified by its address and, when its socket is on this host, by the uid owning
//    it (peer_identity.hpp); connections are limited per identity (max_conns_per_user for a local
//    uid, max_conns_per_host for a remote address) and in all (max_connections); past a limit the
//    client gets a `retry code=busy` reply naming the limit and is closed; root and explschedd's
//    own uid are not limited per identity;
//  - a connection must get a report authenticated within auth_deadline seconds of connecting, and
//    an authenticated one is closed after idle_timeout seconds with nothing in flight;
//  - reports are charged to token buckets: a local peer's uid before munge (a flood is answered
//    `retry code=rate_limited` without costing a munge check), a remote address before munge
//    (host_rate) and its uid after it (user_rate);
//  - munge checks are served round-robin between peers (FairQueue), so one user's queued reports
//    delay another's by one check, not by the whole queue;
//  - a request line is at most wire::kMaxLineBytes; a longer one is refused and the connection
//    closed without buffering the line;
//  - each connection has at most max_inflight_per_conn reports between read and reply, and at
//    most max_output_bytes of unsent replies; past either, the loop stops reading from it (TCP
//    flow control then slows the sender) while it keeps serving everyone else;
//  - every connection gets at most one read per loop turn, so a flooding client cannot starve
//    a polite one.
// Replies leave in request order on each connection.
#pragma once

#include <cstdint>
#include <ctime>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/base/fd.hpp"
#include "core/base/log.hpp"
#include "core/base/result.hpp"
#include "core/report/report_wire.hpp"
#include "daemon/committer.hpp"
#include "daemon/daemon_limits.hpp"
#include "daemon/job_owners.hpp"
#include "daemon/peer_identity.hpp"
#include "daemon/pipeline.hpp"
#include "daemon/rate_limiter.hpp"

namespace explsched::daemon {

struct ServerOptions {
    std::string host = "127.0.0.1";
    uint16_t port = 6828;
    std::string munge_socket;
    std::string db_path;  // read for curve requests (curve_wire.hpp)
    DaemonLimits limits;
    std::size_t max_inflight_per_conn = 64;
    std::size_t max_inflight_total = 16384;
    std::size_t max_output_bytes = std::size_t{64} * 1024;
    int auth_threads = 4;
    int shutdown_grace_s = 10;
};

class ReportServer {
public:
    // Binds and listens (so a bad address fails before the daemon detaches) and starts workers.
    static Result<std::unique_ptr<ReportServer>> create(const ServerOptions& options, JobOwners& owners,
                                                        Committer& committer, CompletionQueue& done,
                                                        Logger& log);
    ~ReportServer();
    ReportServer(const ReportServer&) = delete;
    ReportServer& operator=(const ReportServer&) = delete;

    // Serves until SIGTERM or SIGINT arrives on signal_fd (a signalfd), then stops reading, waits
    // up to shutdown_grace_s for in-flight reports to be committed and answered, and returns.
    // SIGUSR1 logs counters.
    Status run(int signal_fd);

    // The address actually bound ("127.0.0.1:6828").
    const std::string& address() const { return address_; }

private:
    struct Slot {
        enum class State { authing, authed, committing, done } state = State::authing;
        uint64_t seq = 0;
        ReportInput input;
        std::string reply;
    };
    struct Connection {
        Fd fd;
        uint64_t id = 0;
        std::string peer;      // "address:port", for logs
        PeerIdentity who;      // address and, for a peer on this host, its uid
        std::string peer_key;  // who.key(): what connection limits and fair queueing count by
        bool limited = true;   // counted against the per-peer limit (not root's or our own uid)
        bool authenticated = false;
        bool curve_pending = false;  // a curve read is in flight: read no further requests
        time_t accepted_at = 0;
        wire::LineFramer framer;
        std::deque<Slot> slots;
        uint64_t next_seq = 0;
        std::string out;
        std::size_t out_off = 0;
        bool read_closed = false;  // EOF, an over-long line, or shutdown: read no more
        bool paused = false;       // reading paused by the global in-flight limit
        uint32_t interest = 0;     // epoll events currently registered
        time_t last_activity = 0;
    };

    ReportServer(const ServerOptions& options, JobOwners& owners, Committer& committer, CompletionQueue& done,
                 Logger& log);
    void auth_worker();
    void accept_clients();
    void on_readable(Connection& c);
    void process_lines(Connection& c);
    void handle_line(Connection& c, const std::string& line);
    void add_done_slot(Connection& c, const wire::Reply& reply);
    void on_completions();
    void advance(Connection& c);
    void flush(Connection& c);
    bool want_read(const Connection& c) const;
    void update_interest(Connection& c);
    void close_connection(uint64_t id);
    void after_activity(Connection& c);  // advance, flush, re-arm, close when finished
    void check_idle(time_t now);
    void resume_paused();
    void log_stats();
    bool exempt(const PeerIdentity& who) const;
    void refuse_connection(const Fd& fd, const std::string& message);
    void log(LogLevel level, const std::string& message) {
        if (log_.enabled(level)) log_.write(level, message);
    }

    ServerOptions options_;
    JobOwners& owners_;
    Committer& committer_;
    CompletionQueue& done_;
    Logger& log_;
    std::string address_;
    Fd listen_fd_;
    Fd epoll_fd_;
    bool stopping_ = false;
    uint64_t next_conn_id_ = 1;
    std::size_t inflight_ = 0;
    std::unordered_map<uint64_t, Connection> conns_;
    std::vector<uint64_t> paused_;
    FairQueue<AuthTask> auth_queue_;
    std::vector<std::thread> workers_;
    PeerIdentifier identifier_;
    RateLimiter rates_;
    std::unordered_map<std::string, std::size_t> conns_per_peer_;
    uint32_t self_uid_ = 0;
    time_t last_prune_ = 0;
    uint64_t accepted_ = 0, rejected_busy_ = 0, rejected_peer_ = 0, lines_ = 0, refused_early_ = 0,
             rate_limited_ = 0, auth_deadline_closed_ = 0, idle_closed_ = 0;
};

}  // namespace explsched::daemon
