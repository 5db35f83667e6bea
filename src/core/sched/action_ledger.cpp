#include "core/sched/action_ledger.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <limits>
#include <sstream>

#include "core/base/atomic_file.hpp"
#include "core/base/errno_text.hpp"
#include "core/base/fd.hpp"

namespace explsched {

namespace {

constexpr const char* kHeader = "explsched-actions 1";
// One line per entry: <job id> <submit> <action> <time> <uid> <restarts>

Result<LedgerAction> parse_action(const std::string& word) {
    if (word == "held") return LedgerAction::held;
    if (word == "requeued_held") return LedgerAction::requeued_held;
    if (word == "cancelled") return LedgerAction::cancelled;
    if (word == "site_pinned") return LedgerAction::site_pinned;
    if (word == "paused") return LedgerAction::paused;
    if (word == "resumed") return LedgerAction::resumed;
    return make_error("unknown action '" + word + "'");
}

}  // namespace

const char* to_string(LedgerAction action) {
    switch (action) {
        case LedgerAction::held:
            return "held";
        case LedgerAction::requeued_held:
            return "requeued_held";
        case LedgerAction::cancelled:
            return "cancelled";
        case LedgerAction::site_pinned:
            return "site_pinned";
        case LedgerAction::paused:
            return "paused";
        case LedgerAction::resumed:
            return "resumed";
    }
    return "?";
}

namespace {

bool matches(const JobInstance& key, const LedgerEntry& e, const JobInstance& job, std::uint32_t uid,
             std::uint32_t restarts) {
    if (e.uid != uid) return false;
    return key.submit == job.submit || (key.submit < job.submit && restarts > e.restarts);
}

// The newest entry of this job instance, or of it before a requeue (see the header), or null.
template <typename Map>
auto find_instance(Map& m, const JobInstance& job, std::uint32_t uid, std::uint32_t restarts)
    -> decltype(&m.begin()->second) {
    decltype(&m.begin()->second) found = nullptr;
    for (auto it = m.lower_bound(JobInstance{job.job_id, INT64_MIN});
         it != m.end() && it->first.job_id == job.job_id; ++it) {
        if (matches(it->first, it->second, job, uid, restarts)) found = &it->second;
    }
    return found;
}

}  // namespace

bool ActionLedger::acted(const JobInstance& job, std::uint32_t uid, std::uint32_t restarts) const {
    const LedgerEntry* e = find_instance(entries_, job, uid, restarts);
    return e != nullptr && e->action != LedgerAction::resumed;
}

const LedgerEntry* ActionLedger::latest(const JobInstance& job, std::uint32_t uid,
                                        std::uint32_t restarts) const {
    return find_instance(entries_, job, uid, restarts);
}

std::uint32_t ActionLedger::pauses(const JobInstance& job, std::uint32_t uid, std::uint32_t restarts) const {
    std::uint32_t n = 0;
    for (auto it = entries_.lower_bound(JobInstance{job.job_id, INT64_MIN});
         it != entries_.end() && it->first.job_id == job.job_id; ++it) {
        const LedgerAction a = it->second.action;
        if ((a == LedgerAction::paused || a == LedgerAction::resumed) &&
            matches(it->first, it->second, job, uid, restarts))
            ++n;
    }
    return n;
}

bool ActionLedger::update(const JobInstance& job, std::uint32_t uid, std::uint32_t restarts,
                          LedgerAction action, std::int64_t when) {
    LedgerEntry* e = find_instance(entries_, job, uid, restarts);
    if (e == nullptr) return false;
    e->action = action;
    e->when = when;
    return true;
}

bool ActionLedger::record(const JobInstance& job, const LedgerEntry& entry) {
    if (entry.action == LedgerAction::site_pinned) return pins_.emplace(job, entry).second;
    auto [it, inserted] = entries_.emplace(job, entry);
    if (!inserted && it->second.action == LedgerAction::resumed) {
        it->second = entry;
        return true;
    }
    return inserted;
}

void ActionLedger::restore_job(const ActionLedger& before, std::uint32_t job_id) {
    const auto first = [job_id](const std::map<JobInstance, LedgerEntry>& m) {
        return m.lower_bound(JobInstance{job_id, std::numeric_limits<std::int64_t>::min()});
    };
    for (auto it = first(entries_); it != entries_.end() && it->first.job_id == job_id;)
        it = entries_.erase(it);
    for (auto it = first(before.entries_); it != before.entries_.end() && it->first.job_id == job_id; ++it)
        entries_.insert(*it);
}

const LedgerEntry* ActionLedger::pinned(const JobInstance& job, std::uint32_t uid,
                                        std::uint32_t restarts) const {
    return find_instance(pins_, job, uid, restarts);
}

void ActionLedger::pin(const JobInstance& job, std::uint32_t uid, std::uint32_t restarts, std::int64_t when) {
    pins_[job] = LedgerEntry{LedgerAction::site_pinned, when, uid, restarts};
}

bool ActionLedger::unpin(const JobInstance& job) {
    // this instance, or the earlier one it was pinned as (a requeue gives a new submit time)
    bool any = false;
    for (auto it = pins_.lower_bound(JobInstance{job.job_id, INT64_MIN});
         it != pins_.end() && it->first.job_id == job.job_id;) {
        if (it->first.submit <= job.submit) {
            it = pins_.erase(it);
            any = true;
        } else {
            ++it;
        }
    }
    return any;
}

std::string ActionLedger::serialize() const {
    std::ostringstream out;
    out << kHeader << "\n";
    for (const auto* m : {&entries_, &pins_})
        for (const auto& [job, e] : *m)
            out << job.job_id << ' ' << job.submit << ' ' << to_string(e.action) << ' ' << e.when << ' '
                << e.uid << ' ' << e.restarts << '\n';
    return out.str();
}

Result<ActionLedger> ActionLedger::parse(const std::string& text, const std::string& origin) {
    std::istringstream in(text);
    std::string line;
    if (!std::getline(in, line) || line != kHeader)
        return make_error(origin + ":1: not an ExplSched action ledger (expected '" + kHeader + "')");
    ActionLedger ledger;
    for (int n = 2; std::getline(in, line); ++n) {
        if (line.empty()) continue;
        std::istringstream fields(line);
        JobInstance job;
        std::string action;
        LedgerEntry e;
        std::string rest;
        if (!(fields >> job.job_id >> job.submit >> action >> e.when >> e.uid >> e.restarts) ||
            (fields >> rest))
            return make_error(origin + ":" + std::to_string(n) +
                              ": expected '<job id> <submit> <action> <time> <uid> <restarts>'");
        auto a = parse_action(action);
        if (!a) return make_error(origin + ":" + std::to_string(n) + ": " + a.error().message);
        e.action = *a;
        ledger.record(job, e);
    }
    return ledger;
}

Result<ActionLedger> ActionLedger::load(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid()) {
        if (errno == ENOENT) return ActionLedger{};
        return make_error("cannot open " + path + ": " + errno_text(errno));
    }
    std::string text;
    char buf[8192];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return make_error("reading " + path + ": " + errno_text(errno));
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > (64u << 20)) return make_error(path + ": larger than 64 MiB, not a ledger");
    }
    return parse(text, path);
}

Status ActionLedger::save(const std::string& path) const {
    return write_file_atomically(path, serialize(), ".new");
}

}  // namespace explsched
