// Decides whether a parsed report may be stored: its munge credential must be valid, must sign
// exactly the report's text, and its uid must own the job (or be root or SlurmUser).
// One Authenticator per worker thread: a munge context is not shared between threads.
#pragma once

#include <munge.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/report/report_wire.hpp"
#include "daemon/job_owners.hpp"

namespace explsched::daemon {

struct AuthResult {
    bool ok = false;
    uint32_t uid = 0;
    wire::Reply refusal;  // when !ok: refused (or retry when munged/slurmctld is unreachable)
};

class Authenticator {
public:
    // munge_socket: empty for libmunge's default.
    Authenticator(const std::string& munge_socket, JobOwners& owners);
    ~Authenticator();
    Authenticator(const Authenticator&) = delete;
    Authenticator& operator=(const Authenticator&) = delete;

    AuthResult check(const wire::ReportRequest& request);

private:
    munge_ctx_t ctx_ = nullptr;
    JobOwners& owners_;
};

}  // namespace explsched::daemon
