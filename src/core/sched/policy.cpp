#include "core/sched/policy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/sched/priority.hpp"
#include "core/sched/utility.hpp"

namespace explsched {

Decision hopeless_decision(HopelessAction action, JobState state) {
    switch (action) {
        case HopelessAction::terminate:
            return Decision::terminate;
        case HopelessAction::requeue_hold:
            return Decision::requeue_hold;
        case HopelessAction::none:
            // only marked: it may run on, but gives way to anyone
            return state == JobState::running ? Decision::preemptable : Decision::wait;
    }
    return Decision::terminate;
}

namespace {

struct PriceOutcome {
    Decision decision = Decision::wait;
    Reason reason;
};

PriceOutcome price_rule(JobState state, double utility, double price, double load, double running_s,
                        const EngineSettings& settings) {
    const bool above = utility >= price;
    PriceOutcome out;
    out.reason.a = utility;
    out.reason.b = price;
    out.reason.c = load;
    out.reason.code = above ? ReasonCode::above_price : ReasonCode::below_price;
    if (state == JobState::pending) {
        out.decision = above ? Decision::run : Decision::wait;
        return out;
    }
    if (above) {
        out.decision = Decision::keep;
        return out;
    }
    if (running_s < settings.min_run_s) {
        out.decision = Decision::keep;
        out.reason = Reason{};
        out.reason.code = ReasonCode::in_grace;
        out.reason.a = running_s;
        out.reason.b = settings.min_run_s;
        return out;
    }
    out.decision = Decision::preemptable;
    return out;
}

}  // namespace

void decide_by_price(JobState state, double utility, double price, double load, double running_s,
                     const EngineSettings& settings, Assessment& out) {
    const PriceOutcome o = price_rule(state, utility, price, load, running_s, settings);
    out.decision = o.decision;
    if (o.reason.code == ReasonCode::in_grace) {
        out.reason = o.reason;
        return;
    }
    // the price reasons set a..c and leave the rest of out.reason as it was
    out.reason.code = o.reason.code;
    out.reason.a = o.reason.a;
    out.reason.b = o.reason.b;
    out.reason.c = o.reason.c;
}

std::vector<double> asha_rungs(const std::vector<double>& milestones, double max_steps,
                               const EngineSettings& settings) {
    if (!milestones.empty()) return milestones;
    std::vector<double> rungs;
    const double eta = settings.asha_reduction;
    if (settings.asha_min_step > 0.0) {
        double r = settings.asha_min_step;
        for (std::size_t k = 0; k < settings.asha_rungs; ++k, r *= eta) {
            if (max_steps > 0.0 && r >= max_steps) break;
            rungs.push_back(r);
        }
    } else if (max_steps > 0.0) {
        for (std::size_t k = settings.asha_rungs; k > 0; --k) {
            rungs.push_back(max_steps / std::pow(eta, static_cast<double>(k)));
        }
    }
    return rungs;
}

double metric_at(const std::vector<double>& steps, const std::vector<double>& metrics, double step) {
    const auto it = std::upper_bound(steps.begin(), steps.end(), step);
    if (it == steps.begin()) return std::numeric_limits<double>::quiet_NaN();
    return metrics[static_cast<std::size_t>(it - steps.begin()) - 1];
}

AshaRank asha_rank(double value, const std::vector<double>& values_at_rung, Direction direction, double eta) {
    AshaRank r;
    r.of = values_at_rung.size();
    std::size_t better = 0;
    for (double v : values_at_rung) {
        if (direction == Direction::maximize ? v > value : v < value) ++better;
    }
    r.rank = better + 1;
    const auto keep = static_cast<std::size_t>(std::ceil(static_cast<double>(r.of) / eta));
    r.promoted = r.rank <= std::max<std::size_t>(keep, 1);
    return r;
}

AshaRank asha_rank_sorted(double value, const std::vector<double>& sorted_values, Direction direction,
                          double eta) {
    AshaRank r;
    r.of = sorted_values.size();
    const std::size_t better =
        direction == Direction::maximize
            ? static_cast<std::size_t>(sorted_values.end() -
                                       std::upper_bound(sorted_values.begin(), sorted_values.end(), value))
            : static_cast<std::size_t>(std::lower_bound(sorted_values.begin(), sorted_values.end(), value) -
                                       sorted_values.begin());
    r.rank = better + 1;
    const auto keep = static_cast<std::size_t>(std::ceil(static_cast<double>(r.of) / eta));
    r.promoted = r.rank <= std::max<std::size_t>(keep, 1);
    return r;
}

// --- stopping rules ------------------------------------------------------------------------------

namespace {

bool done(const StopEvidence& e) { return e.max_steps > 0.0 && e.last_step >= e.max_steps; }

Reason make_reason(ReasonCode code, double a, double b, double c, double d, double e = Reason::kNaN) {
    Reason r;
    r.code = code;
    r.a = a;
    r.b = b;
    r.c = c;
    r.d = d;
    r.e = e;
    return r;
}

}  // namespace

double run_length(const StopEvidence& e) { return e.max_steps > 0.0 ? e.max_steps : e.sweep_furthest; }

bool audits_held(std::vector<double> ratios, std::size_t min_checks, double level) {
    if (ratios.empty() || ratios.size() < min_checks) return false;
    for (double& r : ratios) {
        if (std::isnan(r)) r = std::numeric_limits<double>::infinity();  // counts as a miss
    }
    const double q = (1.0 + level) / 2.0;
    const auto k =
        std::min(ratios.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ratios.size())));
    std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(k), ratios.end());
    return ratios[k] <= 1.0;
}

