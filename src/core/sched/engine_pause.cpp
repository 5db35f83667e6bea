// Pause and resume, the engine's phase after decide (the rules are in pause.hpp): which running
// trials are paused, which paused ones resume, stay paused, or stop for good.
#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/sched/engine_impl.hpp"
#include "core/sched/pause.hpp"

namespace explsched {

using namespace engine_detail;

namespace {

bool usable(const TrialCache* c) {
    return c != nullptr && c->predictor.fitted() && c->error.empty() && !c->diverged;
}

// Stopped on the ranking alone (behind at a milestone before its curve can be extrapolated,
// milestone_stop_unpredicted): nothing says it cannot matter. Diverged or invalid curves excluded.
bool stopped_unpredicted(const TrialCache* c, const Assessment& a) {
    return c != nullptr && c->error.empty() && !c->diverged &&
           a.reason.code == ReasonCode::behind_at_milestone &&
           (a.decision == Decision::terminate || a.decision == Decision::requeue_hold);
}

// The host can pause it (requeue and hold: JobView::requeueable) and it has pauses left.
bool can_pause(const JobView& job, const EngineSettings& s) {
    return job.requeueable && pause_enabled(job.pauses, s);
}

// Explore first may pause this running trial: a pause left, a clean curve, past
// explore_first_progress of a known run and not done, out of its grace period, and kept or
// preemptable by the ladder (not already stopped).
bool explore_first_applies(const JobView& job, const TrialCache* c, const Assessment& a, double now,
                           const EngineSettings& s) {
    if (c == nullptr || !c->error.empty() || c->diverged || !can_pause(job, s) || !(job.max_steps > 0.0) ||
        c->predictor.size() == 0)
        return false;
    const double step = c->predictor.last_step();
    const double running_s = job.start_time > 0.0 ? now - job.start_time : 0.0;
    return step >= s.explore_first_progress * job.max_steps && step < job.max_steps &&
           running_s >= s.min_run_s && (a.decision == Decision::keep || a.decision == Decision::preemptable);
}

// GPUs the round's pending (not paused) jobs that were told to run want beyond the free ones:
// what pauses could usefully free; negative: GPUs left over for paused trials to resume on.
// A task of a job array at its task limit waits for a slot, not for GPUs (slot_waiters): not counted.
double shortfall(const std::vector<JobView>& jobs, const std::vector<Assessment>& out,
                 const RoundLoad& load) {
    double want = 0.0;
    for (std::size_t j = 0; j < jobs.size(); ++j)
        if (jobs[j].state == JobState::pending && !jobs[j].paused && !jobs[j].throttled &&
            out[j].decision == Decision::run)
            want += jobs[j].gpus;
    const double free = load.total * (1.0 - load.load);
    return want - free;
}

// Every other member of the sweep this round is paused (or there is none): job j is its sweep's
// last open question.
bool last_open(const std::vector<JobView>& jobs, const std::vector<std::size_t>& members, std::size_t j) {
    for (std::size_t m : members)
        if (m != j && !jobs[m].paused) return false;
    return true;
}

// Per job array at its task limit (JobView::throttled), its pending tasks told to run: each waits
// for a slot one of the array's running tasks holds. A record of several pending tasks (Slurm's
// array record before its tasks are split off) counts once.
std::unordered_map<std::uint32_t, std::uint32_t> slot_waiters(const std::vector<JobView>& jobs,
                                                              const std::vector<Assessment>& out) {
    std::unordered_map<std::uint32_t, std::uint32_t> waiters;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        const JobView& job = jobs[j];
        if (job.state == JobState::pending && !job.paused && job.throttled && job.array_job_id != 0 &&
            out[j].decision == Decision::run)
            ++waiters[job.array_job_id];
    }
    return waiters;
}

std::uint32_t waiters_of(const std::unordered_map<std::uint32_t, std::uint32_t>& waiters,
                         std::uint32_t array) {
    if (array == 0) return 0;
    const auto it = waiters.find(array);
    return it == waiters.end() ? 0 : it->second;
}

}  // namespace

