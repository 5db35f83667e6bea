// explsched why JOBID | --curve FILE [--sibling FILE...] | --sim RESULT.json JOBID
// Why a trial ranks where it does among its sweep, and what would change that: the decision's
// reason, the utility it needs against the price, the load at which the price crosses its
// utility, and for a hopeless trial the value its sweep's best would have to stay above.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/trial_source.hpp"
#include "cli/why_placement.hpp"
#include "core/sched/engine_settings.hpp"

namespace explsched::cli {

namespace {

void why_usage(FILE* out) {
    std::fprintf(
        out, "usage: explsched why JOBID | --curve FILE [--sibling FILE...] | --sim RESULT.json JOBID\n%s",
        source_options_help());
}

// Load at which p(u) = value for the price function with bounds (L, U); NaN if unknown. Below L
// no load makes the price that low; above U no load makes it that high.
double load_for_price(double value, double lower, double upper) {
    if (!(lower > 0.0 && upper > lower) || !(value > 0.0)) return NAN;
    if (value <= lower) return 0.0;
    if (value >= upper) return 1.0;
    // p(u) = (L/e) (eU/L)^u above the knee u* = 1 / (1 + ln(U/L)), where p(u*) = L.
    return std::log(value * std::exp(1.0) / lower) / std::log(std::exp(1.0) * upper / lower);
}

struct Row {
    std::string name;
    std::string state;
    std::uint32_t priority = 0;
    double utility = NAN;
    double predicted = NAN;
    std::string decision;
    bool self = false;
};

void print_ranking(const TrialInfo& t) {
    std::vector<Row> rows;
    const auto add = [&](const std::string& name, const std::string& state,
                         const std::optional<AssessmentView>& a, bool self) {
        Row r;
        r.name = name;
        r.state = state;
        r.self = self;
        if (a) {
            r.priority = a->priority;
            r.utility = a->utility;
            r.predicted = a->prediction.value;
            r.decision = a->decision;
        }
        rows.push_back(r);
    };
    add(t.name, t.state_text, t.assessment, true);
    for (const Sibling& s : t.siblings) add(s.name, s.state_text, s.assessment, false);
    if (rows.size() < 2) {
        std::printf("  It has no sweep siblings here to rank against%s.\n",
                    t.group.empty() ? " (no sweep known; give --sibling FILE for the others)" : "");
        return;
    }
    // The scheduler orders by priority; where that is not known, by utility.
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        if (a.priority != b.priority) return a.priority > b.priority;
        const double ua = std::isfinite(a.utility) ? a.utility : -1.0,
                     ub = std::isfinite(b.utility) ? b.utility : -1.0;
        return ua > ub;
    });
    std::size_t rank = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].self) rank = i + 1;
    }
    std::printf("  Rank %zu of %zu in sweep %s (by priority, then utility):\n", rank, rows.size(),
                t.group.empty() ? "(given siblings)" : t.group.c_str());
    if (t.source.rfind("sim", 0) == 0) {
        std::printf(
            "    (each trial's last assessment; trials that ended were last assessed before they did)\n");
    }
    std::printf("    %-4s %-24s %-10s %10s %12s %12s  %s\n", "", "job", "state", "priority", "utility",
                "pred. final", "decision");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        std::printf("    %-4s %-24s %-10s %10u %12.3g %12.4g  %s\n", r.self ? "->" : "",
                    r.name.substr(0, 24).c_str(), r.state.c_str(), r.priority, r.utility, r.predicted,
                    r.decision.c_str());
    }
}

