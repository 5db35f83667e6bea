#include "core/sched/policy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

void decide_by_price(JobState state, double utility, double price, double load, double running_s,
                     const EngineSettings& settings, Assessment& out) {
    const bool above = utility >= price;
    out.reason.a = utility;
    out.reason.b = price;
    out.reason.c = load;
    out.reason.code = above ? ReasonCode::above_price : ReasonCode::below_price;
    if (state == JobState::pending) {
        out.decision = above ? Decision::run : Decision::wait;
        return;
    }
    if (above) {
        out.decision = Decision::keep;
        return;
    }
    if (running_s < settings.min_run_s) {
        out.decision = Decision::keep;
        out.reason = Reason{};
        out.reason.code = ReasonCode::in_grace;
        out.reason.a = running_s;
        out.reason.b = settings.min_run_s;
        return;
    }
    out.decision = Decision::preemptable;
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
                               const EngineSettings& settings) {
    const std::string who = "job " + to_string(preemptee.key);
    if (preemptor.key == preemptee.key) return verdict(false, "a job cannot preempt itself");
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
    switch (preemptee.decision) {
        case Decision::terminate:
        case Decision::requeue_hold:
            return verdict(true, who + " is hopeless");
        case Decision::preemptable:
            break;
        default:
            return verdict(false, who + " is not preemptable (" + explain(preemptee) + ")");
    }
    if (preemptee.state == TrialState::hopeless) return verdict(true, who + " is hopeless");
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
    // preemptee is already below the price, so rank decides.
    if (preemptor.priority > preemptee.priority) {
        return verdict(true, who + " is below the GPU price and the preemptor outranks it (" +
                                 std::to_string(preemptor.priority) + " > " +
                                 std::to_string(preemptee.priority) + ")");
    }
    return verdict(false, who + " outranks the preemptor");
}

}  // namespace explsched
