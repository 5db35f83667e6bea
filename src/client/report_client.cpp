// libexplsched_report: the C client of explschedd (explsched/report.h). It runs inside users'
// training processes: every exported function catches everything, nothing exits, and only the
// functions of report.h are visible (hidden visibility plus a version script).
#include "explsched/report.h"

#include <fcntl.h>
#include <munge.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>

#include "core/base/errno_text.hpp"
#include "core/base/export.hpp"
#include "core/base/fd.hpp"
#include "core/base/strings.hpp"
#include "core/report/report_wire.hpp"
#include "core/sched/settings.hpp"

using namespace explsched;

namespace {

using Clock = std::chrono::steady_clock;

void copy_text(char* dst, std::size_t size, const std::string& text) {
    if (dst == nullptr || size == 0) return;
    std::snprintf(dst, size, "%s", text.c_str());
}

int set_result(explsched_report_result* res, int status, const std::string& code, const std::string& message,
               const std::optional<uint64_t>& last_step = std::nullopt) {
    if (res != nullptr) {
        res->status = status;
        copy_text(res->code, sizeof res->code, code);
        copy_text(res->message, sizeof res->message, message);
        res->has_last_step = last_step.has_value() ? 1 : 0;
        res->last_step = last_step.value_or(0);
    }
    return status;
}

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return (v != nullptr && *v != '\0') ? v : nullptr;
}

// The settings file clients share with explschedd, for report_host/report_port/munge_socket.
Result<Settings> client_settings() { return site_settings(); }

}  // namespace

struct explsched_reporter {
    std::string host;
    uint16_t port = 0;
    std::string munge_socket;
    munge_ctx_t ctx = nullptr;
    Fd fd;
    double timeout_s = 10.0;
    std::string inbuf;
    std::mutex mutex;

    ~explsched_reporter() {
        disconnect();
        if (ctx != nullptr) munge_ctx_destroy(ctx);
    }

    void disconnect() {
        fd.reset();
        inbuf.clear();
    }

    std::string where() const { return host + ":" + std::to_string(port); }