void print_what_would_change(const TrialInfo& t) {
    const AssessmentView& a = *t.assessment;
    const EngineSettings& defaults = t.settings;
    std::printf("  What would change it (under %s):\n", t.settings_from.c_str());
    const Prediction& p = a.prediction;
    if (a.reason.find("diverged") != std::string::npos) {
        std::printf(
            "    Its metric became non-finite; nothing it reports later can undo that: restart it from an\n"
            "    earlier checkpoint with other hyperparameters.\n");
        return;
    }
    if (a.decision == "pause" && a.reason.find("untried trials wait") != std::string::npos) {
        std::printf(
            "    It is paused so that its sweep's trials that have not run yet get GPUs first\n"
            "    (explore_first_progress), not because it looks unlikely: requeued and held with its\n"
            "    checkpoint, holding no GPU. It resumes as any paused trial (ExplSched releases its\n"
            "    hold) when its optimistic utility is at least the GPU price and GPUs are free for it,\n"
            "    and goes on from its checkpoint; once its pauses (pause_max) are spent it is not paused\n"
            "    again. Its owner may release it at any time (scontrol release).\n");
        return;
    }
    // A near tie (min_expected_gain), paused or stopped: what the rule weighed.
    const bool near_tie = a.reason.find("is expected to improve the group's best") != std::string::npos;
    const auto print_near_tie = [&] {
        std::printf(
            "    It might still beat its sweep's best, but by so little that finishing it is expected to\n"
            "    add under min_expected_gain (%g) of the sweep's metric range to the sweep's best model\n"
            "    (a sweep yields one model; see the decision above). The rule judges only near twins:\n"
            "    trials predicted within near_tie_range (%g) of that range of the sweep's best.",
            defaults.min_expected_gain, defaults.near_tie_range);
    };
    if (a.decision == "pause" && near_tie) {
        print_near_tie();
        std::printf("\n");
    }
    // judged before hopeless_min_progress on its sweep's held forecasts (audited_min_progress)
    if (a.reason.find("checked forecasts have held") != std::string::npos) {
        std::printf(
            "    It was judged before hopeless_min_progress (%.0f%% of its run) because its sweep's\n"
            "    checked forecasts have held (at least audited_min_checks, %zu, checked and no more beaten\n"
            "    past their optimistic bound than the interval allows; while the sweep has fewer, its\n"
            "    owner's for the same --explore-model), which lets a verdict come from\n"
            "    audited_min_progress (%.0f%%) on. So early a verdict is not final: the trial is paused,\n"
            "    or, its pauses spent, gives way to others; it is stopped for good only from\n"
            "    hopeless_min_progress on, or on decisive evidence.\n",
            100.0 * defaults.hopeless_min_progress, defaults.audited_min_checks,
            100.0 * defaults.audited_min_progress);
    }
    if (a.decision == "pause" &&
        a.reason.find("not resumed while its sweep's other trials run") != std::string::npos) {
        std::printf(
            "    It is past hopeless_min_progress (%.0f%%) of its run and even the optimistic end of its\n"
            "    forecast is behind its sweep's best: GPUs would buy only the forecast's tail, so it is\n"
            "    not resumed, however cheap GPUs are, while its sweep's other trials run (they can only\n"
            "    raise the best). Its chance is not yet under hopeless_probability (%g): then it is\n"
            "    stopped for good. If the rest of its sweep ends first, it resumes as its sweep's last.\n"
            "    It holds no GPU meanwhile (requeued and held with its checkpoint). Its owner may release\n"
            "    it at any time (scontrol release); ExplSched then leaves it alone.\n",
            100.0 * defaults.hopeless_min_progress, defaults.hopeless_probability);
        return;
    }
    if (a.decision == "pause" && (a.reason.find("wait for the slot it holds") != std::string::npos ||
                                  a.reason.find("runs at its task limit") != std::string::npos)) {
        std::printf(
            "    Its job array runs at its task limit (sbatch --array=...%%N): its running tasks hold the\n"
            "    array's slots, and its waiting tasks start only when one of them ends, however many GPUs\n"
            "    are free. It looked unlikely to beat its sweep's best (chance under pause_probability,\n"
            "    %g), so it gave its slot to a waiting task of its array: requeued and held with its\n"
            "    checkpoint, holding no GPU. It is not resumed while the array has no slot for it; once\n"
            "    one frees (its waiting tasks have started) it resumes as any paused trial, when its\n"
            "    optimistic utility is at least the GPU price, or as its sweep's last, and goes on from\n"
            "    its checkpoint. It is stopped for good only once even its optimistic bound cannot beat\n"
            "    its sweep's best. Its owner may release it at any time (scontrol release).\n",
            defaults.pause_probability);
        return;
    }
    if (a.decision == "pause" && a.reason.find("although no trial waits for its GPUs") != std::string::npos) {
        std::printf(
            "    It is paused although no trial waits for its GPUs (pause_idle_utility, %g): it is past\n"
            "    hopeless_min_progress (%.0f%%) of its run, its utility is at most that fraction of the GPU\n"
            "    price, and even its optimistic utility is below the price, so the GPU-hours it held bought\n"
            "    next to nothing. It resumes from its checkpoint (ExplSched releases its hold) once its\n"
            "    optimistic utility reaches the GPU price and GPUs are free for it, or as its sweep's last;\n"
            "    it is stopped for good only once even its optimistic bound (now %g) cannot beat its\n"
            "    sweep's best. Its owner may release it at any time (scontrol release); ExplSched then\n"
            "    leaves it alone.\n",
            defaults.pause_idle_utility, 100.0 * defaults.hopeless_min_progress,
            t.direction == Direction::maximize ? p.upper : p.lower);
        return;
    }
    if (a.decision == "pause") {
        std::printf(
            "    It is paused: requeued and held with its checkpoint, holding no GPU. It resumes (ExplSched\n"
            "    releases its hold) when its optimistic utility is at least the GPU price and GPUs are\n"
            "    free for it, paused trials with the highest optimistic bound first; it is stopped for\n"
            "    good only once even its optimistic bound (now %g) cannot beat its sweep's best, and\n"
            "    not before hopeless_min_progress (%.0f%%) of its run but on decisive evidence. Its\n"
            "    owner may release it at any time (scontrol release); ExplSched then leaves it alone.\n",
            t.direction == Direction::maximize ? p.upper : p.lower, 100.0 * defaults.hopeless_min_progress);
        return;
    }
    if (a.reason.find("no verdict on its forecast before min_run") != std::string::npos) {
        std::printf(
            "    It was paused and then resumed. Its forecast still gives it little chance to beat its\n"
            "    sweep's best, but a resume pays for a restart to see more of its curve: it keeps its\n"
            "    GPUs until it has run min_run (%g s) since the restart, then it is judged again on its\n"
            "    newer points (stopped for good if they changed nothing).\n",
            defaults.min_run_s);
        return;
    }
    // what follows a resume, whatever bought it
    const auto print_judged_after_resume = [&] {
        std::printf(
            " It is judged from here on as any running trial;\n"
            "    it may be paused again only while it has pauses left (pause_max: %u per trial).\n",
            static_cast<unsigned>(defaults.pause_max));
    };
    if (a.reason.find("resumed from pause on GPUs nobody else wants") != std::string::npos) {
        std::printf(
            "    It was paused and has been resumed from its checkpoint although its optimistic utility\n"
            "    is below the GPU price: its sweep has no other trial left to run, and the GPUs were\n"
            "    free with nobody else waiting for them.");
        print_judged_after_resume();
        return;
    }
    if (a.reason.find("resumed from pause") != std::string::npos) {
        std::printf(
            "    It was paused and has been resumed from its checkpoint: its optimistic utility is at\n"
            "    least the GPU price and GPUs were free.");
        print_judged_after_resume();
        return;
    }
    if (a.state == "hopeless" && a.reason.find("chance_worth_gpu_hours") != std::string::npos) {
        std::printf(
            "    It might still beat its sweep's best, but the site's chance_worth_gpu_hours says that\n"
            "    chance is not worth the GPU-hours its run still needs (see the decision above). It would\n"
            "    be kept if its next reports raised its chance, or if the site raised or unset that\n"
            "    setting; it is never stopped for cost while it leads its sweep.\n");
        return;
    }
    if (a.state == "hopeless" && near_tie) {
        print_near_tie();
        std::printf(
            " It would be kept if its next reports\n"
            "    raised that expected gain, or while it leads its sweep; min_expected_gain=0 turns the rule\n"
            "    off.\n");
        return;
    }
    if (a.state == "hopeless" && a.reason.find("early_stop_probability") != std::string::npos) {
        std::printf(
            "    Its predicted final %g is so far short of its sweep's best that, although it has run\n"
            "    less than hopeless_min_progress (%.0f%%) of its run, its chance to beat it is below\n"
            "    early_stop_probability (%g): decisive evidence (its predicted final over six times\n"
            "    its interval's optimistic half-width short of the best), so it was stopped for good\n"
            "    rather than paused.\n",
            p.value, 100.0 * defaults.hopeless_min_progress, defaults.early_stop_probability);
        return;
    }
    if (a.state == "hopeless" && a.reason.find("behind_track_margin") != std::string::npos) {
        std::printf(
            "    Its forecast alone (%g, optimistic %g) would have kept it, but over the last tenth of the\n"
            "    runs compared it ran behind the path of the trial that reached its sweep's best, at the\n"
            "    same fractions of their runs, and did not close the gap fast enough to catch up by its\n"
            "    end (behind_track_margin). It would be kept if its next reports closed that gap, or\n"
            "    with behind_track_margin=0.\n",
            p.value, t.direction == Direction::maximize ? p.upper : p.lower);
        return;
    }
    if (a.state == "hopeless") {
        std::printf(
            "    Its predicted final %g has an optimistic bound of %g, which cannot beat what its sweep's\n"
            "    best has already reached (the chance is below %.0f%%). It would be kept if its next\n"
            "    reports raised that bound past the sweep's best, or if the best trial's reports vanished\n"
            "    (a sweep member that ends leaves the ranking).\n",
            p.value, t.direction == Direction::maximize ? p.upper : p.lower,
            100.0 * defaults.hopeless_probability);
        if (p.jump_allowance > 0.0) {
            std::printf(
                "    That bound already allows %g for the jumps its sweep's other trials made\n"
                "    later in their runs (sibling_jumps): even a jump like theirs would not take it\n"
                "    past the best.\n",
                p.jump_allowance);
        }
        return;
    }
    if (a.reason.find("too few") != std::string::npos || a.reason.find("points") != std::string::npos) {
        std::printf(
            "    Its curve is not extrapolated until it has %zu points (it has %zu); until then the sweep's\n"
            "    successive-halving milestones decide, and a trial behind the top 1/%g at a milestone\n"
            "    becomes preemptable.\n",
            defaults.min_points_to_fit, t.points.size(), defaults.asha_reduction);
        return;
    }
    if (!(std::isfinite(a.utility) && std::isfinite(a.price))) {
        std::printf(
            "    No utility or price is known (no speed reported yet?): its priority rests on age.\n");
        return;
    }
    const double u_cross = load_for_price(a.utility, t.price_lower, t.price_upper);
    // The engine compared them at full precision; SystemComment keeps four digits, so a utility a
    // hair under the price can read back equal to it. Its decision says which side it was on.
    bool at_price = a.utility >= a.price;
    if (a.reason.find("is below the GPU price") != std::string::npos) {
        at_price = false;
    } else if (a.reason.find("is at least the GPU price") != std::string::npos) {
        at_price = true;
    }
    if (at_price) {
        std::printf(
            "    Its utility %.3g is %.2fx the price %.3g: it keeps (or would get) GPUs. It would become\n"
            "    preemptable if the gain its curve predicts over the next %.0f s fell below %.0f%% of\n"
            "    today's,",
            a.utility, a.price > 0 ? a.utility / a.price : INFINITY, a.price, defaults.utility_horizon_s,
            a.utility > 0 ? 100.0 * a.price / a.utility : 0.0);
        if (std::isfinite(u_cross)) {
            std::printf(" or if the cluster's load rose above %.2f (where the price reaches its utility).\n",
                        u_cross);
        } else {
            std::printf(" or if the cluster filled up enough to raise the price past it.\n");
        }
        std::printf(
            "    A waiting trial takes its GPUs only with a utility above %.3g (%.0f%% more), after its\n"
            "    first %.0f s of a run.\n",
            (1.0 + defaults.preempt_margin) * a.utility, 100.0 * defaults.preempt_margin, defaults.min_run_s);
    } else {
        // below the price yet kept: a (re)started trial is not preempted within min_run_s
        const bool grace = a.reason.find("not preemptable before") != std::string::npos;
        std::printf(
            "    Its utility %.3g is %s the price %.3g: %s. It would rank\n"
            "    as worth its GPUs if its predicted gain grew %.2fx,",
            a.utility, a.utility >= a.price ? "a hair below (equal in the digits kept)" : "below", a.price,
            grace ? "it keeps its GPUs only until its grace\n    after a (re)start ends (see the decision "
                    "above), then it is preemptable"
                  : "it is preemptable (or waits)",
            a.utility > 0 ? std::max(a.price / a.utility, 1.0) : INFINITY);
        if (std::isfinite(u_cross) && u_cross > 0.0) {
            std::printf(" or if the load fell below %.2f.\n", u_cross);
        } else {
            std::printf(" since even an idle cluster prices GPUs above it.\n");
        }
        // protect_leader: it holds its sweep's best metric (code leads_sweep, its reason says so)
        const bool leader = a.reason.find(", protect_leader)") != std::string::npos;
        if (a.utility > 0.0 && leader) {
            std::printf(
                "    It holds its sweep's best metric (protect_leader): of other sweeps, only a waiting\n"
                "    trial whose utility is at least its own price and above %.3g (%.0f%% more) takes its\n"
                "    GPUs; not one below the price, nor one without a forecast (a plain job does by rank).\n",
                (1.0 + defaults.preempt_margin) * a.utility, 100.0 * defaults.preempt_margin);
        }
        if (a.utility > 0.0) {
            std::printf("    %s waiting trial takes its GPUs with a utility %sabove %.3g (%.0f%% more)",
                        leader  ? "Of its own sweep, a"
                        : grace ? "After its grace, a"
                                : "A",
                        leader ? "at least its own price and " : "",
                        (1.0 + defaults.preempt_margin) * a.utility, 100.0 * defaults.preempt_margin);
            if (a.priority > 0) {
                std::printf(
                    ";\n    one without a forecast yet with a priority above %.0f (%.0f%% more than its "
                    "%u).\n"
                    "    (A trial behind its sweep at a milestone before it has a forecast preempts "
                    "nobody.)\n",
                    std::floor((1.0 + defaults.preempt_rank_margin) * a.priority),
                    100.0 * defaults.preempt_rank_margin, a.priority);
            } else {
                std::printf(".\n");
            }
        }
    }
}

}  // namespace

