// Decides whether a parsed report may be stored: its munge credential must be valid, short-lived
// (TTL at most max_credential_ttl), restricted to explschedd's uid (unless the reporter is root or
// SlurmUser, who are trusted anyway), and must sign exactly the report's text; its uid must be
// within its report rate and own the job (or be root or SlurmUser). The answer names the job
// instance (the job's submit time from slurmctld), never trusted from the client.
// Refusals never name another user: "job 42 is not yours", not whose it is.
// One Authenticator per worker thread: a munge context is not shared between threads.
#pragma once

#include <munge.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/report/report_store.hpp"
#include "core/report/report_wire.hpp"
#include "daemon/daemon_limits.hpp"
#include "daemon/job_owners.hpp"
#include "daemon/rate_limiter.hpp"

namespace explsched::daemon {

// A curve read costs as many rate tokens as this many reports: it reads up to
// wire::kMaxCurvePoints rows and makes the server hold their text.
inline constexpr double kCurveReadCost = 20.0;

struct AuthResult {
    bool ok = false;
    bool authenticated = false;  // the credential was valid (even if the report was then refused)
    uint32_t uid = 0;
    int64_t job_submit = 0;     // when ok: the job instance (0 when slurmctld does not know the job)
    uint32_t job_restarts = 0;  // when ok: slurmctld's restart count (a requeue changes the submit time)
    wire::Reply refusal;        // when !ok: refused (or retry when munged/slurmctld is unreachable)
};

class Authenticator {
public:
    // munge_socket: empty for libmunge's default.
    // db_path: the report database, read for curve requests (empty: none served).
    Authenticator(const std::string& munge_socket, JobOwners& owners, const DaemonLimits& limits,
                  RateLimiter& rates, std::string db_path = {});
    ~Authenticator();
    Authenticator(const Authenticator&) = delete;
    Authenticator& operator=(const Authenticator&) = delete;

    // rate_charged: the reporter's per-uid rate was already charged before munge (a peer on this
    // host, whose uid the kernel told).
    AuthResult check(const wire::ReportRequest& request, bool rate_charged = false);
    // A curve request (curve_wire.hpp): the whole answer, a refusal line or the curve of the job's
    // newest instance when the caller owns it (or is root or SlurmUser). `authenticated` tells
    // whether the credential was valid.
    std::string read_curve(const wire::ReportRequest& request, bool rate_charged, bool& authenticated);

private:
    // The credential checks shared by reports and curve reads: decodes, checks payload, TTL and
    // restriction, charges the rate when not charged before; fills uid and authenticated.
    bool verify(const wire::ReportRequest& request, bool rate_charged, AuthResult& out, bool& privileged);

    munge_ctx_t ctx_ = nullptr;
    JobOwners& owners_;
    const DaemonLimits& limits_;
    RateLimiter& rates_;
    uint32_t self_uid_;
    std::string db_path_;
    std::unique_ptr<ReportReader> reader_;  // opened on the first curve request
};

// The rate-limit refusal, shared by the event loop (before munge) and the workers (after it).
wire::Reply rate_limited_reply(const wire::ReportBody& body, const DaemonLimits& limits);

}  // namespace explsched::daemon
