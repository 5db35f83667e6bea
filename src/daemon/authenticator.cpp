#include "daemon/authenticator.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "core/report/curve_wire.hpp"

namespace explsched::daemon {

namespace {

wire::Reply refusal(const wire::ReportBody& body, wire::ReplyStatus status, wire::Code code,
                    std::string message) {
    wire::Reply r;
    r.status = status;
    r.code = code;
    r.job_id = body.job_id;
    r.step = body.step;
    r.message = std::move(message);
    return r;
}

// Payload buffers from munge_decode are malloc'ed.
struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
};

std::string rate_text(double v) {
    return v == static_cast<double>(static_cast<int64_t>(v)) ? std::to_string(static_cast<int64_t>(v))
                                                             : std::to_string(v);
}

}  // namespace

wire::Reply rate_limited_reply(const wire::ReportBody& body, const DaemonLimits& limits) {
    return refusal(body, wire::ReplyStatus::retry, wire::Code::rate_limited,
                   "too many reports from this user: the limit is user_rate=" + rate_text(limits.user_rate) +
                       " reports/s (user_burst=" + rate_text(limits.user_burst) +
                       "); not stored, send it later");
}

Authenticator::Authenticator(const std::string& munge_socket, JobOwners& owners, const DaemonLimits& limits,
                             RateLimiter& rates, std::string db_path)
    : owners_(owners),
      limits_(limits),
      rates_(rates),
      self_uid_(static_cast<uint32_t>(geteuid())),
      db_path_(std::move(db_path)) {
    ctx_ = munge_ctx_create();
    if (ctx_ != nullptr && !munge_socket.empty()) munge_ctx_set(ctx_, MUNGE_OPT_SOCKET, munge_socket.c_str());
}

Authenticator::~Authenticator() {
    if (ctx_ != nullptr) munge_ctx_destroy(ctx_);
}

bool Authenticator::verify(const wire::ReportRequest& req, bool rate_charged, AuthResult& out,
                           bool& privileged) {
    using wire::Code;
    using wire::ReplyStatus;
    const wire::ReportBody& body = req.body;
    if (ctx_ == nullptr) {
        out.refusal =
            refusal(body, ReplyStatus::retry, Code::unavailable, "explschedd: munge context: out of memory");
        return false;
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
                refusal(body, ReplyStatus::retry, Code::unavailable, "cannot check the credential: " + text);
        else
            out.refusal =
                refusal(body, ReplyStatus::refused, Code::bad_credential, "credential refused: " + text);
        return false;
    }
    // The credential must sign this very request, or a captured credential could carry any body.
    if (len < 0 || static_cast<std::size_t>(len) != req.signed_text.size() ||
        std::memcmp(raw, req.signed_text.data(), req.signed_text.size()) != 0) {
        out.refusal = refusal(body, ReplyStatus::refused, Code::bad_credential,
                              "credential refused: its payload does not match the report it came with");
        return false;
    }
    out.uid = static_cast<uint32_t>(uid);
    privileged = owners_.privileged(out.uid);

    int ttl = 0;
    if (munge_ctx_get(ctx_, MUNGE_OPT_TTL, &ttl) == EMUNGE_SUCCESS &&
        (ttl < 0 || static_cast<uint32_t>(ttl) > limits_.max_credential_ttl)) {
        out.refusal =
            refusal(body, ReplyStatus::refused, Code::bad_credential,
                    "credential refused: its TTL of " + std::to_string(ttl) +
                        " s exceeds max_credential_ttl=" + std::to_string(limits_.max_credential_ttl) +
                        " s (encode with MUNGE_OPT_TTL or munge --ttl)");
        return false;
    }
    uid_t restriction = static_cast<uid_t>(MUNGE_UID_ANY);
    if (munge_ctx_get(ctx_, MUNGE_OPT_UID_RESTRICTION, &restriction) != EMUNGE_SUCCESS)
        restriction = static_cast<uid_t>(MUNGE_UID_ANY);
    const bool unrestricted = restriction == static_cast<uid_t>(MUNGE_UID_ANY);
    if ((unrestricted && limits_.require_uid_restriction && !privileged) ||
        (!unrestricted && static_cast<uint32_t>(restriction) != self_uid_)) {
        out.refusal = refusal(body, ReplyStatus::refused, Code::bad_credential,
                              "credential refused: it must be restricted to explschedd's uid " +
                                  std::to_string(self_uid_) +
                                  " (MUNGE_OPT_UID_RESTRICTION or munge --restrict-uid; the SPANK plugin "
                                  "sets EXPLSCHED_REPORT_UID in every step)");
        return false;
    }
    out.authenticated = true;

    if (!rate_charged && !privileged &&
        !rates_.take("uid=" + std::to_string(out.uid), limits_.user_rate, limits_.user_burst,
                     RateLimiter::Clock::now(), req.curve ? kCurveReadCost : 1.0)) {
        out.refusal = rate_limited_reply(body, limits_);
        return false;
    }
    return true;
}

