#include "cli/daemon_curve.hpp"

#include <munge.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "core/base/errno_text.hpp"
#include "core/base/fd.hpp"
#include "core/base/strings.hpp"
#include "core/report/curve_wire.hpp"
#include "core/sched/settings.hpp"

namespace explsched::cli {

namespace {

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return (v != nullptr && *v != '\0') ? v : nullptr;
}

// SlurmUser's uid from "SlurmUser = slurm(64030)" in `scontrol show config`.
std::optional<uint32_t> slurm_user_uid() {
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen("scontrol show config 2>/dev/null", "r"), ::pclose);
    if (!pipe) return std::nullopt;
    char line[1024];
    std::optional<uint32_t> uid;
    while (std::fgets(line, sizeof line, pipe.get()) != nullptr) {
        const std::string_view l = trim(line);
        if (l.rfind("SlurmUser", 0) != 0) continue;
        const auto open = l.find('('), close = l.find(')');
        if (open == std::string_view::npos || close == std::string_view::npos || close < open) continue;
        if (auto n = parse_uint64(l.substr(open + 1, close - open - 1)); n && *n < 0xffffffffULL)
            uid = static_cast<uint32_t>(*n);
    }
    return uid;
}

Result<Fd> connect_to(const std::string& host, uint16_t port, double timeout_s) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* res = nullptr;
    if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0)
        return make_error(std::string("cannot resolve ") + host + ": " + gai_strerror(rc));
    std::string why = "no address";
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout_s);
    tv.tv_usec = static_cast<suseconds_t>((timeout_s - static_cast<double>(tv.tv_sec)) * 1e6);
    for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
        Fd s(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
        if (!s.valid()) continue;
        setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(s.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (::connect(s.get(), ai->ai_addr, ai->ai_addrlen) == 0) {
            freeaddrinfo(res);
            return s;
        }
        why = errno_text(errno);
    }
    freeaddrinfo(res);
    return make_error("cannot connect: " + why);
}

// Reads one line (without '\n') of at most `max` bytes, keeping what follows in `buf`.
Result<std::string> read_line(int fd, std::string& buf, std::size_t max) {
    for (;;) {
        if (const auto nl = buf.find('\n'); nl != std::string::npos) {
            std::string line = buf.substr(0, nl);
            buf.erase(0, nl + 1);
            return line;
        }
        if (buf.size() > max) return make_error("answer line longer than " + std::to_string(max) + " bytes");
        char chunk[65536];
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n == 0) return make_error("explschedd closed the connection");
        if (n < 0) {
            if (errno == EINTR) continue;
            return make_error(errno == EAGAIN || errno == EWOULDBLOCK ? std::string("no answer in time")
                                                                      : "reading: " + errno_text(errno));
        }
        buf.append(chunk, static_cast<std::size_t>(n));
    }
}

}  // namespace

Result<DaemonCurve> read_curve_from_daemon(uint32_t job_id, double timeout_s) {
    auto settings = site_settings();
    if (!settings) return settings.error();
    DaemonCurve out;
    out.address = env("EXPLSCHED_REPORT_ADDR")
                      ? env("EXPLSCHED_REPORT_ADDR")
                      : settings->report_host + ":" + std::to_string(settings->report_port);
    auto hp = wire::parse_host_port(out.address);
    if (!hp) return hp.error();
    const std::string munge_socket =
        env("EXPLSCHED_MUNGE_SOCKET") ? env("EXPLSCHED_MUNGE_SOCKET") : settings->munge_socket;
    std::optional<uint32_t> restrict_to;
    if (const char* e = env("EXPLSCHED_REPORT_UID")) {
        if (auto n = parse_uint64(e); n && *n < 0xffffffffULL) restrict_to = static_cast<uint32_t>(*n);
    } else {
        restrict_to = slurm_user_uid();
    }

    std::unique_ptr<munge_ctx, void (*)(munge_ctx_t)> ctx(munge_ctx_create(), munge_ctx_destroy);
    if (!ctx) return make_error("cannot create a munge context");
    munge_ctx_set(ctx.get(), MUNGE_OPT_CIPHER_TYPE, MUNGE_CIPHER_NONE);
    munge_ctx_set(ctx.get(), MUNGE_OPT_TTL, static_cast<int>(wire::kCredentialTtlSeconds));
    if (restrict_to) munge_ctx_set(ctx.get(), MUNGE_OPT_UID_RESTRICTION, static_cast<uid_t>(*restrict_to));
    if (!munge_socket.empty()) munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, munge_socket.c_str());
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::string signed_text = wire::format_curve_signed_text(job_id, now);
    char* cred = nullptr;
    if (munge_encode(&cred, ctx.get(), signed_text.data(), static_cast<int>(signed_text.size())) !=
        EMUNGE_SUCCESS)
        return make_error(std::string("cannot get a munge credential: ") + munge_ctx_strerror(ctx.get()));
    const std::string request = wire::format_curve_request(job_id, now, cred);
    std::free(cred);

    auto fd = connect_to(hp->host, hp->port, timeout_s);
    if (!fd) return make_error("explschedd at " + out.address + ": " + fd.error().message);
    if (::send(fd->get(), request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size()))
        return make_error("explschedd at " + out.address + ": sending: " + errno_text(errno));
    std::string buf;
    auto first = read_line(fd->get(), buf, wire::kMaxLineBytes);
    if (!first) return make_error("explschedd at " + out.address + ": " + first.error().message);
    auto header = wire::parse_curve_header(*first);
    if (!header) {
        auto reply = wire::parse_reply(*first);
        if (reply)
            return make_error("explschedd at " + out.address + " refused (" +
                              std::string(wire::to_string(reply->code)) + "): " + reply->message);
        return make_error("explschedd at " + out.address + ": " + header.error().message);
    }
    out.rows.reserve(header->points);
    for (std::size_t i = 0; i < header->points; ++i) {
        auto line = read_line(fd->get(), buf, wire::kMaxLineBytes);
        if (!line) return make_error("explschedd at " + out.address + ": " + line.error().message);
        auto p = wire::parse_curve_point(*line);
        if (!p) return make_error("explschedd at " + out.address + ": " + p.error().message);
        StoredReport r;
        r.id = p->id;
        r.job_id = header->job_id;
        r.job_submit = header->submit;
        r.step = p->step;
        r.metric = p->metric;
        r.throughput = p->throughput;
        r.client_time = p->client_time;
        r.server_time = p->server_time;
        out.rows.push_back(r);
    }
    return out;
}

}  // namespace explsched::cli
