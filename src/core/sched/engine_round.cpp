// The phases of an engine round after the fit caches are synced: the whole-round input checks,
// classify (utilities and the stopping rules), the price, decide (the policy ladder) and
// prioritise. The rules themselves are pure functions in policy.hpp; this file gathers their
// inputs from the caches and writes their verdicts into the assessments.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "core/sched/engine_impl.hpp"
#include "core/sched/priority.hpp"
#include "core/sched/utility.hpp"

namespace explsched {

using namespace engine_detail;

namespace {

UtilityInputs utility_inputs(double gain, const StopEvidence& e, std::uint32_t gpus,
                             const EngineSettings& s) {
    UtilityInputs in;
    in.gain = gain;
    in.group_scale = e.sweep_scale;
    in.win_probability = e.own_win_probability;
    in.dominated_weight = s.dominated_weight;
    in.gpus = std::max<double>(gpus, 1.0);
    in.horizon_s = s.utility_horizon_s;
    return in;
}

// Prices memoised per GPU count: most pending jobs ask for a handful of GPUs.
using PriceMemo = std::array<double, 33>;

double job_price(const JobView& job, double load_after, const RoundPrice& price, PriceMemo& memo) {
    if (!price.priced) return 0.0;
    if (job.state == JobState::running) return price.now;
    if (job.gpus < memo.size()) {
        double& memoised = memo[job.gpus];
        if (std::isnan(memoised)) memoised = price.function(load_after);
        return memoised;
    }
    return price.function(load_after);
}

// A pending job's value is floored by its age (hopeless ones excepted), then composed with the
// age and partition terms and nice into a Slurm priority.
std::uint32_t prioritise(const JobView& job, TrialState state, double value, double age,
                         const EngineSettings& s) {
    if (job.state == JobState::pending && state != TrialState::hopeless) value = starvation_floor(value, age);
    return compose_priority(value, age, job.partition_factor, job.nice, s);
}

}  // namespace

// Rounds usually list the same jobs in the same order: then last round's index and cache pointers
// still hold, and the round needs no hashing at all.
Status Engine::Impl::index_jobs(const std::vector<JobView>& jobs, bool& same_keys) {
    const std::size_t n = jobs.size();
    same_keys = n == keys.size();
    for (std::size_t j = 0; same_keys && j < n; ++j) same_keys = jobs[j].key == keys[j];
    if (same_keys) return {};
    index.clear();
    index.reserve(n);
    keys.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
        keys[j] = jobs[j].key;
        if (!index.emplace(jobs[j].key, j).second) {
            index.clear();
            keys.clear();
            last.clear();
            return make_error("engine round: job " + to_string(jobs[j].key) + " listed twice");
        }
    }
    return {};
}

Status Engine::Impl::measure_load(const std::vector<JobView>& jobs, const ClusterView& cluster,
                                  RoundLoad& out) {
    std::uint64_t busy = 0;
    for (const JobView& job : jobs) {
        if (job.state == JobState::running) busy += job.gpus;
    }
    if (cluster.busy_gpus >= 0) busy = static_cast<std::uint64_t>(cluster.busy_gpus);
    if (cluster.total_gpus == 0 && busy > 0) {
        index.clear();
        last.clear();
        return make_error("engine round: total_gpus is 0 but " + std::to_string(busy) + " GPUs are busy");
    }
    out.total = std::max<double>(cluster.total_gpus, 1.0);
    out.load = std::min(1.0, static_cast<double>(busy) / out.total);
    return {};
}

void Engine::Impl::classify(const std::vector<JobView>& jobs, std::vector<Assessment>& out) {
    const std::size_t n = jobs.size();
    out.assign(n, Assessment{});
    scratch.clear();
    discounted = 0;
    for (std::size_t j = 0; j < n; ++j) {
        const TrialCache* c = trial_of[j];
        Assessment& a = out[j];
        a.key = jobs[j].key;
        a.owner = jobs[j].owner;
        a.group = jobs[j].group;
        a.exploratory = !jobs[j].group.empty();
        if (c != nullptr) {
            a.gpu_type = jobs[j].gpu_type;
            a.gpu_value = c->gpu_value;
            if (a.gpu_value.how == GpuValuation::scaled || a.gpu_value.how == GpuValuation::no_row)
                a.measured_gpu_type = jobs[j].measured_gpu_type;
        }
        if (c == nullptr || !c->predictor.fitted() || !c->error.empty()) continue;
        // a paused trial bids for no GPU: its utility does not inform the price
        if (classify_trial(jobs[j], j, *c, a) && !jobs[j].paused) scratch.push_back(a.utility);
    }
}