AuthResult Authenticator::check(const wire::ReportRequest& req, bool rate_charged) {
    using wire::Code;
    using wire::ReplyStatus;
    AuthResult out;
    const wire::ReportBody& body = req.body;
    bool privileged = false;
    if (!verify(req, rate_charged, out, privileged)) return out;

    JobOwners::Answer owner = owners_.lookup(body.job_id);
    // A cached owner that is not the reporter may be stale (the id was reused since): ask again.
    if (owner.kind == JobOwners::Kind::owner && owner.cached && owner.uid != out.uid && !privileged)
        owner = owners_.lookup(body.job_id, true);
    if (privileged) {
        // Root and SlurmUser may report for any job; the instance is named when slurmctld knows it.
        out.ok = true;
        out.job_submit = owner.kind == JobOwners::Kind::owner ? owner.submit_time : 0;
        out.job_restarts = owner.kind == JobOwners::Kind::owner ? owner.restarts : 0;
        return out;
    }
    switch (owner.kind) {
        case JobOwners::Kind::owner:
            if (owner.uid == out.uid) {
                out.ok = true;
                out.job_submit = owner.submit_time;
                out.job_restarts = owner.restarts;
            } else {
                out.refusal = refusal(
                    body, ReplyStatus::refused, Code::forbidden,
                    "job " + std::to_string(body.job_id) + " is not yours: only its owner may report for it");
            }
            break;
        case JobOwners::Kind::unknown_job:
            out.refusal = refusal(body, ReplyStatus::refused, Code::unknown_job, owner.error);
            break;
        case JobOwners::Kind::unavailable:
            out.refusal = refusal(body, ReplyStatus::retry, Code::unavailable, owner.error);
            break;
    }
    return out;
}

std::string Authenticator::read_curve(const wire::ReportRequest& req, bool rate_charged,
                                      bool& authenticated) {
    using wire::Code;
    using wire::ReplyStatus;
    AuthResult out;
    const wire::ReportBody& body = req.body;
    bool privileged = false;
    const bool ok = verify(req, rate_charged, out, privileged);
    authenticated = out.authenticated;
    if (!ok) return wire::format_reply(out.refusal);
    auto fail = [&](ReplyStatus status, Code code, std::string message) {
        wire::Reply r = refusal(body, status, code, std::move(message));
        r.step.reset();
        return wire::format_reply(r);
    };
    if (db_path_.empty())
        return fail(ReplyStatus::refused, Code::bad_request, "this explschedd serves no curves");
    if (!reader_) {
        auto r = ReportReader::open(db_path_);
        if (!r)
            return fail(ReplyStatus::retry, Code::unavailable,
                        "cannot read the reports: " + r.error().message);
        reader_ = std::move(r).value();
    }
    auto rows = reader_->latest_job_curve(body.job_id);
    if (!rows) {
        reader_.reset();  // reopened next time
        return fail(ReplyStatus::retry, Code::unavailable,
                    "cannot read the reports: " + rows.error().message);
    }
    // Reports for an instance are accepted from its owner (and root/SlurmUser) only, so a row the
    // caller reported proves the instance is the caller's; without one, slurmctld says.
    bool allowed = privileged;
    for (const StoredReport& r : *rows) allowed = allowed || r.uid == out.uid;
    if (!allowed) {
        const JobOwners::Answer owner = owners_.lookup(body.job_id, true);
        if (owner.kind == JobOwners::Kind::unavailable)
            return fail(ReplyStatus::retry, Code::unavailable, owner.error);
        allowed = owner.kind == JobOwners::Kind::owner && owner.uid == out.uid &&
                  (rows->empty() || rows->front().job_submit == owner.submit_time);
    }
    if (!allowed)
        return fail(
            ReplyStatus::refused, Code::forbidden,
            "job " + std::to_string(body.job_id) + " is not yours: only its owner may read its curve");
    const std::size_t skip = rows->size() > wire::kMaxCurvePoints ? rows->size() - wire::kMaxCurvePoints : 0;
    std::vector<wire::CurveRow> out_rows;
    out_rows.reserve(rows->size() - skip);
    for (std::size_t i = skip; i < rows->size(); ++i) {
        const StoredReport& r = (*rows)[i];
        out_rows.push_back({r.id, r.step, r.metric, r.throughput, r.client_time, r.server_time});
    }
    return wire::format_curve_reply(body.job_id, rows->empty() ? 0 : rows->front().job_submit, out_rows);
}

}  // namespace explsched::daemon