    // Remaining milliseconds until deadline for poll(); at least 0.
    static int remaining_ms(Clock::time_point deadline) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        return left < 0 ? 0 : static_cast<int>(left);
    }

    Status connect_to(Clock::time_point deadline) {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICSERV;
        addrinfo* res = nullptr;
        const std::string service = std::to_string(port);
        if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
            return make_error("cannot resolve explschedd address " + where() + ": " + gai_strerror(rc));
        std::string why = "no address";
        for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
            Fd s(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
            if (!s.valid()) {
                why = errno_text(errno);
                continue;
            }
            int rc = ::connect(s.get(), ai->ai_addr, ai->ai_addrlen);
            if (rc != 0 && errno == EINPROGRESS) {
                pollfd p{s.get(), POLLOUT, 0};
                rc = poll(&p, 1, remaining_ms(deadline));
                int err = 0;
                socklen_t len = sizeof err;
                if (rc == 1 && getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
                    rc = 0;
                } else {
                    errno = rc == 0 ? ETIMEDOUT : (err != 0 ? err : errno);
                    rc = -1;
                }
            }
            if (rc == 0) {
                const int one = 1;
                setsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                fd = std::move(s);
                freeaddrinfo(res);
                return {};
            }
            why = errno_text(errno);
        }
        freeaddrinfo(res);
        return make_error("cannot connect to explschedd at " + where() + ": " + why);
    }

    Status write_all(const std::string& data, Clock::time_point deadline) {
        std::size_t off = 0;
        while (off < data.size()) {
            const ssize_t n = ::send(fd.get(), data.data() + off, data.size() - off, MSG_NOSIGNAL);
            if (n > 0) {
                off += static_cast<std::size_t>(n);
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                pollfd p{fd.get(), POLLOUT, 0};
                if (poll(&p, 1, remaining_ms(deadline)) == 0)
                    return make_error("sending to explschedd at " + where() + ": timed out");
                continue;
            }
            return make_error("sending to explschedd at " + where() + ": " + errno_text(errno));
        }
        return {};
    }

    Result<std::string> read_line(Clock::time_point deadline) {
        for (;;) {
            if (const auto nl = inbuf.find('\n'); nl != std::string::npos) {
                std::string line = inbuf.substr(0, nl);
                inbuf.erase(0, nl + 1);
                return line;
            }
            if (inbuf.size() > wire::kMaxLineBytes)
                return make_error("reply from explschedd at " + where() + " is longer than " +
                                  std::to_string(wire::kMaxLineBytes) + " bytes");
            char buf[4096];
            const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
            if (n > 0) {
                inbuf.append(buf, static_cast<std::size_t>(n));
                continue;
            }
            if (n == 0) return make_error("explschedd at " + where() + " closed the connection");
            if (errno == EAGAIN || errno == EINTR) {
                pollfd p{fd.get(), POLLIN, 0};
                if (poll(&p, 1, remaining_ms(deadline)) == 0)
                    return make_error("no reply from explschedd at " + where() + " within " +
                                      std::to_string(static_cast<int>(timeout_s)) + " s");
                continue;
            }
            return make_error("reading from explschedd at " + where() + ": " + errno_text(errno));
        }
    }

    // One attempt on the current (or a new) connection; `stale` tells whether a failure may be a
    // connection the server closed while idle, which deserves one more try.
    // `deadline` is the whole call's: a retry on a fresh connection shares it, so one report never
    // holds a training step longer than the timeout.
    Result<wire::Reply> attempt(const wire::ReportBody& body, bool& stale, Clock::time_point deadline) {
        stale = fd.valid();
        if (!fd.valid()) {
            if (auto s = connect_to(deadline); !s) return s.error();
        }
        // A fresh credential per attempt: munged refuses to decode one twice.
        const std::string signed_text = wire::format_signed_text(body);
        char* cred = nullptr;
        const munge_err_t err =
            munge_encode(&cred, ctx, signed_text.data(), static_cast<int>(signed_text.size()));
        if (err != EMUNGE_SUCCESS) {
            stale = false;
            const char* why = munge_ctx_strerror(ctx);
            return make_error(std::string("cannot get a munge credential") +
                              (munge_socket.empty() ? "" : " from " + munge_socket) + ": " +
                              (why != nullptr ? why : munge_strerror(err)));
        }
        const std::string line = wire::format_request(body, cred);
        std::free(cred);
        if (auto s = write_all(line, deadline); !s) {
            disconnect();
            return s.error();
        }
        auto reply_line = read_line(deadline);
        if (!reply_line) {
            disconnect();
            return reply_line.error();
        }
        stale = false;
        auto reply = wire::parse_reply(*reply_line);
        if (!reply) {
            disconnect();  // the stream is no longer trustworthy
            return make_error("explschedd at " + where() + " sent a bad reply: " + reply.error().message);
        }
        // A server that hangs up after a refusal (over-long line) or when busy.
        if (reply->status == wire::ReplyStatus::retry || reply->code == wire::Code::line_too_long)
            disconnect();
        return reply;
    }

    int send(uint32_t job_id, uint64_t step, double metric, double throughput, explsched_report_result* res) {
        wire::ReportBody body;
        body.job_id = job_id;
        body.step = step;
        body.metric = metric;
        if (!std::isnan(throughput) && throughput >= 0.0) body.throughput = throughput;
        body.client_time =
            std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
        if (job_id == 0 || job_id > wire::kMaxJobId)
            return set_result(res, EXPLSCHED_REPORT_ERROR, "invalid_value",
                              "explsched: report: job id " + std::to_string(job_id) +
                                  " is not a Slurm job id (is EXPLSCHED_JOB_ID or SLURM_JOB_ID set?)");
        // Refuse locally what the server would refuse: same rules, no round trip.
        if (auto s = wire::validate_body(body); !s)
            return set_result(res, EXPLSCHED_REPORT_REFUSED, "invalid_value",
                              "explsched: " + s.error().message);

        std::lock_guard<std::mutex> lock(mutex);
        const auto deadline =
            Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
        bool stale = false;
        auto reply = attempt(body, stale, deadline);
        if (!reply && stale && Clock::now() < deadline) reply = attempt(body, stale, deadline);
        if (!reply) return set_result(res, EXPLSCHED_REPORT_ERROR, "", "explsched: " + reply.error().message);
        const wire::Reply& r = *reply;
        const std::string code = r.code == wire::Code::none ? "" : std::string(wire::to_string(r.code));
        switch (r.status) {
            case wire::ReplyStatus::stored:
                return set_result(res, EXPLSCHED_REPORT_STORED, "", "");
            case wire::ReplyStatus::duplicate:
                return set_result(res, EXPLSCHED_REPORT_DUPLICATE, "",
                                  "explsched: report: job " + std::to_string(job_id) + " step " +
                                      std::to_string(step) + " was already stored with this value");
            case wire::ReplyStatus::refused:
                return set_result(res, EXPLSCHED_REPORT_REFUSED, code,
                                  "explsched: report refused (" + code + "): " + r.message, r.last_step);
            case wire::ReplyStatus::retry:
                return set_result(res, EXPLSCHED_REPORT_RETRY, code,
                                  "explsched: report not stored, try again (" + code + "): " + r.message);
        }
        return set_result(res, EXPLSCHED_REPORT_ERROR, "", "explsched: report: unexpected reply");
    }
};