// One trial with a usable fit: its prediction, its utility, and whether a stopping rule makes it
// hopeless. Returns true if it stays promising (its utility then informs the price bounds).
StopEvidence Engine::Impl::stop_evidence(const JobView& job, std::size_t j, const TrialCache& c) const {
    const EngineSettings& s = settings;
    const GroupStats& gs = groups[group_of[j]];
    StopEvidence e;
    e.direction = job.direction;
    e.points = c.predictor.size();
    e.last_step = c.predictor.last_step();
    e.max_steps = job.max_steps;
    e.sweep_furthest = gs.furthest_step;
    e.leader = gs.best_key == job.key;
    if (!job.lr_drops.empty() && job.lr_drops.front() > 0.0 && std::isfinite(job.lr_drops.front()))
        e.first_drop = job.lr_drops.front();
    e.best_other = e.leader ? gs.second : gs.best;
    e.final_metric = widen_interval(c.final_metric, group_widen(gs));
    e.forecasts_held = forecasts_held(gs);
    e.own_win_probability =
        win_probability_heavy(e.final_metric, job.direction, e.best_other, s.interval_level);
    e.win_probability = e.own_win_probability;
    if (s.sibling_jumps && job.max_steps > 0.0 && e.final_metric.extrapolated) {
        const double allow = gs.siblings.jump_allowance(job.key, e.last_step / job.max_steps, c.own_jumps);
        if (allow > 0.0 && std::isfinite(allow)) {
            if (job.direction == Direction::maximize) {
                e.final_metric.upper += allow;
            } else {
                e.final_metric.lower -= allow;
            }
            e.final_metric.jump_allowance = allow;
            e.win_probability =
                win_probability_heavy(e.final_metric, job.direction, e.best_other, s.interval_level);
        }
    }
    const double own = std::fabs(c.best - c.first);
    e.sweep_scale = gs.hi > gs.lo ? gs.hi - gs.lo : std::max(own, 1e-12);
    if (s.stale_best_fraction > 0.0) {
        const OwnBest b = stale_best_step(c.predictor.steps(), c.predictor.metrics(), job.direction,
                                          kStaleBestMargin * e.sweep_scale);
        e.own_best = b.best;
        e.own_best_step = b.step;
    }
    // the kept curves of its sweep's other members, for the best and the behind track
    const bool tracked = !e.leader && job.max_steps > 0.0 && std::isfinite(e.best_other);
    if (tracked && (s.best_track_margin > 0.0 || s.behind_track_margin > 0.0))
        gs.siblings.others(job.key, track_scratch);
    if (s.best_track_margin > 0.0 && tracked) {
        const TrackLead t =
            best_track_lead(c.predictor.steps(), c.predictor.metrics(), job.direction, job.max_steps,
                            track_scratch, e.best_other, s.best_track_margin * e.sweep_scale);
        if (t.points > 0 && t.lead > s.best_track_margin * e.sweep_scale &&
            t.lead > 2.0 * t.sd / std::sqrt(static_cast<double>(t.points))) {
            // the final lead read as normal around the lead now, its spread the points' (floored at
            // a tenth of the lead: a perfectly steady lead is not certain)
            const double sd = std::max(t.sd, 0.1 * t.lead);
            const double chance = 0.5 * std::erfc(-t.lead / (sd * std::sqrt(2.0)));
            e.own_win_probability = std::max(e.own_win_probability, chance);
            e.win_probability = std::max(e.win_probability, chance);
            e.final_metric.track_lead = t.lead;  // the near-tie rule reads it too
            e.final_metric.track_chance = chance;
        }
    }
    if (s.behind_track_margin > 0.0 && tracked) {
        const TrackLead t =
            behind_track_gap(c.predictor.steps(), c.predictor.metrics(), job.direction, job.max_steps,
                             track_scratch, e.best_other, s.best_track_margin * e.sweep_scale, c.own_jumps);
        if (t.points > 0 && t.lead < -s.behind_track_margin * e.sweep_scale &&
            -t.lead > 2.0 * t.sd / std::sqrt(static_cast<double>(t.points))) {
            // the gap at the end read as normal around the gap now, moved by the rate at which it
            // closes (not by one at which it widens) over the rest of the run; its spread the
            // points', floored at kBehindTrackSpread of the gap
            const double closing = std::max(0.0, t.slope) * std::max(0.0, 1.0 - t.fraction);
            const double sd = std::max(t.sd, kBehindTrackSpread * -t.lead);
            e.behind_lead = t.lead;
            e.behind_chance = 0.5 * std::erfc(-(t.lead + closing) / (sd * std::sqrt(2.0)));
        }
    }
    if (job.max_steps > 0.0 && c.speed > 0.0 && std::isfinite(c.speed)) {
        e.remaining_gpu_hours =
            std::max(0.0, job.max_steps - e.last_step) / c.speed * std::max<double>(job.gpus, 1.0) / 3600.0;
    }
    return e;
}