double judged_from(const StopEvidence& e, const EngineSettings& s) {
    return e.forecasts_held ? std::min(s.audited_min_progress, s.hopeless_min_progress)
                            : s.hopeless_min_progress;
}

bool before_first_drop(const StopEvidence& e) {
    return e.first_drop > 0.0 && !(e.last_step >= e.first_drop + kDropSettle * run_length(e));
}

bool far_enough(const StopEvidence& e, const EngineSettings& s) {
    return !before_first_drop(e) && e.last_step >= judged_from(e, s) * run_length(e);
}

bool final_stop_allowed(const StopEvidence& e, const EngineSettings& s) {
    if (before_first_drop(e)) return false;
    return e.last_step >= s.hopeless_min_progress * run_length(e) || decisively_hopeless(e, s);
}

bool decisively_hopeless(const StopEvidence& e, const EngineSettings& s) {
    if (before_first_drop(e)) return false;
    const double length = run_length(e);
    const double threshold = std::min(s.early_stop_probability, s.hopeless_probability);
    return !e.leader && threshold > 0.0 && e.points >= s.hopeless_min_points && e.final_metric.extrapolated &&
           std::isfinite(e.best_other) && length > 0.0 && e.last_step >= s.early_stop_progress * length &&
           e.win_probability < threshold;
}

double costly_chance_threshold(const StopEvidence& e, const EngineSettings& s) {
    if (!(s.chance_worth_gpu_hours > 0.0) || !(e.remaining_gpu_hours >= 0.0) ||
        !std::isfinite(e.remaining_gpu_hours))
        return 0.0;
    return std::min(s.pause_probability, e.remaining_gpu_hours / s.chance_worth_gpu_hours);
}

OwnBest stale_best_step(const std::vector<double>& steps, const std::vector<double>& metrics,
                        Direction direction, double margin) {
    const double sign = direction == Direction::maximize ? 1.0 : -1.0;
    OwnBest out;
    constexpr double kNone = -std::numeric_limits<double>::infinity();
    double best = kNone;
    const std::size_t n = std::min(steps.size(), metrics.size());
    for (std::size_t i = 0; i < n; ++i) {
        const double m = sign * metrics[i];
        if (!std::isfinite(m)) continue;
        if (best == kNone || m > best + margin) out.step = steps[i];
        best = std::max(best, m);
    }
    if (best > kNone) out.best = sign * best;
    return out;
}

std::optional<Reason> stale_best_rule(const StopEvidence& e, const EngineSettings& s) {
    const double length = run_length(e);
    if (!(s.stale_best_fraction > 0.0) || e.leader || done(e) || !std::isfinite(e.own_best) ||
        !std::isfinite(e.best_other) || !(length > 0.0) || !e.final_metric.extrapolated)
        return std::nullopt;
    const double sign = e.direction == Direction::maximize ? 1.0 : -1.0;
    const double margin = kStaleBestMargin * e.sweep_scale;
    const double stale = (e.last_step - e.own_best_step) / length;
    if (!(sign * (e.best_other - e.own_best) > margin) || !(stale >= s.stale_best_fraction) ||
        sign * e.final_metric.value > sign * e.own_best)
        return std::nullopt;
    return make_reason(ReasonCode::stale_best, e.own_best, e.own_best_step, stale, e.best_other,
                       e.final_metric.value);
}

