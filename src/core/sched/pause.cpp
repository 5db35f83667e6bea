#include "core/sched/pause.hpp"

#include <algorithm>
#include <cmath>

#include "core/sched/utility.hpp"

namespace explsched {

namespace {

double optimistic_end(const Prediction& p, Direction d) {
    return d == Direction::maximize ? p.upper : p.lower;
}

double signed_gain(Direction d, double from, double to) {
    return d == Direction::maximize ? to - from : from - to;
}

}  // namespace

PauseOutlook pause_outlook(const StopEvidence& e, double current, double speed, double gpus, double trust,
                           const EngineSettings& s) {
    PauseOutlook o;
    o.bound = optimistic_end(e.final_metric, e.direction);
    if (!std::isfinite(o.bound)) o.bound = current;
    const double scale = e.sweep_scale > 0.0 ? e.sweep_scale : 1.0;
    if (std::isfinite(e.best_other)) {
        o.can_matter = signed_gain(e.direction, e.best_other, o.bound) > 0.0;
        o.optimism = signed_gain(e.direction, e.best_other, o.bound) / scale;
    } else {
        o.can_matter = true;
        o.optimism = std::isfinite(current) ? signed_gain(e.direction, current, o.bound) / scale : 0.0;
    }
    // The optimistic curve: from where the trial is to its bound, at its speed, over the horizon
    // (the whole rest of the run when the speed or the run length is unknown).
    const double gain =
        std::isfinite(current) ? std::max(0.0, signed_gain(e.direction, current, o.bound)) : 0.0;
    const double length = run_length(e);
    const double remaining = length - e.last_step;
    double fraction = 1.0;
    if (speed > 0.0 && remaining > 0.0) fraction = std::min(1.0, speed * s.utility_horizon_s / remaining);
    UtilityInputs in;
    in.gain = gain * fraction;
    in.group_scale = scale;
    in.win_probability = o.can_matter ? 1.0 : 0.0;
    in.dominated_weight = s.dominated_weight;
    in.gpus = std::max(gpus, 1.0);
    in.horizon_s = s.utility_horizon_s;
    o.optimistic_utility = std::max(0.0, trust) * utility_per_gpu_second(in);
    return o;
}

bool pause_enabled(std::uint32_t pauses, const EngineSettings& s) {
    return s.pause_probability > 0.0 && pauses < s.pause_max;
}

std::optional<Reason> pause_rule(const StopEvidence& e, const PauseOutlook& o, double utility, double price,
                                 double running_s, const EngineSettings& s) {
    const double length = run_length(e);
    const bool done = e.max_steps > 0.0 && e.last_step >= e.max_steps;
    if (e.leader || done || e.points < s.hopeless_min_points || !e.final_metric.extrapolated ||
        !std::isfinite(e.best_other) || running_s < s.min_run_s || !(utility < price) ||
        e.last_step < s.pause_min_progress * length || !(e.own_win_probability < s.pause_probability)) {
        return std::nullopt;
    }
    Reason r;
    r.code = ReasonCode::pause_unlikely;
    r.a = e.own_win_probability;
    r.b = s.pause_probability;
    r.c = utility;
    r.d = price;
    r.e = o.bound;
    return r;
}

std::optional<Reason> idle_pause_rule(const StopEvidence& e, const PauseOutlook& o, const Reason& unlikely,
                                      const EngineSettings& s) {
    const double utility = unlikely.c, price = unlikely.d;
    if (!(s.pause_idle_utility > 0.0) || unlikely.code != ReasonCode::pause_unlikely ||
        !(e.last_step >= s.hopeless_min_progress * run_length(e)) || !(price > 0.0) ||
        !(utility <= s.pause_idle_utility * price) || !(o.optimistic_utility < price)) {
        return std::nullopt;
    }
    Reason r = unlikely;
    r.code = ReasonCode::pause_idle;
    return r;
}

bool stop_is_final(const StopEvidence& e, const PauseOutlook& o, const EngineSettings& s) {
    // Not before hopeless_min_progress of its run (final_stop_allowed, policy.hpp), even where
    // held forecasts let the rules judge it earlier: a trial paused early on a plateau (a late
    // bloomer's) would otherwise be stopped for good at once; it stays paused (or resumes)
    // instead. Decisive evidence (a flat curve far behind) is final from early_stop_progress on.
    // Nor ever for the sweep's leader (hopeless_rule, policy.hpp).
    if (e.leader) return false;
    if (decisively_hopeless(e, s)) return true;
    if (!final_stop_allowed(e, s)) return false;
    return !o.can_matter && e.win_probability < std::max(s.hopeless_probability, 1e-9);
}

bool waits_for_leaders(const StopEvidence& e, const PauseOutlook& o, const EngineSettings& s) {
    return !o.can_matter && std::isfinite(e.best_other) &&
           e.last_step >= s.hopeless_min_progress * run_length(e);
}

Reason cannot_matter_reason(const StopEvidence& e, const PauseOutlook& o) {
    Reason r;
    r.code = ReasonCode::bound_cannot_matter;
    r.a = o.bound;
    r.b = e.best_other;
    r.c = e.win_probability;
    return r;
}

std::vector<std::size_t> choose_by_key(std::vector<PauseCandidate> c, double budget) {
    std::stable_sort(c.begin(), c.end(),
                     [](const PauseCandidate& a, const PauseCandidate& b) { return a.key > b.key; });
    std::vector<std::size_t> chosen;
    for (const PauseCandidate& x : c) {
        if (static_cast<double>(x.gpus) > budget) continue;
        budget -= x.gpus;
        chosen.push_back(x.job);
    }
    return chosen;
}

}  // namespace explsched