int cmd_why(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    for (const std::string& a : args) {
        if (a == "-h" || a == "--help") {
            why_usage(stdout);
            return 0;
        }
    }
    auto options = parse_source_options(args);
    if (!options) {
        std::fprintf(stderr, "explsched why: %s\n", options.error().message.c_str());
        return 2;
    }
    std::string job;
    for (const std::string& a : args) {
        if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "explsched why: unknown option '%s'\n", a.c_str());
            why_usage(stderr);
            return 2;
        }
        if (!job.empty()) {
            std::fprintf(stderr, "explsched why: one JOBID at a time\n");
            return 2;
        }
        job = a;
    }
    auto trial = load_trial(job, *options);
    const auto placement = live_placement(job);  // a multi-node job placed by slurmctld
    if (!trial && placement) {
        std::printf("job %s (%s): %s\n", job.c_str(), placement->state.c_str(), placement->text.c_str());
        return 0;
    }
    if (!trial) {
        std::fprintf(stderr, "explsched why: %s\n", trial.error().message.c_str());
        return 1;
    }
    const TrialInfo& t = *trial;
    std::printf("job %s (%s): %s\n", t.name.c_str(), t.state_text.c_str(), t.source.c_str());
    if (placement) std::printf("  %s\n", placement->text.c_str());
    if (!t.assessment) {
        std::printf(
            "  The scheduler has not assessed it (no SystemComment, no recorded assessment): a job with no\n"
            "  curve is ranked by age, partition and nice only.\n");
        return 0;
    }
    std::string decision = t.assessment->reason.empty() ? t.assessment->decision : t.assessment->reason;
    // a multi-node trial's placement note ends the line; it has its own line above
    if (const auto at = decision.find("; placement: "); at != std::string::npos) decision.erase(at);
    std::printf("  Decision: %s\n", decision.c_str());
    if (!t.assessment->gpu_text.empty()) {
        std::printf("  GPU type: %s.\n", t.assessment->gpu_text.c_str());
    } else if (t.source.rfind("live", 0) == 0) {
        std::printf(
            "  GPU type: not recorded in its SystemComment (written before slurmctld valued trials by "
            "type).\n");
    }
    if (!t.requeueable) {
        std::printf(
            "  Requeue: it cannot be requeued (submitted with --no-requeue, or not a batch job), so it is\n"
            "  never paused; a stop that would requeue and hold it only marks it preemptable, and\n"
            "  slurmctld cancels a job it cannot requeue when another preempts it (PreemptMode=REQUEUE).\n");
    }
    print_ranking(t);
    if (const Prediction& p = t.assessment->prediction; p.track_lead > 0.0) {
        std::printf(
            "  Best track: over the last tenth of its run its metric is %g better than that of the sweep\n"
            "  member that went on from the same point of its run to the sweep's best, so its chance to\n"
            "  beat the best is read as at least %.2g, whatever its own forecast says, and the near-tie\n"
            "  rule does not judge it (best_track_margin). It is judged on its forecast again once it\n"
            "  falls back to that path.\n",
            p.track_lead, p.track_chance);
    }
    print_what_would_change(t);
    return 0;
}

}  // namespace explsched::cli
