// What priority/explsched did to hopeless trials (held, requeued and held, cancelled), per job
// INSTANCE (job id, submit time), kept on disk so that a restarted slurmctld neither acts twice on
// one instance nor re-holds a trial whose owner released it (scontrol release). A reused job id
// is another instance and starts with a clean record.
//
// Slurm gives a requeued job a new submit time (and counts the requeue in restart_cnt), so a job
// matches an entry when it has the entry's owner and either the entry's submit time, or a later
// one with more restarts (it was requeued since, by us or anyone). A job with a reused id comes
// with restart count 0 (a fresh submission); the ambiguous case (a reused id requeued more often
// than the old job had been when we acted) errs on the side of not acting again.
//
// The file is rewritten whole and atomically (temporary file, fsync, rename, fsync of the
// directory): a crash leaves the old ledger or the new one, never half of one. It is small: one
// line per acted-on instance still known to slurmctld.
//
// It also keeps site_factor/explsched's pins: job instances whose site factor an operator set by
// hand (scontrol update job SiteFactor=), which the plugin then leaves alone. A pin is not a
// hopeless action: acted() ignores it, and an instance may have both.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "core/base/result.hpp"

namespace explsched {

// paused: requeued and held by the pause rule (the hold is ours to release); resumed: that hold
// was released (by the plugin, or by its owner or an operator), after which the trial may be acted
// on again (a later stop, or another pause within pause_max).
enum class LedgerAction { held, requeued_held, cancelled, site_pinned, paused, resumed };
const char* to_string(LedgerAction action);

struct JobInstance {
    std::uint32_t job_id = 0;
    std::int64_t submit = 0;  // slurmctld's submit time of the job (seconds since the epoch)
    friend bool operator<(const JobInstance& a, const JobInstance& b) {
        return a.job_id != b.job_id ? a.job_id < b.job_id : a.submit < b.submit;
    }
    friend bool operator==(const JobInstance& a, const JobInstance& b) {
        return a.job_id == b.job_id && a.submit == b.submit;
    }
};

struct LedgerEntry {
    LedgerAction action = LedgerAction::held;
    std::int64_t when = 0;       // seconds since the epoch
    std::uint32_t uid = 0;       // the job's owner
    std::uint32_t restarts = 0;  // the job's restart count when acted on
};

class ActionLedger {
public:
    // True if the job (this instance, or it before a requeue) was acted on and not resumed since:
    // then never again.
    bool acted(const JobInstance& job, std::uint32_t uid, std::uint32_t restarts) const;
    // The newest entry of this job (this instance, or it before a requeue), or null.
    const LedgerEntry* latest(const JobInstance& job, std::uint32_t uid, std::uint32_t restarts) const;
    // How often the job was paused (paused and resumed entries).
    std::uint32_t pauses(const JobInstance& job, std::uint32_t uid, std::uint32_t restarts) const;
    // Changes the newest entry's action (paused -> resumed, cancelled, requeued_held) and time;
    // false when the job has no entry.
    bool update(const JobInstance& job, std::uint32_t uid, std::uint32_t restarts, LedgerAction action,
                std::int64_t when);
    // Records an action; false if the instance already had one (nothing changes), unless that one
    // was resumed (it is replaced). A site_pinned
    // entry goes to the pins instead (see pin()).
    bool record(const JobInstance& job, const LedgerEntry& entry);
    // The pin of this job (this instance, or it before a requeue), or null.
    const LedgerEntry* pinned(const JobInstance& job, std::uint32_t uid, std::uint32_t restarts) const;
    // Pins (or re-pins) an instance; unpin() forgets it (true when there was one).
    void pin(const JobInstance& job, std::uint32_t uid, std::uint32_t restarts, std::int64_t when);
    bool unpin(const JobInstance& job);
    // Puts back the entries (not the pins) of job id `job_id`, every instance, as `before` has
    // them: undoes record() and update() for an act that was not carried out.
    void restore_job(const ActionLedger& before, std::uint32_t job_id);
    // Keeps only the entries keep(instance, entry) answers true for; true when something was dropped.
    template <typename Keep>
    bool retain(Keep keep) {
        bool dropped = false;
        for (auto* m : {&entries_, &pins_}) {
            for (auto it = m->begin(); it != m->end();) {
                if (keep(it->first, it->second)) {
                    ++it;
                } else {
                    it = m->erase(it);
                    dropped = true;
                }
            }
        }
        return dropped;
    }
    std::size_t size() const { return entries_.size() + pins_.size(); }
    const std::map<JobInstance, LedgerEntry>& entries() const { return entries_; }
    const std::map<JobInstance, LedgerEntry>& pins() const { return pins_; }

    // The file's text, and its parse (errors name the line).
    std::string serialize() const;
    static Result<ActionLedger> parse(const std::string& text, const std::string& origin);

    // Reads `path`; a missing file is an empty ledger.
    static Result<ActionLedger> load(const std::string& path);
    // Writes `path` atomically (see above). Errors name the path and the failed call.
    Status save(const std::string& path) const;

private:
    std::map<JobInstance, LedgerEntry> entries_;
    std::map<JobInstance, LedgerEntry> pins_;
};

}  // namespace explsched