namespace {

explsched_reporter* open_reporter(const char* address, const char* munge_socket, std::string& error) {
    auto settings = client_settings();
    if (!settings) {
        error = "explsched: " + settings.error().message;
        return nullptr;
    }
    std::string addr;
    if (address != nullptr)
        addr = address;
    else if (const char* e = env("EXPLSCHED_REPORT_ADDR"))
        addr = e;
    else
        addr = settings->report_host + ":" + std::to_string(settings->report_port);
    auto hp = wire::parse_host_port(addr);
    if (!hp) {
        error = "explsched: " + hp.error().message;
        return nullptr;
    }
    auto r = std::make_unique<explsched_reporter>();
    r->host = hp->host;
    r->port = hp->port;
    if (munge_socket != nullptr)
        r->munge_socket = munge_socket;
    else if (const char* e = env("EXPLSCHED_MUNGE_SOCKET"))
        r->munge_socket = e;
    else
        r->munge_socket = settings->munge_socket;
    r->ctx = munge_ctx_create();
    if (r->ctx == nullptr) {
        error = "explsched: cannot create a munge context: out of memory";
        return nullptr;
    }
    // The report travels in clear text beside its credential, so encrypting the payload inside
    // the credential protects nothing; the MAC still binds it. Skipping the cipher makes every
    // encode and decode cheaper (about 30 % more credentials per second through munged).
    munge_ctx_set(r->ctx, MUNGE_OPT_CIPHER_TYPE, MUNGE_CIPHER_NONE);
    // Only explschedd's uid may decode the credential, and only for a short while: one seen on the
    // network is worth nothing to another user, and soon to no one (explschedd refuses longer TTLs).
    munge_ctx_set(r->ctx, MUNGE_OPT_TTL, static_cast<int>(wire::kCredentialTtlSeconds));
    if (const char* e = env("EXPLSCHED_REPORT_UID")) {
        auto uid = parse_uint64(e);
        if (!uid || *uid >= 0xffffffffU) {
            error = "explsched: EXPLSCHED_REPORT_UID='" + std::string(e) + "' is not a uid";
            return nullptr;
        }
        munge_ctx_set(r->ctx, MUNGE_OPT_UID_RESTRICTION, static_cast<uid_t>(*uid));
    }
    if (!r->munge_socket.empty() &&
        munge_ctx_set(r->ctx, MUNGE_OPT_SOCKET, r->munge_socket.c_str()) != EMUNGE_SUCCESS) {
        error = "explsched: munge socket " + r->munge_socket + ": " + munge_ctx_strerror(r->ctx);
        return nullptr;
    }
    return r.release();
}

std::mutex g_default_mutex;
explsched_reporter* g_default = nullptr;  // the process-wide reporter of explsched_report()

}  // namespace

extern "C" {

EXPLSCHED_EXPORT explsched_reporter* explsched_reporter_open(const char* address, const char* munge_socket,
                                                             char* errbuf, size_t errlen) {
    try {
        std::string error;
        explsched_reporter* r = open_reporter(address, munge_socket, error);
        if (r == nullptr) copy_text(errbuf, errlen, error);
        return r;
    } catch (...) {
        copy_text(errbuf, errlen, "explsched: cannot create a reporter: out of memory");
        return nullptr;
    }
}

EXPLSCHED_EXPORT void explsched_reporter_set_timeout(explsched_reporter* reporter, double seconds) {
    if (reporter == nullptr || !(seconds > 0.0) || seconds > 86400.0) return;
    std::lock_guard<std::mutex> lock(reporter->mutex);
    reporter->timeout_s = seconds;
}

EXPLSCHED_EXPORT int explsched_reporter_send(explsched_reporter* reporter, uint32_t job_id, uint64_t step,
                                             double metric, double throughput,
                                             explsched_report_result* result) {
    try {
        if (reporter == nullptr)
            return set_result(result, EXPLSCHED_REPORT_ERROR, "", "explsched: report: no reporter (NULL)");
        return reporter->send(job_id, step, metric, throughput, result);
    } catch (...) {
        return set_result(result, EXPLSCHED_REPORT_ERROR, "",
                          "explsched: report: internal error (out of memory?)");
    }
}

EXPLSCHED_EXPORT void explsched_reporter_close(explsched_reporter* reporter) { delete reporter; }

EXPLSCHED_EXPORT uint32_t explsched_report_job_id(void) {
    for (const char* name : {"EXPLSCHED_JOB_ID", "SLURM_JOB_ID"}) {
        if (const char* v = env(name)) {
            auto n = parse_uint64(v);
            if (n && *n > 0 && *n <= wire::kMaxJobId) return static_cast<uint32_t>(*n);
        }
    }
    return 0;
}

EXPLSCHED_EXPORT int explsched_report(uint64_t step, double metric, double throughput,
                                      explsched_report_result* result) {
    try {
        std::lock_guard<std::mutex> lock(g_default_mutex);
        if (g_default == nullptr) {
            std::string error;
            g_default = open_reporter(nullptr, nullptr, error);
            if (g_default == nullptr) return set_result(result, EXPLSCHED_REPORT_ERROR, "", error);
        }
        return g_default->send(explsched_report_job_id(), step, metric, throughput, result);
    } catch (...) {
        return set_result(result, EXPLSCHED_REPORT_ERROR, "",
                          "explsched: report: internal error (out of memory?)");
    }
}

EXPLSCHED_EXPORT const char* explsched_report_status_name(int status) {
    switch (status) {
        case EXPLSCHED_REPORT_STORED:
            return "stored";
        case EXPLSCHED_REPORT_DUPLICATE:
            return "duplicate";
        case EXPLSCHED_REPORT_REFUSED:
            return "refused";
        case EXPLSCHED_REPORT_RETRY:
            return "retry";
        case EXPLSCHED_REPORT_ERROR:
            return "error";
        default:
            return "unknown";
    }
}

}  // extern "C"