bool behind_track_hopeless(const StopEvidence& e, const EngineSettings& s) {
    return !e.leader && e.behind_chance < s.hopeless_probability &&
           e.last_step >= s.hopeless_min_progress * run_length(e);
}

Reason behind_track_reason(const StopEvidence& e) {
    const Prediction& f = e.final_metric;
    return make_reason(ReasonCode::behind_track, -e.behind_lead, e.behind_chance, e.best_other, f.value,
                       e.direction == Direction::maximize ? f.upper : f.lower);
}

std::optional<Reason> hopeless_rule(const StopEvidence& e, const EngineSettings& s) {
    // A trial holding its sweep's best metric is not hopeless, whatever its forecast: a forecast
    // below the runner-up's best is behind the curve itself (a curve's late jump, two points in),
    // and stopping it would stop the sweep's best so far. Price and preemption still apply.
    if (e.leader) return std::nullopt;
    const Prediction& f = e.final_metric;
    if (!far_enough(e, s)) {
        if (!decisively_hopeless(e, s)) return std::nullopt;
        return make_reason(ReasonCode::hopeless_early, f.value, f.lower, f.upper, e.best_other,
                           e.win_probability);
    }
    if (e.points < s.hopeless_min_points || !e.final_metric.extrapolated || !std::isfinite(e.best_other)) {
        return std::nullopt;
    }
    if (e.win_probability < s.hopeless_probability)
        return make_reason(ReasonCode::hopeless, f.value, f.lower, f.upper, e.best_other, e.win_probability);
    if (behind_track_hopeless(e, s)) return behind_track_reason(e);
    if (auto stale = stale_best_rule(e, s)) return stale;
    if (!e.leader && !done(e) && e.win_probability < costly_chance_threshold(e, s)) {
        return make_reason(ReasonCode::costly_chance, e.win_probability, e.remaining_gpu_hours,
                           s.chance_worth_gpu_hours, e.best_other, f.value);
    }
    return std::nullopt;
}

std::optional<Reason> expected_gain_rule(const StopEvidence& e, const EngineSettings& s) {
    if (!(s.min_expected_gain > 0.0) || e.leader || done(e) || !far_enough(e, s) ||
        e.final_metric.track_lead > 0.0 || !e.final_metric.extrapolated || e.points < s.hopeless_min_points ||
        !std::isfinite(e.best_other)) {
        return std::nullopt;
    }
    const double gain =
        expected_improvement_heavy(e.final_metric, e.direction, e.best_other, s.interval_level) /
        e.sweep_scale;
    if (!(gain < s.min_expected_gain)) return std::nullopt;
    // a near tie only: far behind is the hopeless and pause rules' (near_tie_range)
    if (s.near_tie_range > 0.0 &&
        !(std::fabs(e.final_metric.value - e.best_other) <= s.near_tie_range * e.sweep_scale))
        return std::nullopt;
    return make_reason(ReasonCode::negligible_gain, gain, s.min_expected_gain, e.final_metric.value,
                       e.best_other);
}

bool milestone_rule_applies(const StopEvidence& e, const EngineSettings& s) {
    return s.milestone_stop_probability > 0.0 && !done(e) && far_enough(e, s) &&
           std::isfinite(e.best_other) && e.win_probability < s.milestone_stop_probability;
}

std::optional<Reason> milestone_rule(const StopEvidence& e, const MilestoneStanding& standing,
                                     const EngineSettings& s) {
    if (!milestone_rule_applies(e, s) || std::isnan(standing.reached) || standing.rank.promoted) {
        return std::nullopt;
    }
    return make_reason(ReasonCode::behind_at_milestone, standing.reached,
                       static_cast<double>(standing.rank.rank), static_cast<double>(standing.rank.of),
                       s.asha_reduction, e.win_probability);
}

// --- the decision ladder -------------------------------------------------------------------------

LadderRung ladder_rung(const LadderInputs& in) {
    if (!in.exploratory) return LadderRung::nonexploratory;
    if (in.invalid_report) return LadderRung::invalid_report;
    if (in.diverged) return LadderRung::diverged;
    if (in.state == TrialState::hopeless) return LadderRung::hopeless;
    if (in.max_steps > 0.0 && in.points > 0 && in.last_step >= in.max_steps) return LadderRung::finished;
    if (in.state == TrialState::promising && in.speed > 0.0) return LadderRung::price;
    return LadderRung::milestones;
}

