#include "core/sched/decision.hpp"

#include <cmath>
#include <cstdio>

namespace explsched {

const char* to_string(TrialState state) {
    switch (state) {
        case TrialState::unknown:
            return "unknown";
        case TrialState::promising:
            return "promising";
        case TrialState::hopeless:
            return "hopeless";
    }
    return "?";
}

const char* to_string(Decision decision) {
    switch (decision) {
        case Decision::run:
            return "run";
        case Decision::wait:
            return "wait";
        case Decision::keep:
            return "keep";
        case Decision::preemptable:
            return "preemptable";
        case Decision::terminate:
            return "terminate";
        case Decision::requeue_hold:
            return "requeue-hold";
        case Decision::pause:
            return "pause";
    }
    return "?";
}

const char* to_string(ReasonCode code) {
    switch (code) {
        case ReasonCode::nonexploratory:
            return "nonexploratory";
        case ReasonCode::invalid_report:
            return "invalid_report";
        case ReasonCode::diverged:
            return "diverged";
        case ReasonCode::hopeless:
            return "hopeless";
        case ReasonCode::hopeless_early:
            return "hopeless_early";
        case ReasonCode::finished:
            return "finished";
        case ReasonCode::too_few_points:
            return "too_few_points";
        case ReasonCode::asha_promoted:
            return "asha_promoted";
        case ReasonCode::asha_behind:
            return "asha_behind";
        case ReasonCode::above_price:
            return "above_price";
        case ReasonCode::below_price:
            return "below_price";
        case ReasonCode::in_grace:
            return "in_grace";
        case ReasonCode::behind_at_milestone:
            return "behind_at_milestone";
        case ReasonCode::negligible_gain:
            return "negligible_gain";
        case ReasonCode::costly_chance:
            return "costly_chance";
        case ReasonCode::pause_unlikely:
            return "pause_unlikely";
        case ReasonCode::pause_idle:
            return "pause_idle";
        case ReasonCode::paused_bound_behind:
            return "paused_bound_behind";
        case ReasonCode::paused_below_price:
            return "paused_below_price";
        case ReasonCode::paused_no_room:
            return "paused_no_room";
        case ReasonCode::resumed:
            return "resumed";
        case ReasonCode::resumed_idle:
            return "resumed_idle";
        case ReasonCode::explore_first:
            return "explore_first";
        case ReasonCode::resumed_grace:
            return "resumed_grace";
        case ReasonCode::bound_cannot_matter:
            return "bound_cannot_matter";
        case ReasonCode::leads_sweep:
            return "leads_sweep";
        case ReasonCode::resumed_pending:
            return "resumed_pending";
        case ReasonCode::pause_slot:
            return "pause_slot";
        case ReasonCode::paused_no_slot:
            return "paused_no_slot";
        case ReasonCode::stale_best:
            return "stale_best";
        case ReasonCode::behind_track:
            return "behind_track";
    }
    return "?";
}

bool reason_code_from(std::string_view text, ReasonCode& out) {
    // the codes are numbered from 0 with no gaps, and to_string names each (-Wswitch): the first
    // number it does not name is past the last
    for (int i = 0;; ++i) {
        const auto code = static_cast<ReasonCode>(i);
        const std::string_view name = to_string(code);
        if (name == "?") return false;
        if (name == text) {
            out = code;
            return true;
        }
    }
}

namespace {

// %g keeps the figures short and exact enough for people; snprintf never throws.
std::string num(double value, int digits = 3) {
    char buffer[64];
    const int n = std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    return n > 0 ? std::string(buffer) : std::string("?");
}

}  // namespace

std::string describe(Decision decision, const Reason& r) {
    std::string text = to_string(decision);
    text += ": ";
    switch (r.code) {
        case ReasonCode::nonexploratory:
            text += "not an exploratory trial; ranked by age, partition and nice";
            break;
        case ReasonCode::invalid_report:
            text += "reported curve rejected; ranked as a trial without a prediction";
            break;
        case ReasonCode::diverged:
            text += "metric became non-finite at step " + num(r.a, 10) + " (diverged)";
            break;
        case ReasonCode::hopeless:
            text += "predicted final " + num(r.a, 4) + " in [" + num(r.b, 4) + ", " + num(r.c, 4) +
                    "] cannot beat the group's best " + num(r.d, 4) + " (chance " + num(r.e, 2) + ")";
            break;
        case ReasonCode::stale_best:
            text += "its best " + num(r.a, 4) + " has not improved by 1% of its group's range since step " +
                    num(r.b, 10) + " (" + num(100.0 * r.c, 2) +
                    "% of its run ago), is behind the group's best " + num(r.d, 4) +
                    ", and its predicted final " + num(r.e, 4) +
                    " does not come back past it (stale_best_fraction)";
            break;
        case ReasonCode::behind_track:
            text += "it runs " + num(r.a, 4) + " behind the path of its group's best " + num(r.c, 4) +
                    " at the same fractions of their runs and does not close the gap (chance " + num(r.b, 2) +
                    "; predicted final " + num(r.d, 4) + ", optimistic " + num(r.e, 4) +
                    ", behind_track_margin)";
            break;
        case ReasonCode::hopeless_early:
            text += "predicted final " + num(r.a, 4) + " in [" + num(r.b, 4) + ", " + num(r.c, 4) +
                    "] cannot beat the group's best " + num(r.d, 4) + " (chance " + num(r.e, 2) +
                    ", below early_stop_probability: stopped before hopeless_min_progress)";
            break;
        case ReasonCode::finished:
            text += "reached its last step " + num(r.a, 10);
            break;
        case ReasonCode::too_few_points:
            text += num(r.a) + " points, " + num(r.b) + " needed to predict; no milestone reached yet";
            if (std::isfinite(r.c))
                text += "; it has had its turn of " + num(r.c, 10) +
                        " s (unpredicted_turn): a waiting trial without a forecast may take its GPUs";
            break;
        case ReasonCode::asha_promoted:
            text += "milestone step " + num(r.a, 10) + ": rank " + num(r.b, 10) + " of " + num(r.c, 10) +
                    " in its group, within the top 1/" + num(r.d);
            break;
        case ReasonCode::asha_behind:
            text += "milestone step " + num(r.a, 10) + ": rank " + num(r.b, 10) + " of " + num(r.c, 10) +
                    " in its group, outside the top 1/" + num(r.d);
            break;
        case ReasonCode::above_price:
            text += "utility " + num(r.a) + "/GPU-s is at least the GPU price " + num(r.b) + " at load " +
                    num(r.c, 2);
            break;
        case ReasonCode::below_price:
            text += "utility " + num(r.a) + "/GPU-s is below the GPU price " + num(r.b) + " at load " +
                    num(r.c, 2);
            break;
        case ReasonCode::in_grace:
            text += "running " + num(r.a, 6) + " s, not preemptable before " + num(r.b, 6) + " s";
            break;
        case ReasonCode::behind_at_milestone:
            text += "milestone step " + num(r.a, 10) + ": rank " + num(r.b, 10) + " of " + num(r.c, 10) +
                    " in its group, outside the top 1/" + num(r.d);
            text += std::isnan(r.e) ? std::string(", too early to predict")
                                    : ", and a chance of " + num(r.e, 2) + " to beat the group's best";
            break;
        case ReasonCode::negligible_gain:
            text += "predicted final " + num(r.c, 4) + " is expected to improve the group's best " +
                    num(r.d, 4) + " by " +
                    (r.a < 1e-4 ? std::string("almost nothing") : num(r.a, 2) + " of its range") +
                    ", less than " + num(r.b, 2);
            break;
        case ReasonCode::costly_chance:
            text += "predicted final " + num(r.e, 4) + " has a chance of " + num(r.a, 2) +
                    " to beat the group's best " + num(r.d, 4) + ", worth " + num(r.a * r.c, 3) +
                    " GPU-hours at chance_worth_gpu_hours=" + num(r.c, 6) + ", less than the " + num(r.b, 3) +
                    " its run still needs";
            break;
        case ReasonCode::explore_first:
            text += "its sweep's untried trials wait for GPUs: paused with its checkpoint at " + num(r.b, 2) +
                    " of its run (explore_first_progress " + num(r.c, 2) + ") so they are tried first";
            break;
        case ReasonCode::pause_unlikely:
            text += "chance " + num(r.a, 2) + " to beat the group's best is below " + num(r.b, 2) +
                    " and its utility " + num(r.c) + "/GPU-s below the GPU price " + num(r.d) +
                    ": paused with its checkpoint (optimistic bound " + num(r.e, 4) + ")";
            break;
        case ReasonCode::pause_idle:
            text +=
                "chance " + num(r.a, 2) + " to beat the group's best is below " + num(r.b, 2) +
                ", its utility " + num(r.c) + "/GPU-s is next to nothing at the GPU price " + num(r.d) +
                " and even its optimistic bound " + num(r.e, 4) +
                " is not worth the price: paused with its checkpoint although no trial waits for its GPUs";
            break;
        case ReasonCode::paused_below_price:
            text += "paused; optimistic utility " + num(r.a) + "/GPU-s is below the GPU price " + num(r.b) +
                    " at load " + num(r.c, 2) + " (optimistic bound " + num(r.d, 4) + ")";
            break;
        case ReasonCode::paused_bound_behind:
            text += "paused; even its optimistic bound " + num(r.a, 4) + " is behind the group's best " +
                    num(r.b, 4) + " (chance " + num(r.c, 2) +
                    "): not resumed while its sweep's other trials run, stopped once the chance is under "
                    "hopeless_probability";
            break;
        case ReasonCode::paused_no_room:
            text += "paused; optimistic utility " + num(r.a) + "/GPU-s is at least the GPU price " +
                    num(r.b) + " but " + num(r.c, 6) + " GPUs are free for " + num(r.d, 6) + " needed";
            break;
        case ReasonCode::resumed:
            text += "resumed from pause: optimistic utility " + num(r.a) +
                    "/GPU-s is at least the GPU price " + num(r.b) + " at load " + num(r.c, 2) +
                    " (optimistic bound " + num(r.d, 4) + ", group's best " + num(r.e, 4) + ")";
            break;
        case ReasonCode::resumed_idle:
            text +=
                "resumed from pause on GPUs nobody else wants (its sweep has no other trial left to "
                "run): optimistic utility " +
                num(r.a) + "/GPU-s is below the GPU price " + num(r.b) + " at load " + num(r.c, 2) +
                " (optimistic bound " + num(r.d, 4) + ", group's best " + num(r.e, 4) + ")";
            break;
        case ReasonCode::resumed_grace:
            text += "resumed from pause " + num(r.a, 6) +
                    " s ago: no verdict on its forecast before min_run " + num(r.b, 6) +
                    " s (its chance to beat the group's best " + num(r.d, 4) + " is " + num(r.c, 2) + ")";
            break;
        case ReasonCode::resumed_pending:
            text +=
                "resumed from pause, not restarted yet: no verdict on its forecast before it ran min_run " +
                num(r.b, 6) + " s (its chance to beat the group's best " + num(r.d, 4) + " is " +
                num(r.c, 2) + ")";
            break;
        case ReasonCode::pause_slot:
            text += "chance " + num(r.a, 2) + " to beat the group's best is below " + num(r.b, 2) + " and " +
                    num(r.c, 6) +
                    " pending task(s) of its job array wait for the slot it holds (the array's " +
                    "task limit): paused with its checkpoint (optimistic bound " + num(r.e, 4) + ")";
            break;
        case ReasonCode::paused_no_slot:
            text += "paused; its job array runs at its task limit (" + num(r.c, 6) +
                    " task(s) waiting for a slot): it is resumed once a slot frees (optimistic utility " +
                    num(r.a) + "/GPU-s, GPU price " + num(r.b) + ")";
            break;
        case ReasonCode::bound_cannot_matter:
            text += "even the optimistic bound " + num(r.a, 4) + " cannot beat the group's best " +
                    num(r.b, 4) + " (chance " + num(r.c, 2) + ")";
            break;
        case ReasonCode::leads_sweep:
            text += "utility " + num(r.a) + "/GPU-s is below the GPU price " + num(r.b) + " at load " +
                    num(r.c, 2) + ", but it holds its group's best metric " + num(r.d, 4) + " (next " +
                    num(r.e, 4) +
                    ", protect_leader): another sweep's trial takes its GPUs only if its utility is at "
                    "least its own price";
            break;
    }
    const bool judged = r.code == ReasonCode::hopeless || r.code == ReasonCode::costly_chance ||
                        r.code == ReasonCode::stale_best || r.code == ReasonCode::behind_track ||
                        r.code == ReasonCode::negligible_gain || r.code == ReasonCode::behind_at_milestone;
    if (judged && std::isfinite(r.held_at)) {
        text += "; judged at " + num(100.0 * r.held_at, 2) +
                "% of its run as its sweep's checked forecasts have held (audited_min_progress): not final "
                "before hopeless_min_progress";
    }
    return text;
}

}  // namespace explsched