bool Engine::Impl::classify_trial(const JobView& job, std::size_t j, const TrialCache& c, Assessment& a) {
    const EngineSettings& s = settings;
    const StopEvidence e = stop_evidence(job, j, c);
    a.prediction = e.final_metric;
    // Audited utility: scaled down when the owner's forecasts keep failing (what preemption and
    // the priority compare).
    const double trust = owner_factor(job.owner);
    a.utility = trust * utility_per_gpu_second(utility_inputs(c.gain, e, job.gpus, s));
    if (trust < 1.0) ++discounted;

    std::optional<Reason> stop = hopeless_rule(e, s);
    if (!stop) stop = expected_gain_rule(e, s);
    // the milestone standing is looked up only when the rule could fire (it ranks the sweep)
    if (!stop && milestone_rule_applies(e, s)) stop = milestone_rule(e, milestone_rank(job, j), s);
    if (stop) {
        a.state = TrialState::hopeless;
        a.reason = *stop;
        // judged this early only on the sweep's held forecasts: the verdict says it is not final
        if (e.forecasts_held && !final_stop_allowed(e, s)) a.reason.held_at = e.last_step / run_length(e);
        return false;
    }
    a.state = TrialState::promising;
    return true;
}

Engine::Impl::RoundPrice Engine::Impl::update_price(const RoundLoad& load) {
    bounds.observe(scratch);
    const bool priced = bounds.has_estimate();
    const PriceFunction price = bounds.price();
    const double ratio = priced ? price.upper() / price.lower() : settings.price_min_ratio;
    const double now = priced ? price(load.load) : 0.0;
    return RoundPrice{priced, price, ratio, now};
}

void Engine::Impl::decide(const std::vector<JobView>& jobs, const ClusterView& cluster, const RoundLoad& load,
                          const RoundPrice& price, std::vector<Assessment>& out) {
    const EngineSettings& s = settings;
    PriceMemo price_by_gpus;
    price_by_gpus.fill(kNaN);
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        const JobView& job = jobs[j];
        Assessment& a = out[j];
        const TrialCache* c = trial_of[j];
        const double load_after =
            job.state == JobState::pending ? std::min(1.0, load.load + job.gpus / load.total) : load.load;
        a.price = job_price(job, load_after, price, price_by_gpus);
        const double age = age_factor(cluster.now - job.submit_time, s.max_age_s);
        const double running_s =
            job.state == JobState::running && job.start_time > 0.0 ? cluster.now - job.start_time : kInf;
        if (c != nullptr && std::isnan(a.prediction.value)) a.prediction = c->final_metric;

        LadderInputs in = ladder_inputs(job, j, c, a, load_after, running_s, price);
        const LadderRung rung = ladder_rung(in);
        if (rung == LadderRung::milestones) in.standing = milestone_rank(job, j);
        const TrialVerdict verdict = decide_trial(in, s);
        a.state = verdict.state;
        a.decision = verdict.decision;
        a.reason = verdict.reason;
        if (rung == LadderRung::invalid_report) a.error = c->error;
        a.priority = prioritise(job, a.state, verdict.value, age, s);
    }
}

LadderInputs Engine::Impl::ladder_inputs(const JobView& job, std::size_t j, const TrialCache* c,
                                         const Assessment& a, double load_after, double running_s,
                                         const RoundPrice& price) const {
    LadderInputs in;
    in.job_state = job.state;
    in.state = a.state;
    in.reason = a.reason;
    in.max_steps = job.max_steps;
    in.utility = a.utility;
    in.price = a.price;
    in.load_after = load_after;
    in.running_s = running_s;
    in.price_ratio = price.ratio;
    in.hopeless_action = hopeless_action_of(job, settings);
    if (c == nullptr) return in;
    in.exploratory = true;
    in.invalid_report = !c->error.empty();
    in.diverged = c->diverged;
    in.diverged_at = c->diverged_at;
    in.points = c->predictor.size();
    in.last_step = c->predictor.last_step();
    in.speed = c->speed;
    const GroupStats& gs = groups[group_of[j]];
    in.holds_sweep_best = gs.best_key == job.key;
    in.sweep_best = gs.best;
    in.sweep_next = gs.second;
    return in;
}

void Engine::Impl::finish_round(const std::vector<Assessment>& out, const ClusterView& cluster,
                                const RoundLoad& load, const RoundPrice& price, const RoundCounts& counts) {
    last = out;
    summary = RoundSummary{};
    summary.now = cluster.now;
    summary.utilisation = load.load;
    summary.price_lower = price.priced ? price.function.lower() : 0.0;
    summary.price_upper = price.priced ? price.function.upper() : 0.0;
    summary.price_now = price.now;
    summary.trials = counts.trials;
    summary.fitted = counts.fitted;
    summary.invalid = counts.invalid;
    summary.discounted = discounted;
}

}  // namespace explsched