namespace {

// Runs if pending, keeps its GPUs if running.
Decision run_or_keep(JobState state) { return state == JobState::pending ? Decision::run : Decision::keep; }

TrialVerdict stopped(const LadderInputs& in, Reason reason) {
    TrialVerdict v;
    v.state = TrialState::hopeless;
    v.decision = hopeless_decision(in.hopeless_action, in.job_state);
    v.reason = reason;
    v.value = 0.0;
    return v;
}

// A trial behind its sweep at a milestone that the milestone fallback does not stop: it waits
// (pending) or gives way (running), after its grace period.
void behind_unstopped(const LadderInputs& in, const EngineSettings& s, TrialVerdict& v) {
    v.value = 0.5 * s.unknown_value;
    if (in.job_state == JobState::pending) {
        v.decision = Decision::wait;
    } else if (in.running_s < s.min_run_s) {
        v.decision = Decision::keep;
        v.reason = Reason{};
        v.reason.code = ReasonCode::in_grace;
        v.reason.a = in.running_s;
        v.reason.b = s.min_run_s;
    } else {
        v.decision = Decision::preemptable;
    }
}

// No usable prediction (too few points, or no speed yet): successive halving on the sweep's
// milestones decides, so a sweep still prunes before its curves are long.
TrialVerdict by_milestones(const LadderInputs& in, const EngineSettings& s) {
    TrialVerdict v;
    v.state = TrialState::unknown;
    v.value = s.unknown_value;
    if (std::isnan(in.standing.reached)) {
        v.reason.code = ReasonCode::too_few_points;
        v.reason.a = static_cast<double>(in.points);
        v.reason.b = static_cast<double>(s.min_points_to_fit);
        v.decision = run_or_keep(in.job_state);
        // its turn is over: a waiting trial without a forecast may take the GPUs (preempt_verdict)
        if (v.decision == Decision::keep && s.unpredicted_turn_s > 0.0 &&
            in.running_s >= std::max(s.unpredicted_turn_s, s.min_run_s)) {
            v.decision = Decision::preemptable;
            v.reason.c = std::max(s.unpredicted_turn_s, s.min_run_s);
        }
        return v;
    }
    const AshaRank& r = in.standing.rank;
    v.reason =
        make_reason(r.promoted ? ReasonCode::asha_promoted : ReasonCode::asha_behind, in.standing.reached,
                    static_cast<double>(r.rank), static_cast<double>(r.of), s.asha_reduction);
    if (r.promoted) {
        v.decision = run_or_keep(in.job_state);
        v.value = 0.5 * (1.0 + s.unknown_value);
    } else if (s.milestone_stop_unpredicted && !(in.max_steps > 0.0 && in.last_step >= in.max_steps)) {
        // Too short to predict and behind its sweep at a milestone: stopped, as ASHA stops it
        // (the ranking at equal steps is the only evidence yet).
        Reason reason = v.reason;
        reason.code = ReasonCode::behind_at_milestone;
        v = stopped(in, reason);
    } else {
        behind_unstopped(in, s, v);
    }
    return v;
}

}  // namespace

TrialVerdict decide_trial(const LadderInputs& in, const EngineSettings& s) {
    TrialVerdict v;
    v.state = in.state;
    v.value = s.unknown_value;
    switch (ladder_rung(in)) {
        case LadderRung::nonexploratory:
            v.reason.code = ReasonCode::nonexploratory;
            v.decision = run_or_keep(in.job_state);
            v.value = s.nonexploratory_value;
            return v;
        case LadderRung::invalid_report:
            v.reason.code = ReasonCode::invalid_report;
            v.decision = run_or_keep(in.job_state);
            return v;
        case LadderRung::diverged: {
            Reason reason;
            reason.code = ReasonCode::diverged;
            reason.a = in.diverged_at;
            return stopped(in, reason);
        }
        case LadderRung::hopeless:
            return stopped(in, in.reason);
        case LadderRung::finished:
            v.reason.code = ReasonCode::finished;
            v.reason.a = in.max_steps;
            v.decision = run_or_keep(in.job_state);
            return v;
        case LadderRung::price: {
            const PriceOutcome o =
                price_rule(in.job_state, in.utility, in.price, in.load_after, in.running_s, s);
            v.decision = o.decision;
            v.reason = o.reason;
            v.value = value_factor(in.utility, in.price, in.price_ratio);
            if (s.protect_leader && v.decision == Decision::preemptable && in.holds_sweep_best &&
                std::isfinite(in.sweep_next)) {
                v.reason.code = ReasonCode::leads_sweep;
                v.reason.d = in.sweep_best;
                v.reason.e = in.sweep_next;
            }
            return v;
        }
        case LadderRung::milestones:
            return by_milestones(in, s);
    }
    return v;
}

