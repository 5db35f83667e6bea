// explsched show JOBID | --curve FILE | --sim RESULT.json JOBID  [--json]
// A trial as the scheduler sees it: its curve, the predicted final metric with its interval, its
// utility against the GPU price, its state and the decision with the reason, and (from a
// simulator result) what happened to it.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/trial_source.hpp"

namespace explsched::cli {

namespace {

nlohmann::ordered_json num(double v) {
    return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

void show_usage(FILE* out) {
    std::fprintf(out, "usage: explsched show JOBID | --curve FILE | --sim RESULT.json JOBID [--json]\n%s",
                 source_options_help());
}

nlohmann::ordered_json to_json(const TrialInfo& t) {
    nlohmann::ordered_json j;
    j["job"] = t.name;
    j["source"] = t.source;
    j["group"] = t.group;
    j["state"] = t.state_text;
    j["direction"] = to_string(t.direction);
    j["max_steps"] = num(t.max_steps);
    j["gpus"] = t.gpus;
    nlohmann::ordered_json pts = nlohmann::ordered_json::array();
    for (const CurvePoint& p : t.points) pts.push_back({p.step, num(p.metric)});
    j["points"] = pts;
    if (t.assessment) {
        const AssessmentView& a = *t.assessment;
        j["priority"] = a.priority;
        j["utility"] = num(a.utility);
        j["price"] = num(a.price);
        j["load"] = num(t.load);
        j["trial_state"] = a.state;
        j["decision"] = a.decision;
        j["reason"] = a.reason;
        j["prediction"] = {{"value", num(a.prediction.value)},
                           {"lower", num(a.prediction.lower)},
                           {"upper", num(a.prediction.upper)},
                           {"horizon", num(a.prediction.horizon)},
                           {"extrapolated", a.prediction.extrapolated},
                           {"widened", num(a.prediction.widened)},
                           {"jump", num(a.prediction.jump_allowance)},
                           {"track_lead", num(a.prediction.track_lead)},
                           {"track_chance", num(a.prediction.track_chance)}};
    }
    nlohmann::ordered_json marks = nlohmann::ordered_json::array();
    for (const TrialMark& m : t.marks)
        marks.push_back({{"time", m.time}, {"step", m.step}, {"what", m.what}, {"note", m.note}});
    j["marks"] = marks;
    return j;
}

void print_text(const TrialInfo& t) {
    std::printf("job %s", t.name.c_str());
    if (!t.group.empty()) std::printf("  sweep %s", t.group.c_str());
    std::printf("  %u GPU%s  %s\n", t.gpus, t.gpus == 1 ? "" : "s", t.state_text.c_str());
    std::printf("  source:     %s\n", t.source.c_str());
    if (!t.points.empty()) {
        const double sign = t.direction == Direction::maximize ? 1.0 : -1.0;
        double best = NAN;
        for (const CurvePoint& p : t.points) {
            if (std::isfinite(p.metric) && (std::isnan(best) || sign * p.metric > sign * best))
                best = p.metric;
        }
        std::printf(
            "  curve:      %zu points, step %g .. %g%s, metric %g -> %g (best %g, %s is better)\n",
            t.points.size(), t.points.front().step, t.points.back().step,
            t.max_steps > 0 ? (" of " + std::to_string(static_cast<long long>(t.max_steps))).c_str() : "",
            t.points.front().metric, t.points.back().metric, best,
            t.direction == Direction::maximize ? "higher" : "lower");
    } else {
        std::printf("  curve:      no reports yet\n");
    }
    if (!t.assessment) {
        std::printf("  assessment: none known\n");
    } else {
        const AssessmentView& a = *t.assessment;
        const Prediction& p = a.prediction;
        if (std::isfinite(p.value)) {
            std::printf("  prediction: %g in [%g, %g] at step %g (%s, %zu points)\n", p.value, p.lower,
                        p.upper, p.horizon,
                        p.extrapolated ? "extrapolated" : "not extrapolated: too few points", p.observed);
            if (p.widened > 1.0) {
                std::printf(
                    "              interval widened %.2gx: its sweep's curves beat earlier forecasts\n",
                    p.widened);
            }
            if (p.jump_allowance > 0.0) {
                std::printf(
                    "              optimistic bound moved %g for the jumps its sweep's other trials made\n"
                    "              later in their runs (sibling_jumps)\n",
                    p.jump_allowance);
            }
            if (p.track_lead > 0.0) {
                std::printf(
                    "              ahead of its sweep's best track by %g (at the same point of its run):\n"
                    "              its chance to beat the best read as at least %.2g (best_track_margin)\n",
                    p.track_lead, p.track_chance);
            }
        } else {
            std::printf("  prediction: none\n");
        }
        std::printf("  utility:    %.3g per GPU-second\n", a.utility);
        if (t.load >= 0.0) {
            std::printf("  price:      %.3g per GPU-second at load %.2f\n", a.price, t.load);
        } else {
            std::printf("  price:      %.3g per GPU-second\n", a.price);
        }
        std::printf("  state:      %s\n", a.state.c_str());
        if (a.priority > 0) std::printf("  priority:   %u\n", a.priority);
        std::printf("  decision:   %s\n", a.reason.empty() ? a.decision.c_str() : a.reason.c_str());
    }
    for (const TrialMark& m : t.marks) {
        std::printf("  t=%-10.0f step %-10g %-10s %s\n", m.time, m.step, m.what.c_str(), m.note.c_str());
    }
}

}  // namespace

int cmd_show(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    for (const std::string& a : args) {
        if (a == "-h" || a == "--help") {
            show_usage(stdout);
            return 0;
        }
    }
    auto options = parse_source_options(args);
    if (!options) {
        std::fprintf(stderr, "explsched show: %s\n", options.error().message.c_str());
        return 2;
    }
    bool json = false;
    std::string job;
    for (const std::string& a : args) {
        if (a == "--json") {
            json = true;
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "explsched show: unknown option '%s'\n", a.c_str());
            show_usage(stderr);
            return 2;
        } else if (job.empty()) {
            job = a;
        } else {
            std::fprintf(stderr, "explsched show: one JOBID at a time ('%s' and '%s')\n", job.c_str(),
                         a.c_str());
            return 2;
        }
    }
    auto trial = load_trial(job, *options);
    if (!trial) {
        std::fprintf(stderr, "explsched show: %s\n", trial.error().message.c_str());
        return 1;
    }
    if (json) {
        std::printf("%s\n", to_json(*trial).dump(2).c_str());
    } else {
        print_text(*trial);
    }
    return 0;
}

}  // namespace explsched::cli
