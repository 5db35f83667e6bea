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

#include "core/report/report_wire.hpp"
#include "daemon/daemon_limits.hpp"
#include "daemon/job_owners.hpp"
#include "daemon/rate_limiter.hpp"

namespace explsched::daemon {

struct AuthResult {
    bool ok = false;
    bool authenticated = false;  // the credential was valid (even if the report was then refused)
    uint32_t uid = 0;
    int64_t job_submit = 0;  // when ok: the job instance (0 when slurmctld does not know the job)
    wire::Reply refusal;     // when !ok: refused (or retry when munged/slurmctld is unreachable)
};

class Authenticator {
public:
    // munge_socket: empty for libmunge's default.
    Authenticator(const std::string& munge_socket, JobOwners& owners, const DaemonLimits& limits,
                  RateLimiter& rates);
    ~Authenticator();
    Authenticator(const Authenticator&) = delete;
    Authenticator& operator=(const Authenticator&) = delete;

    // rate_charged: the reporter's per-uid rate was already charged before munge (a peer on this
    // host, whose uid the kernel told).
    AuthResult check(const wire::ReportRequest& request, bool rate_charged = false);

private:
    munge_ctx_t ctx_ = nullptr;
    JobOwners& owners_;
    const DaemonLimits& limits_;
    RateLimiter& rates_;
    uint32_t self_uid_;
};

// The rate-limit refusal, shared by the event loop (before munge) and the workers (after it).
wire::Reply rate_limited_reply(const wire::ReportBody& body, const DaemonLimits& limits);

}  // namespace explsched::daemon