namespace {

std::string num(double value) {
    char buffer[64];
    const int n = std::snprintf(buffer, sizeof buffer, "%.3g", value);
    return n > 0 ? std::string(buffer) : std::string("?");
}

PreemptVerdict verdict(bool allowed, std::string reason) {
    return PreemptVerdict{allowed, std::move(reason)};
}

}  // namespace

PreemptVerdict preempt_verdict(const Assessment& preemptor, const Assessment& preemptee,
                               const EngineSettings& settings, double preemptee_running_s) {
    const std::string who = "job " + to_string(preemptee.key);
    if (preemptor.key == preemptee.key) return verdict(false, "a job cannot preempt itself");
    if (!settings.preempt_cross_user && preemptor.owner != preemptee.owner) {
        return verdict(false, who + " belongs to another user and preempt_cross_user is off");
    }
    // A hopeless trial (one not stopped for good yet: before hopeless_min_progress, its pause
    // spent, or hopeless action none) only takes GPUs nobody else wants; two of them preempting
    // each other would restart both for ever.
    if (preemptor.exploratory && preemptor.state == TrialState::hopeless) {
        return verdict(false, "the preemptor is hopeless: it runs only on GPUs nobody else wants");
    }
    // A trial behind its sweep at a milestone, too early to predict, waits when pending and gives
    // way when running (behind_unstopped): running, anything with a utility preempts it, so were it
    // to preempt in turn (it outranks every trial below the price by the rank margin) two of them
    // would restart each other and their victims for ever (philly seed 0: three trials preempted
    // 177-282 times each).
    if (preemptor.exploratory && preemptor.reason.code == ReasonCode::asha_behind) {
        return verdict(false,
                       "the preemptor is behind its sweep at a milestone, too early to predict: it "
                       "waits for GPUs nobody else wants");
    }
    if (!preemptee.exploratory) {
        if (!settings.preempt_nonexploratory || !preemptor.exploratory) {
            return verdict(false, who + " is not exploratory: never preempted by the utility rule");
        }
        if (preemptor.priority > preemptee.priority) {
            return verdict(true, who +
                                     " is non-exploratory and preempt_nonexploratory is set; "
                                     "preemptor priority " +
                                     std::to_string(preemptor.priority) + " > " +
                                     std::to_string(preemptee.priority));
        }
        return verdict(false, who + " outranks the preemptor");
    }
    // A trial without a forecast whose turn is over (unpredicted_turn): only a waiting trial
    // without one takes it, so trials the engine cannot judge yet share the GPUs in turns; a
    // forecast says nothing about one that has none.
    if (preemptee.exploratory && preemptee.reason.code == ReasonCode::too_few_points &&
        preemptee.decision == Decision::preemptable) {
        if (!(preemptor.exploratory && preemptor.reason.code == ReasonCode::too_few_points)) {
            return verdict(false, who + " has no forecast yet: only a trial without one takes its turn");
        }
        const double turn = std::max(settings.unpredicted_turn_s, settings.min_run_s);
        const auto secs = [](double x) {
            return std::isfinite(x) ? std::to_string(static_cast<long long>(std::max(0.0, x)))
                                    : std::string("?");
        };
        if (!(settings.unpredicted_turn_s > 0.0) || preemptee_running_s < turn) {
            return verdict(false, who + " (re)started " + secs(preemptee_running_s) +
                                      " s ago, within its turn of " + secs(turn) + " s (unpredicted_turn)");
        }
        return verdict(true, who + " has had its turn of " + secs(turn) +
                                 " s without a forecast (unpredicted_turn); the preemptor has none either");
    }
    switch (preemptee.decision) {
        case Decision::terminate:
        case Decision::requeue_hold:
            return verdict(true, who + " is hopeless");
        case Decision::pause:
            return verdict(true, who + " is to be paused (unlikely to matter, below the GPU price)");
        case Decision::preemptable:
            break;
        default:
            return verdict(false, who + " is not preemptable (" + explain(preemptee) + ")");
    }
    // The grace after a (re)start holds for a hopeless trial that is not stopped (judged before
    // hopeless_min_progress with its pause spent, or hopeless action none) too: restarted on
    // spare GPUs and preempted at once, it would pay its restart for nothing.
    if (preemptee_running_s < settings.min_run_s) {  // false for NaN (unknown)
        return verdict(false, who + " (re)started " + num(std::max(0.0, preemptee_running_s)) +
                                  " s ago, within min_run " + num(settings.min_run_s) + " s");
    }
    if (preemptee.state == TrialState::hopeless) return verdict(true, who + " is hopeless");
    // The sweep's leader (protect_leader) gives way to another sweep's trial only if that one is
    // worth its GPUs, not to one below the price itself nor to one without a forecast: near its
    // end its utility is near zero, so any such trial would outbid it, and its sweep would wait
    // for its best model. Of its own sweep, a trial without a forecast takes its GPUs as from any
    // trial (by rank: a sweep's untried trials are its exploration, and a heterogeneous ImageNet
    // sweep's eventual best, shielded from them, waited and started on K80s), but one with a
    // forecast only if it is worth its GPUs too: by its utility alone a sibling with a chance near
    // zero took a leader's GPUs whose utility was zero on its plateau (philly seed 1: four times,
    // 110 h of waiting for its sweep's best). A plain job takes them by rank.
    // A preemptor "with a forecast" is one with a utility to compare, as the utility rule below
    // reads it; one without is judged by rank there.
    const bool same_sweep = !preemptor.group.empty() && preemptor.group == preemptee.group;
    const bool valued = preemptor.utility > 0.0;
    const bool worth_its_gpus = valued && preemptor.utility >= preemptor.price;
    if (preemptee.reason.code == ReasonCode::leads_sweep && preemptor.exploratory && !worth_its_gpus &&
        (!same_sweep || valued)) {
        const std::string held = who + " holds its group's best metric (protect_leader) and the preemptor";
        if (same_sweep) {
            return verdict(false, held + ", a trial of its own sweep with a forecast, has utility " +
                                      num(preemptor.utility) + " below its own price " +
                                      num(preemptor.price));
        }
        return verdict(false, held + "'s utility " + num(preemptor.utility) + " is below its own price " +
                                  num(preemptor.price));
    }
    if (preemptor.exploratory && preemptor.utility > 0.0) {
        const double needed = (1.0 + settings.preempt_margin) * preemptee.utility;
        if (preemptor.utility > needed) {
            return verdict(true, "utility " + num(preemptor.utility) + " > (1 + margin " +
                                     num(settings.preempt_margin) + ") x " + who + "'s " +
                                     num(preemptee.utility));
        }
        return verdict(false, "utility " + num(preemptor.utility) + " does not exceed (1 + margin " +
                                  num(settings.preempt_margin) + ") x " + who + "'s " +
                                  num(preemptee.utility));
    }
    // No utility to compare (a non-exploratory job, or a trial without a prediction yet): the
    // preemptee is already below the price, so rank decides. A trial without a prediction needs
    // preempt_rank_margin more than a preemptee that has one, which is near or just below the
    // price under overload (no rank margin: each new trial preempted the sweeps' leaders).
    if (preemptor.exploratory && preemptee.utility > 0.0) {
        const double needed = (1.0 + settings.preempt_rank_margin) * static_cast<double>(preemptee.priority);
        if (static_cast<double>(preemptor.priority) > needed) {
            return verdict(true, who +
                                     " is below the GPU price and the preemptor, without a forecast yet, "
                                     "outranks it by more than rank margin " +
                                     num(settings.preempt_rank_margin) + " (" +
                                     std::to_string(preemptor.priority) + " > " +
                                     std::to_string(static_cast<std::uint64_t>(needed)) + ")");
        }
        return verdict(false, "priority " + std::to_string(preemptor.priority) +
                                  " of a trial without a forecast does not exceed (1 + rank margin " +
                                  num(settings.preempt_rank_margin) + ") x " + who + "'s " +
                                  std::to_string(preemptee.priority));
    }
    if (preemptor.priority > preemptee.priority) {
        return verdict(true, who + " is below the GPU price and the preemptor outranks it (" +
                                 std::to_string(preemptor.priority) + " > " +
                                 std::to_string(preemptee.priority) + ")");
    }
    return verdict(false, who + " outranks the preemptor");
}

}  // namespace explsched
