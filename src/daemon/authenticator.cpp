#include "daemon/authenticator.hpp"

#include <cstdlib>
#include <cstring>

namespace explsched::daemon {

namespace {

wire::Reply refusal(const wire::ReportRequest& req, wire::ReplyStatus status, wire::Code code,
                    std::string message) {
    wire::Reply r;
    r.status = status;
    r.code = code;
    r.job_id = req.body.job_id;
    r.step = req.body.step;
    r.message = std::move(message);
    return r;
}

// Payload buffers from munge_decode are malloc'ed.
struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
};

}  // namespace

Authenticator::Authenticator(const std::string& munge_socket, JobOwners& owners) : owners_(owners) {
    ctx_ = munge_ctx_create();
    if (ctx_ != nullptr && !munge_socket.empty()) munge_ctx_set(ctx_, MUNGE_OPT_SOCKET, munge_socket.c_str());
}

Authenticator::~Authenticator() {
    if (ctx_ != nullptr) munge_ctx_destroy(ctx_);
}

AuthResult Authenticator::check(const wire::ReportRequest& req) {
    using wire::Code;
    using wire::ReplyStatus;
    AuthResult out;
    if (ctx_ == nullptr) {
        out.refusal =
            refusal(req, ReplyStatus::retry, Code::unavailable, "explschedd: munge context: out of memory");
        return out;
    }
    void* raw = nullptr;
    int len = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    const munge_err_t err = munge_decode(req.credential.c_str(), ctx_, &raw, &len, &uid, &gid);
    std::unique_ptr<void, FreeDeleter> payload(raw);
    if (err != EMUNGE_SUCCESS) {
        const char* why = munge_ctx_strerror(ctx_);
        const std::string text = std::string("munge: ") + (why != nullptr ? why : munge_strerror(err));
        // munged unreachable or overloaded: not the client's fault, it may send the report again.
        if (err == EMUNGE_SOCKET || err == EMUNGE_TIMEOUT || err == EMUNGE_NO_MEMORY || err == EMUNGE_SNAFU)
            out.refusal =
                refusal(req, ReplyStatus::retry, Code::unavailable, "cannot check the credential: " + text);
        else
            out.refusal =
                refusal(req, ReplyStatus::refused, Code::bad_credential, "credential refused: " + text);
        return out;
    }
    // The credential must sign this very report, or a captured credential could carry any body.
    if (len < 0 || static_cast<std::size_t>(len) != req.signed_text.size() ||
        std::memcmp(raw, req.signed_text.data(), req.signed_text.size()) != 0) {
        out.refusal = refusal(req, ReplyStatus::refused, Code::bad_credential,
                              "credential refused: its payload does not match the report it came with");
        return out;
    }
    out.uid = static_cast<uint32_t>(uid);
    if (owners_.privileged(out.uid)) {
        out.ok = true;
        return out;
    }
    const JobOwners::Answer owner = owners_.lookup(req.body.job_id);
    switch (owner.kind) {
        case JobOwners::Kind::owner:
            if (owner.uid == out.uid) {
                out.ok = true;
            } else {
                out.refusal = refusal(req, ReplyStatus::refused, Code::forbidden,
                                      "uid " + std::to_string(out.uid) + " may not report for job " +
                                          std::to_string(req.body.job_id) + " (owned by uid " +
                                          std::to_string(owner.uid) + ")");
            }
            break;
        case JobOwners::Kind::unknown_job:
            out.refusal = refusal(req, ReplyStatus::refused, Code::unknown_job, owner.error);
            break;
        case JobOwners::Kind::unavailable:
            out.refusal = refusal(req, ReplyStatus::retry, Code::unavailable, owner.error);
            break;
    }
    return out;
}

}  // namespace explsched::daemon