void Engine::Impl::pause_and_resume(const std::vector<JobView>& jobs, const ClusterView& cluster,
                                    const RoundLoad& load, std::vector<Assessment>& out) {
    const EngineSettings& s = settings;
    std::vector<PauseCandidate> unlikely, thaw, last_hope;
    // unlikely trials above the GPU price, paused only for waiting tasks of their job array
    std::vector<PauseCandidate> for_slot;
    std::vector<Reason> pause_reason(jobs.size());
    std::unordered_map<std::uint32_t, std::uint32_t> waiting = slot_waiters(jobs, out);
    std::vector<std::optional<Reason>> idle_reason(jobs.size());  // paused even with nobody waiting
    std::vector<char> released_alone(jobs.size(), 0);             // paused, its sweep's last open question
    // explore first: the members of each sweep that wait without having reported
    std::vector<std::uint32_t> untried;
    if (s.explore_first_progress > 0.0) {
        untried.assign(groups.size(), 0);
        for (std::size_t j = 0; j < jobs.size(); ++j)
            if (jobs[j].state == JobState::pending && !jobs[j].paused && group_of[j] != kNone &&
                jobs[j].points.empty())
                ++untried[group_of[j]];
    }
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        const JobView& job = jobs[j];
        Assessment& a = out[j];
        const TrialCache* c = trial_of[j];
        if (job.paused) {
            a.decision = Decision::pause;
            if (!usable(c)) {
                // No forecast (its curve was lost): resumed when there is room, as a trial
                // without a prediction runs.
                a.reason = Reason{};
                a.reason.code = ReasonCode::paused_no_room;
                a.reason.a = a.price;
                a.reason.b = a.price;
                a.reason.d = job.gpus;
                thaw.push_back(PauseCandidate{j, job.gpus, -1.0});
                continue;
            }
            const StopEvidence e = stop_evidence(job, j, *c);
            const PauseOutlook o = pause_outlook(e, c->best, c->speed, job.gpus, owner_factor(job.owner), s);
            if (stop_is_final(e, o, s)) {
                a.state = TrialState::hopeless;
                a.decision = hopeless_decision(hopeless_action_of(job, s), JobState::pending);
                a.reason = cannot_matter_reason(e, o);
                continue;
            }
            if (job.throttled) {
                // Its array runs at its task limit: released, it would wait for a slot as its
                // untried siblings do, and they take the next one first.
                a.reason = Reason{};
                a.reason.code = ReasonCode::paused_no_slot;
                a.reason.a = o.optimistic_utility;
                a.reason.b = a.price;
                a.reason.c = waiters_of(waiting, job.array_job_id);
                continue;
            }
            // Its sweep's other members all ended (no leader left to wait for): on GPUs nobody
            // else wants it resumes whatever the price (the sweep's last open question), else it
            // would stay held on an idle cluster for ever.
            const bool alone = last_open(jobs, groups[group_of[j]].members, j);
            released_alone[j] = alone;
            if (alone && o.optimistic_utility < a.price) {
                a.reason = Reason{};
                a.reason.code = ReasonCode::paused_no_room;
                a.reason.a = o.optimistic_utility;
                a.reason.b = a.price;
                a.reason.d = job.gpus;
                a.reason.e = o.bound;
                last_hope.push_back(PauseCandidate{j, job.gpus, o.optimism});
                continue;
            }
            if (!alone && waits_for_leaders(e, o, s)) {
                // Past hopeless_min_progress and even its optimistic bound behind the sweep's
                // best: what its GPUs would buy is the interval's tail, not worth a restart while
                // the sweep's leaders run (they can only raise the best). It is stopped once its
                // chance falls under hopeless_probability, or resumed as the sweep's last.
                a.reason = Reason{};
                a.reason.code = ReasonCode::paused_bound_behind;
                a.reason.a = o.bound;
                a.reason.b = e.best_other;
                a.reason.c = e.win_probability;
                a.reason.e = o.bound;
                continue;
            }
            if (!alone && behind_track_hopeless(e, s)) {
                // Below its sweep's best path and not closing the gap (behind_track_margin): its
                // optimistic bound is its own forecast's, which that path already outruns. It
                // waits while its sweep's other members run, as one whose bound is behind does.
                a.reason = behind_track_reason(e);
                continue;
            }
            a.reason = Reason{};
            a.reason.a = o.optimistic_utility;
            a.reason.b = a.price;
            if (o.optimistic_utility >= a.price) {
                a.reason.code = ReasonCode::paused_no_room;
                a.reason.d = job.gpus;
                thaw.push_back(PauseCandidate{j, job.gpus, o.optimism});
            } else {
                a.reason.code = ReasonCode::paused_below_price;
                a.reason.c = std::min(1.0, load.load + job.gpus / load.total);
                a.reason.d = o.bound;
            }
            a.reason.e = o.bound;  // kept for `resumed` (d, e rewritten below)
            continue;
        }
        if (job.state == JobState::pending && !usable(c) && s.pause_probability > 0.0 &&
            stopped_unpredicted(c, a)) {
            // the same for a pending one (requeued, or never started): waiting costs nothing
            a.state = TrialState::unknown;
            a.decision = Decision::wait;
            a.reason.code = ReasonCode::asha_behind;
            continue;
        }
        if (job.state == JobState::pending && job.pauses > 0 &&
            (a.decision == Decision::terminate || a.decision == Decision::requeue_hold) && usable(c) &&
            c->graced_pauses < job.pauses &&
            (c->released_last == job.pauses || last_open(jobs, groups[group_of[j]].members, j))) {
            // Released from its pause as its sweep's last open question and not restarted yet:
            // the stopping rule would judge the very evidence it was resumed on (pollux seed 6:
            // the sweep's best, a cifar10 trial, resumed as its sweep's last and cancelled a
            // round later by the near-tie rule at 73 % of its run). Its resumed run keeps its
            // grace (resumed_grace, below); a diverged or invalid curve is not usable and is
            // stopped at once. A trial whose sweep still runs is judged as before: its leaders
            // can only raise the best it is judged against.
            const StopEvidence e = stop_evidence(job, j, *c);
            a.decision = Decision::run;
            a.reason = Reason{};
            a.reason.code = ReasonCode::resumed_pending;
            a.reason.b = s.min_run_s;
            a.reason.c = e.win_probability;
            a.reason.d = e.best_other;
            continue;
        }
        if (job.state == JobState::pending && usable(c) &&
            (a.decision == Decision::terminate || a.decision == Decision::requeue_hold) &&
            !final_stop_allowed(stop_evidence(job, j, *c), s)) {
            // Judged before hopeless_min_progress on held forecasts alone (a trial resumed, or
            // requeued, early in its run): not final; it waits, which costs nothing.
            a.decision = Decision::wait;
            continue;
        }
        if (job.state != JobState::running) continue;
        if (trial_of[j] != nullptr && job.pauses > trial_of[j]->graced_pauses) {
            // the first run seen after this pause is the resumed one (one per pause)
            trial_of[j]->graced_pauses = job.pauses;
            trial_of[j]->graced_start = job.start_time;
        }
        if (job.pauses > 0 && usable(c) && job.start_time == c->graced_start &&
            (a.decision == Decision::terminate || a.decision == Decision::requeue_hold)) {
            // Resumed from a pause: the resume bought new evidence at the cost of a restart. A
            // verdict on its forecast (the same evidence, a few points on) waits for its grace
            // (min_run) to end; a diverged or invalid curve is stopped at once.
            const double running_s = job.start_time > 0.0 ? cluster.now - job.start_time : kInf;
            if (running_s < s.min_run_s) {
                const StopEvidence e = stop_evidence(job, j, *c);
                a.decision = Decision::keep;
                a.reason = Reason{};
                a.reason.code = ReasonCode::resumed_grace;
                a.reason.a = running_s;
                a.reason.b = s.min_run_s;
                a.reason.c = e.win_probability;
                a.reason.d = e.best_other;
                continue;
            }
        }
        if (!untried.empty() && group_of[j] != kNone && untried[group_of[j]] > 0 &&
            explore_first_applies(job, c, a, cluster.now, s) && groups[group_of[j]].best_key != job.key) {
            Reason r;
            r.code = ReasonCode::explore_first;
            r.a = untried[group_of[j]];
            r.b = c->predictor.last_step() / job.max_steps;
            r.c = s.explore_first_progress;
            pause_reason[j] = r;
            // least likely first; a trial without a forecast as a coin flip
            const double chance = usable(c) ? stop_evidence(job, j, *c).own_win_probability : 0.5;
            unlikely.push_back(PauseCandidate{j, job.gpus, -chance});
            continue;
        }
        if (!usable(c)) {
            // Behind at a milestone before its curve can be extrapolated (milestone_stop_unpredicted,
            // ASHA's rule on the ranking alone): nothing says it cannot matter, so it is paused, not
            // stopped, and resumed when there is room (as a paused trial without a forecast). Once
            // resumed it is not stopped on the ranking alone again (it would be judged at the very
            // milestone it was paused at): it gives way when others need its GPUs, and the
            // forecast-based rules judge it once its curve is long enough.
            if (s.pause_probability > 0.0 && stopped_unpredicted(c, a)) {
                a.state = TrialState::unknown;
                if (can_pause(job, s)) {
                    a.decision = Decision::pause;
                } else {
                    a.decision = Decision::preemptable;
                    a.reason.code = ReasonCode::asha_behind;
                }
            }
            continue;
        }
        if (!can_pause(job, s)) {
            // Its pauses spent, pausing off, or a trial the host cannot requeue: a stopping rule
            // that fired before hopeless_min_progress on held forecasts alone is not final; the
            // trial gives way to anyone (hopeless, preemptable) instead of being cancelled.
            if ((a.decision == Decision::terminate || a.decision == Decision::requeue_hold) &&
                !final_stop_allowed(stop_evidence(job, j, *c), s)) {
                a.decision = Decision::preemptable;
            }
            continue;
        }
        const StopEvidence e = stop_evidence(job, j, *c);
        const PauseOutlook o = pause_outlook(e, c->best, c->speed, job.gpus, owner_factor(job.owner), s);
        if (a.decision == Decision::terminate || a.decision == Decision::requeue_hold) {
            // a stopping rule fired: final only when even the optimistic bound cannot matter
            if (!stop_is_final(e, o, s)) a.decision = Decision::pause;
            continue;
        }
        if (a.state != TrialState::promising ||
            (a.decision != Decision::keep && a.decision != Decision::preemptable))
            continue;
        const double running_s = job.start_time > 0.0 ? cluster.now - job.start_time : kInf;
        if (auto r = pause_rule(e, o, a.utility, a.price, running_s, s)) {
            pause_reason[j] = *r;
            unlikely.push_back(PauseCandidate{j, job.gpus, -e.own_win_probability});
            if (auto idle = idle_pause_rule(e, o, *r, s)) idle_reason[j] = *idle;
        } else if (waiters_of(waiting, job.array_job_id) > 0) {
            // Tasks of its array wait for its slot: the slot is short, not a GPU, so its utility is
            // not held against the GPU price; every other condition of the pause rule holds.
            if (auto slot = pause_rule(e, o, a.utility, kInf, running_s, s)) {
                slot->d = a.price;
                pause_reason[j] = *slot;
                for_slot.push_back(PauseCandidate{j, job.gpus, -e.own_win_probability});
            }
        }
    }
    const double short_gpus = shortfall(jobs, out, load);
    // Unlikely trials are paused, least likely first, only as far as pending trials need GPUs.
    std::stable_sort(unlikely.begin(), unlikely.end(),
                     [](const PauseCandidate& x, const PauseCandidate& y) { return x.key > y.key; });
    double freed = 0.0;
    for (const PauseCandidate& p : unlikely) {
        if (freed >= short_gpus) break;
        out[p.job].decision = Decision::pause;
        out[p.job].reason = pause_reason[p.job];
        freed += p.gpus;
    }
    // ... and, in job arrays at their task limit, as far as their waiting tasks need slots (a task
    // paused above freed one), least likely first.
    if (!waiting.empty()) {
        for (const PauseCandidate& p : unlikely)
            if (out[p.job].decision == Decision::pause && waiting.count(jobs[p.job].array_job_id) != 0) {
                std::uint32_t& n = waiting[jobs[p.job].array_job_id];
                if (n > 0) --n;
            }
        std::vector<PauseCandidate> slot_candidates;
        for (const PauseCandidate& p : unlikely)
            if (out[p.job].decision != Decision::pause) slot_candidates.push_back(p);
        slot_candidates.insert(slot_candidates.end(), for_slot.begin(), for_slot.end());
        std::stable_sort(slot_candidates.begin(), slot_candidates.end(),
                         [](const PauseCandidate& x, const PauseCandidate& y) { return x.key > y.key; });
        for (const PauseCandidate& p : slot_candidates) {
            const auto it = waiting.find(jobs[p.job].array_job_id);
            if (jobs[p.job].array_job_id == 0 || it == waiting.end() || it->second == 0) continue;
            const std::uint32_t waiters = it->second--;
            Reason r = pause_reason[p.job];
            // pause_unlikely's figures, the waiting tasks in place of its utility (d: the price)
            if (r.code == ReasonCode::pause_unlikely) r.code = ReasonCode::pause_slot;
            if (r.code == ReasonCode::pause_slot) r.c = waiters;
            out[p.job].decision = Decision::pause;
            out[p.job].reason = r;
        }
    }
    // ... and, past hopeless_min_progress, those buying next to nothing with their GPUs whom the
    // resume rule would not resume (pause_idle_utility), whether or not anyone waits.
    for (const PauseCandidate& p : unlikely) {
        if (out[p.job].decision == Decision::pause || !idle_reason[p.job]) continue;
        out[p.job].decision = Decision::pause;
        out[p.job].reason = *idle_reason[p.job];
    }
    double left = -short_gpus;  // GPUs the pending trials leave free
    auto resume = [&](std::size_t j, bool idle) {
        Assessment& a = out[j];
        const double bound = a.reason.e;
        a.decision = Decision::run;
        a.reason.code = idle ? ReasonCode::resumed_idle : ReasonCode::resumed;
        a.reason.c = std::min(1.0, load.load + jobs[j].gpus / load.total);
        a.reason.d = bound;
        a.reason.e = groups[group_of[j]].best;
        left -= jobs[j].gpus;
    };
    // Paused trials worth their price resume, in order of their optimistic bound, on the GPUs
    // the pending trials leave free; then the last paused members of finished sweeps, on what is
    // left.
    for (std::size_t j : choose_by_key(std::move(thaw), left)) resume(j, false);
    for (std::size_t j : choose_by_key(std::move(last_hope), left)) resume(j, true);
    // released as its sweep's last open question: so it stays, for resumed_pending, when another
    // paused member is released with it
    for (std::size_t j = 0; j < jobs.size(); ++j)
        if (released_alone[j] && out[j].decision == Decision::run && trial_of[j] != nullptr)
            trial_of[j]->released_last = jobs[j].pauses;
    // the paused ones that stay: how many GPUs were free for them
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        Assessment& a = out[j];
        if (jobs[j].paused && a.decision == Decision::pause && a.reason.code == ReasonCode::paused_no_room)
            a.reason.c = std::max(0.0, -short_gpus);
    }
}

}  // namespace explsched
