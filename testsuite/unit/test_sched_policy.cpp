#define BOOST_TEST_MODULE test_sched_policy
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/sched/policy.hpp"
#include "core/sched/priority.hpp"
#include "core/sched/settings.hpp"
#include "core/sched/utility.hpp"

using namespace explsched;

namespace {

Assessment trial(std::uint32_t id, double utility, Decision d, std::uint32_t priority = 100) {
    Assessment a;
    a.key = TrialKey{id, TrialKey::kNoArrayTask};
    a.exploratory = true;
    a.utility = utility;
    a.decision = d;
    a.state = TrialState::promising;
    a.priority = priority;
    return a;
}

// A maximising trial halfway through its run, well fitted and extrapolated, predicted to end at
// 0.80 in [0.75, 0.85] while its sweep's best is 0.90: behind, with little chance to win.
StopEvidence behind_trial() {
    StopEvidence e;
    e.direction = Direction::maximize;
    e.points = 20;
    e.last_step = 1000;
    e.max_steps = 2000;
    e.sweep_furthest = 2000;
    e.final_metric.value = 0.80;
    e.final_metric.lower = 0.75;
    e.final_metric.upper = 0.85;
    e.final_metric.horizon = 2000;
    e.final_metric.observed = 20;
    e.final_metric.extrapolated = true;
    e.best_other = 0.90;
    e.win_probability = 0.01;
    e.sweep_scale = 0.5;
    return e;
}

// The same trial predicted to end at 0.95 in [0.92, 0.98]: ahead of the sweep's best.
StopEvidence ahead_trial() {
    StopEvidence e = behind_trial();
    e.final_metric.value = 0.95;
    e.final_metric.lower = 0.92;
    e.final_metric.upper = 0.98;
    e.win_probability = 0.9;
    return e;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// A running trial for which every rung of the ladder applies; tests peel the rungs off in order.
LadderInputs every_rung() {
    LadderInputs in;
    in.job_state = JobState::running;
    in.exploratory = true;
    in.invalid_report = true;
    in.diverged = true;
    in.diverged_at = 700;
    in.state = TrialState::hopeless;
    in.reason.code = ReasonCode::hopeless;
    in.reason.d = 0.9;
    in.points = 20;
    in.last_step = 2000;
    in.max_steps = 2000;
    in.speed = 1.5;
    in.utility = 1e-6;
    in.price = 1e-5;
    in.load_after = 0.9;
    in.running_s = 5000;
    in.price_ratio = 100;
    in.hopeless_action = HopelessAction::terminate;
    return in;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(policy)

BOOST_AUTO_TEST_CASE(hopeless_action_maps_to_a_decision) {
    BOOST_TEST((hopeless_decision(HopelessAction::terminate, JobState::running) == Decision::terminate));
    BOOST_TEST(
        (hopeless_decision(HopelessAction::requeue_hold, JobState::running) == Decision::requeue_hold));
    BOOST_TEST((hopeless_decision(HopelessAction::none, JobState::running) == Decision::preemptable));
    BOOST_TEST((hopeless_decision(HopelessAction::none, JobState::pending) == Decision::wait));
}

BOOST_AUTO_TEST_CASE(price_rule_for_pending_and_running) {
    EngineSettings s;
    s.min_run_s = 600;
    Assessment a;
    decide_by_price(JobState::pending, 2e-5, 1e-5, 0.5, 0, s, a);
    BOOST_TEST((a.decision == Decision::run));
    BOOST_TEST((a.reason.code == ReasonCode::above_price));
    decide_by_price(JobState::pending, 1e-6, 1e-5, 0.9, 0, s, a);
    BOOST_TEST((a.decision == Decision::wait));
    BOOST_TEST((a.reason.code == ReasonCode::below_price));
    BOOST_TEST(a.reason.c == 0.9);
    decide_by_price(JobState::running, 2e-5, 1e-5, 0.9, 5000, s, a);
    BOOST_TEST((a.decision == Decision::keep));
    decide_by_price(JobState::running, 1e-6, 1e-5, 0.9, 5000, s, a);
    BOOST_TEST((a.decision == Decision::preemptable));
    decide_by_price(JobState::running, 1e-6, 1e-5, 0.9, 100, s, a);
    BOOST_TEST((a.decision == Decision::keep));
    BOOST_TEST((a.reason.code == ReasonCode::in_grace));
    BOOST_TEST(a.reason.a == 100);
    BOOST_TEST(a.reason.b == 600);
}

BOOST_AUTO_TEST_CASE(asha_rungs_from_milestones_settings_or_max_steps) {
    EngineSettings s;
    s.asha_reduction = 3;
    s.asha_rungs = 3;
    BOOST_TEST((asha_rungs({10, 50}, 0, s) == std::vector<double>{10, 50}));
    const auto from_max = asha_rungs({}, 2700, s);
    BOOST_REQUIRE(from_max.size() == 3u);
    BOOST_TEST(from_max[0] == 100.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(from_max[2] == 900.0, boost::test_tools::tolerance(1e-9));
    s.asha_min_step = 50;
    BOOST_TEST((asha_rungs({}, 1000, s) == std::vector<double>{50, 150, 450}));
    s.asha_min_step = 0;
    BOOST_TEST(asha_rungs({}, 0, s).empty());
}

BOOST_AUTO_TEST_CASE(asha_rank_keeps_the_top_third) {
    const std::vector<double> values = {0.5, 0.6, 0.7, 0.8, 0.9, 0.55};
    BOOST_TEST(asha_rank(0.9, values, Direction::maximize, 3).promoted);
    BOOST_TEST(asha_rank(0.8, values, Direction::maximize, 3).promoted);
    const AshaRank third = asha_rank(0.7, values, Direction::maximize, 3);
    BOOST_TEST(!third.promoted);
    BOOST_TEST(third.rank == 3u);
    BOOST_TEST(third.of == 6u);
    BOOST_TEST(asha_rank(0.5, values, Direction::minimize, 3).promoted);
    BOOST_TEST(asha_rank(0.4, std::vector<double>{0.4}, Direction::maximize, 3).promoted);
}

BOOST_AUTO_TEST_CASE(sorted_rank_agrees_with_the_linear_one) {
    std::vector<double> values = {0.5, 0.6, 0.7, 0.8, 0.9, 0.55, 0.7};
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    for (Direction d : {Direction::maximize, Direction::minimize}) {
        for (double v : {0.4, 0.5, 0.55, 0.7, 0.75, 0.9, 1.0}) {
            const AshaRank a = asha_rank(v, values, d, 3), b = asha_rank_sorted(v, sorted, d, 3);
            BOOST_TEST(a.rank == b.rank);
            BOOST_TEST(a.of == b.of);
            BOOST_TEST(a.promoted == b.promoted);
        }
    }
}

BOOST_AUTO_TEST_CASE(metric_at_takes_the_last_point_at_or_before) {
    const std::vector<double> steps = {10, 20, 30}, metrics = {0.1, 0.2, 0.3};
    BOOST_TEST(metric_at(steps, metrics, 20) == 0.2);
    BOOST_TEST(metric_at(steps, metrics, 25) == 0.2);
    BOOST_TEST(std::isnan(metric_at(steps, metrics, 5)));
}

BOOST_AUTO_TEST_CASE(preemption_needs_a_margin) {
    EngineSettings s;
    s.preempt_margin = 0.25;
    const Assessment victim = trial(2, 1e-5, Decision::preemptable);
    auto yes = preempt_verdict(trial(1, 1.3e-5, Decision::run), victim, s);
    BOOST_TEST(yes.allowed);
    BOOST_TEST(yes.reason.find("margin 0.25") != std::string::npos);
    auto no = preempt_verdict(trial(1, 1.2e-5, Decision::run), victim, s);
    BOOST_TEST(!no.allowed);
    BOOST_TEST(no.reason.find("does not exceed") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(cross_user_preemption_can_be_switched_off) {
    EngineSettings s;
    Assessment victim = trial(2, 1e-5, Decision::requeue_hold);  // even a hopeless one
    victim.owner = 1001;
    Assessment mine = trial(1, 1e-3, Decision::run);
    mine.owner = 1002;
    BOOST_TEST(preempt_verdict(mine, victim, s).allowed);
    s.preempt_cross_user = false;
    auto no = preempt_verdict(mine, victim, s);
    BOOST_TEST(!no.allowed);
    BOOST_TEST(no.reason.find("preempt_cross_user") != std::string::npos);
    mine.owner = 1001;  // the same user's own trials still
    BOOST_TEST(preempt_verdict(mine, victim, s).allowed);
}

BOOST_AUTO_TEST_CASE(kept_trials_and_non_exploratory_jobs_are_not_preempted) {
    EngineSettings s;
    auto kept = preempt_verdict(trial(1, 1.0, Decision::run), trial(2, 1e-9, Decision::keep), s);
    BOOST_TEST(!kept.allowed);
    BOOST_TEST(kept.reason.find("not preemptable") != std::string::npos);
    Assessment plain = trial(3, 0.0, Decision::keep, 1);
    plain.exploratory = false;
    auto ne = preempt_verdict(trial(1, 1.0, Decision::run, 1000), plain, s);
    BOOST_TEST(!ne.allowed);
    BOOST_TEST(ne.reason.find("not exploratory") != std::string::npos);
    s.preempt_nonexploratory = true;
    BOOST_TEST(preempt_verdict(trial(1, 1.0, Decision::run, 1000), plain, s).allowed);
    BOOST_TEST(!preempt_verdict(trial(2, 1.0, Decision::run), trial(2, 0, Decision::preemptable), s).allowed);
}

BOOST_AUTO_TEST_CASE(hopeless_trials_give_way_to_anyone) {
    EngineSettings s;
    Assessment doomed = trial(2, 0.0, Decision::terminate);
    doomed.state = TrialState::hopeless;
    Assessment plain = trial(1, 0.0, Decision::run, 1);
    plain.exploratory = false;
    auto v = preempt_verdict(plain, doomed, s);
    BOOST_TEST(v.allowed);
    BOOST_TEST(v.reason.find("hopeless") != std::string::npos);
}

// A hopeless trial not stopped for good (judged before hopeless_min_progress, its pause spent,
// or hopeless action none) never preempts, not even another hopeless one: two of them would
// restart each other for ever. It keeps the grace after its (re)start.
BOOST_AUTO_TEST_CASE(a_hopeless_trial_never_preempts) {
    EngineSettings s;
    Assessment waiting = trial(1, 1.0, Decision::wait, 60000);
    waiting.state = TrialState::hopeless;
    Assessment doomed = trial(2, 0.0, Decision::preemptable, 1);
    doomed.state = TrialState::hopeless;
    const auto v = preempt_verdict(waiting, doomed, s);
    BOOST_TEST(!v.allowed);
    BOOST_TEST(contains(v.reason, "the preemptor is hopeless"));
    BOOST_TEST(!preempt_verdict(waiting, trial(3, 1e-9, Decision::preemptable, 1), s).allowed);
    waiting.state = TrialState::promising;  // the same trial, promising, may
    BOOST_TEST(preempt_verdict(waiting, doomed, s).allowed);
    // ... but not within the grace after the hopeless one's (re)start; one to be cancelled
    // or held (a final verdict) gives way at once
    const auto fresh = preempt_verdict(waiting, doomed, s, 100.0);
    BOOST_TEST(!fresh.allowed);
    BOOST_TEST(contains(fresh.reason, "within min_run 600 s"));
    BOOST_TEST(preempt_verdict(waiting, doomed, s, 700.0).allowed);
    Assessment cancelled = trial(4, 0.0, Decision::terminate, 1);
    cancelled.state = TrialState::hopeless;
    BOOST_TEST(preempt_verdict(waiting, cancelled, s, 100.0).allowed);
}

BOOST_AUTO_TEST_CASE(without_utility_rank_decides) {
    EngineSettings s;
    Assessment plain = trial(1, 0.0, Decision::run, 500);
    plain.exploratory = false;
    BOOST_TEST(preempt_verdict(plain, trial(2, 1e-6, Decision::preemptable, 400), s).allowed);
    BOOST_TEST(!preempt_verdict(plain, trial(2, 1e-6, Decision::preemptable, 600), s).allowed);
}

// A trial without a forecast (utility 0) preempts a running trial that has one only with a
// priority above (1 + preempt_rank_margin) x its own; a non-exploratory job, and a preemptee
// without a forecast, still by rank alone.
BOOST_AUTO_TEST_CASE(a_trial_without_a_forecast_needs_the_rank_margin) {
    EngineSettings s;
    BOOST_TEST(s.preempt_rank_margin == 1.0);
    const Assessment newcomer = trial(1, 0.0, Decision::run, 60000);
    const Assessment near_price = trial(2, 1e-6, Decision::preemptable, 45000);
    const Assessment far_below = trial(3, 1e-8, Decision::preemptable, 20000);
    auto kept = preempt_verdict(newcomer, near_price, s);
    BOOST_TEST(!kept.allowed);
    BOOST_TEST(contains(kept.reason, "does not exceed (1 + rank margin 1) x job 2's 45000"));
    auto taken = preempt_verdict(newcomer, far_below, s);
    BOOST_TEST(taken.allowed);
    BOOST_TEST(contains(taken.reason, "outranks it by more than rank margin 1 (60000 > 40000)"));
    BOOST_TEST(!preempt_verdict(trial(1, 0.0, Decision::run, 40000), far_below, s).allowed);  // not above
    // an unforecast preemptee: rank alone
    BOOST_TEST(preempt_verdict(newcomer, trial(4, 0.0, Decision::preemptable, 59999), s).allowed);
    // a non-exploratory job: rank alone
    Assessment plain = trial(5, 0.0, Decision::run, 45001);
    plain.exploratory = false;
    BOOST_TEST(preempt_verdict(plain, near_price, s).allowed);
    // margin 0: rank alone, as before the setting
    s.preempt_rank_margin = 0.0;
    BOOST_TEST(preempt_verdict(newcomer, near_price, s).allowed);
    BOOST_TEST(!preempt_verdict(trial(1, 0.0, Decision::run, 45000), near_price, s).allowed);
    // a trial with a forecast still compares utilities (preempt_margin), not ranks
    s.preempt_rank_margin = 1.0;
    BOOST_TEST(preempt_verdict(trial(6, 2e-6, Decision::run, 1), near_price, s).allowed);
}

// protect_leader: a running trial below the price that holds its sweep's best metric (another
// member has reported) says so (leads_sweep) and gives way to another sweep's trial, or to one of
// its own sweep with a forecast, only if that one's utility is at least its own price and beats
// the leader's by preempt_margin; its own sweep's trials without a forecast and plain jobs preempt
// it as any trial (by rank).
BOOST_AUTO_TEST_CASE(protect_leader_lets_only_a_trial_worth_its_gpus_take_a_leaders) {
    EngineSettings s;
    BOOST_TEST(s.protect_leader);  // the default
    s.protect_leader = false;
    LadderInputs in = every_rung();
    in.invalid_report = false;
    in.diverged = false;
    in.state = TrialState::promising;
    in.last_step = 1000;
    in.holds_sweep_best = true;
    in.sweep_best = 0.93;
    in.sweep_next = 0.91;
    BOOST_TEST((decide_trial(in, s).reason.code == ReasonCode::below_price));  // off: as before
    s.protect_leader = true;
    TrialVerdict v = decide_trial(in, s);
    BOOST_TEST((v.decision == Decision::preemptable));
    BOOST_TEST((v.reason.code == ReasonCode::leads_sweep));
    BOOST_TEST(v.reason.a == 1e-6);
    BOOST_TEST(v.reason.b == 1e-5);
    BOOST_TEST(v.reason.d == 0.93);
    BOOST_TEST(v.reason.e == 0.91);
    BOOST_TEST(v.value == value_factor(1e-6, 1e-5, 100));  // its priority is not raised
    const std::string text = describe(v.decision, v.reason);
    BOOST_TEST(contains(text, "holds its group's best metric 0.93 (next 0.91, protect_leader)"), text);
    // alone in its sweep (nobody else reported), not the holder, or above the price: no change
    in.sweep_next = std::nan("");
    BOOST_TEST((decide_trial(in, s).reason.code == ReasonCode::below_price));
    in.sweep_next = 0.91;
    in.holds_sweep_best = false;
    BOOST_TEST((decide_trial(in, s).reason.code == ReasonCode::below_price));
    in.holds_sweep_best = true;
    in.utility = 2e-5;
    BOOST_TEST((decide_trial(in, s).reason.code == ReasonCode::above_price));
    in.utility = 1e-6;
    in.running_s = 10;  // its grace first
    BOOST_TEST((decide_trial(in, s).reason.code == ReasonCode::in_grace));
    in.job_state = JobState::pending;  // a pending trial waits as any other
    in.running_s = std::numeric_limits<double>::infinity();
    BOOST_TEST((decide_trial(in, s).decision == Decision::wait));

    // the preemption rule (another sweep's trials unless said otherwise)
    Assessment leader = trial(2, 1e-9, Decision::preemptable, 24);
    leader.reason = v.reason;
    leader.group = "7:lr";
    Assessment below = trial(1, 5e-9, Decision::wait, 30000);  // 5x its utility, below its price
    below.price = 1e-8;
    below.group = "7:batch";
    auto refused = preempt_verdict(below, leader, s, 3600.0);
    BOOST_TEST(!refused.allowed);
    BOOST_TEST(contains(refused.reason,
                        "job 2 holds its group's best metric (protect_leader) and the "
                        "preemptor's utility 5e-09 is below its own price 1e-08"),
               refused.reason);
    Assessment unknown = trial(3, 0.0, Decision::wait, 60000);  // no forecast, 2500x its rank
    BOOST_TEST(!preempt_verdict(unknown, leader, s, 3600.0).allowed);
    // the leader's own sweep's trials: one with a forecast only if it is worth its GPUs (by its
    // utility alone, 5x the leader's, it would take them), one without by rank as from any trial
    below.group = leader.group;
    auto sibling = preempt_verdict(below, leader, s, 3600.0);
    BOOST_TEST(!sibling.allowed, sibling.reason);
    BOOST_TEST(contains(sibling.reason,
                        "job 2 holds its group's best metric (protect_leader) and the preemptor, a trial "
                        "of its own sweep with a forecast, has utility 5e-09 below its own price 1e-08"),
               sibling.reason);
    Assessment worth_sibling = below;  // at its price, 20x the leader's utility
    worth_sibling.utility = 2e-8;
    worth_sibling.price = 2e-8;
    sibling = preempt_verdict(worth_sibling, leader, s, 3600.0);
    BOOST_TEST(sibling.allowed, sibling.reason);
    BOOST_TEST(contains(sibling.reason, "utility 2e-08 > (1 + margin 0.25)"), sibling.reason);
    unknown.group = leader.group;
    sibling = preempt_verdict(unknown, leader, s, 3600.0);
    BOOST_TEST(sibling.allowed, sibling.reason);
    BOOST_TEST(contains(sibling.reason, "without a forecast yet, outranks it"), sibling.reason);
    // a sibling with a forecast and the leader not marked (protect_leader off): by utility, as before
    Assessment unmarked = leader;
    unmarked.reason.code = ReasonCode::below_price;
    BOOST_TEST(preempt_verdict(below, unmarked, s, 3600.0).allowed);
    below.group.clear();  // in no sweep known (its explore spec unreadable): shielded from
    BOOST_TEST(!preempt_verdict(below, leader, s, 3600.0).allowed);
    Assessment worth = trial(4, 2e-8, Decision::run, 30000);  // at least its price
    worth.price = 1e-8;
    BOOST_TEST(preempt_verdict(worth, leader, s, 3600.0).allowed);
    Assessment barely = worth;  // worth its GPUs but within preempt_margin of the leader's
    barely.utility = 1.2e-9;
    barely.price = 1e-9;
    BOOST_TEST(!preempt_verdict(barely, leader, s, 3600.0).allowed);
    Assessment plain = trial(5, 0.0, Decision::run, 25);
    plain.exploratory = false;
    BOOST_TEST(preempt_verdict(plain, leader, s, 3600.0).allowed);  // a plain job by rank
    BOOST_TEST(!preempt_verdict(worth, leader, s, 60.0).allowed);   // the grace holds
    s.preempt_cross_user = false;  // another user's, with the switch off: never
    worth.owner = 7;
    leader.owner = 8;
    BOOST_TEST(!preempt_verdict(worth, leader, s, 3600.0).allowed);
}

// A trial behind its sweep at a milestone and too early to predict waits (pending) and gives way
// (running): it preempts nobody, although its priority (half the unknown value) is far above a
// forecast trial's below the price. Were it to, it and any trial with a utility would restart each
// other and their victims for ever (philly seed 0: 4,675 preemptions a run, three trials
// preempted 177-282 times each). A trial promoted at its milestone, or one with too few points
// for a milestone yet, still preempts by the rank margin.
BOOST_AUTO_TEST_CASE(a_trial_behind_at_a_milestone_without_a_forecast_preempts_nobody) {
    EngineSettings s;
    const Assessment below_price = trial(2, 1e-9, Decision::preemptable, 24);
    Assessment behind = trial(1, 0.0, Decision::wait, 25009);
    behind.state = TrialState::unknown;
    behind.reason.code = ReasonCode::asha_behind;
    const auto refused = preempt_verdict(behind, below_price, s, 700.0);
    BOOST_TEST(!refused.allowed);
    BOOST_TEST(contains(refused.reason, "behind its sweep at a milestone"), refused.reason);
    // ... nor a non-exploratory job, nor a hopeless one
    Assessment hopeless = trial(3, 0.0, Decision::preemptable, 1);
    hopeless.state = TrialState::hopeless;
    BOOST_TEST(!preempt_verdict(behind, hopeless, s, 700.0).allowed);
    // running, it gives way to a trial with a utility (after its grace)
    Assessment running = behind;
    running.decision = Decision::preemptable;
    BOOST_TEST(preempt_verdict(trial(4, 1e-9, Decision::run, 24), running, s, 700.0).allowed);
    // promoted at its milestone, or before any milestone: the rank margin decides, as before
    Assessment promoted = behind;
    promoted.reason.code = ReasonCode::asha_promoted;
    BOOST_TEST(preempt_verdict(promoted, below_price, s, 700.0).allowed);
    Assessment early = behind;
    early.reason.code = ReasonCode::too_few_points;
    BOOST_TEST(preempt_verdict(early, below_price, s, 700.0).allowed);
}

// unpredicted_turn: a running trial without a forecast (too few points, no milestone) keeps its
// GPUs for its turn, then only a waiting trial without a forecast may take them.
BOOST_AUTO_TEST_CASE(trials_without_a_forecast_take_turns_under_unpredicted_turn) {
    EngineSettings s;
    s.min_run_s = 600;
    LadderInputs in;
    in.exploratory = true;
    in.points = 2;
    in.last_step = 100;
    in.max_steps = 2000;
    in.job_state = JobState::running;
    in.running_s = 9000;
    BOOST_REQUIRE((ladder_rung(in) == LadderRung::milestones));
    BOOST_TEST(s.unpredicted_turn_s == 7200.0);  // the default
    // 0: kept however long it runs
    s.unpredicted_turn_s = 0;
    BOOST_TEST((decide_trial(in, s).decision == Decision::keep));
    s.unpredicted_turn_s = 7200;
    TrialVerdict v = decide_trial(in, s);
    BOOST_TEST((v.decision == Decision::preemptable));
    BOOST_TEST((v.reason.code == ReasonCode::too_few_points));
    Assessment said;
    said.decision = v.decision;
    said.reason = v.reason;
    BOOST_TEST(contains(explain(said),
                        "2 points, 6 needed to predict; no milestone reached yet; it has had its "
                        "turn of 7200 s (unpredicted_turn)"),
               explain(said));
    in.running_s = 7199;
    BOOST_TEST((decide_trial(in, s).decision == Decision::keep));
    // the turn is never shorter than min_run
    s.unpredicted_turn_s = 60;
    in.running_s = 599;
    BOOST_TEST((decide_trial(in, s).decision == Decision::keep));
    in.running_s = 600;
    BOOST_TEST((decide_trial(in, s).decision == Decision::preemptable));
    // pending: it runs as before
    in.job_state = JobState::pending;
    in.running_s = std::numeric_limits<double>::infinity();
    BOOST_TEST((decide_trial(in, s).decision == Decision::run));

    s.unpredicted_turn_s = 7200;
    Assessment done = trial(1, 0.0, Decision::preemptable, 60001);
    done.state = TrialState::unknown;
    done.reason.code = ReasonCode::too_few_points;
    Assessment waiting = trial(2, 0.0, Decision::run, 59000);  // a lower priority does not matter
    waiting.state = TrialState::unknown;
    waiting.reason.code = ReasonCode::too_few_points;
    const auto taken = preempt_verdict(waiting, done, s, 7200.0);
    BOOST_TEST(taken.allowed);
    BOOST_TEST(contains(taken.reason, "has had its turn of 7200 s"), taken.reason);
    const auto early = preempt_verdict(waiting, done, s, 7000.0);
    BOOST_TEST(!early.allowed);
    BOOST_TEST(contains(early.reason, "within its turn of 7200 s"), early.reason);
    // turns switched off since the verdict was written (a reconfigure): kept, whatever its run
    s.unpredicted_turn_s = 0;
    const auto off = preempt_verdict(waiting, done, s, std::numeric_limits<double>::infinity());
    BOOST_TEST(!off.allowed);
    BOOST_TEST(contains(off.reason, "(re)started ? s ago"), off.reason);
    s.unpredicted_turn_s = 7200;
    // nobody else: a trial with a forecast (however useful), one behind at a milestone, a
    // non-exploratory job, a hopeless trial
    BOOST_TEST(!preempt_verdict(trial(3, 1.0, Decision::run, 90000), done, s, 9000.0).allowed);
    Assessment behind = waiting;
    behind.reason.code = ReasonCode::asha_behind;
    BOOST_TEST(!preempt_verdict(behind, done, s, 9000.0).allowed);
    Assessment plain = trial(4, 0.0, Decision::run, 90000);
    plain.exploratory = false;
    plain.reason.code = ReasonCode::nonexploratory;
    BOOST_TEST(!preempt_verdict(plain, done, s, 9000.0).allowed);
    Assessment hopeless = waiting;
    hopeless.state = TrialState::hopeless;
    BOOST_TEST(!preempt_verdict(hopeless, done, s, 9000.0).allowed);
    // preempt_cross_user=no holds here too
    s.preempt_cross_user = false;
    waiting.owner = 1001;
    done.owner = 1002;
    BOOST_TEST(!preempt_verdict(waiting, done, s, 9000.0).allowed);
    // a trial without a forecast that is still kept (no turns, or within min_run) is not preemptable
    s.preempt_cross_user = true;
    done.decision = Decision::keep;
    BOOST_TEST(!preempt_verdict(waiting, done, s, 9000.0).allowed);
}

// A preemptable verdict comes from the last re-ranking; a trial preempted and started again since
// still carries it. The grace (min_run_s) is checked against its current run: the preempt plugin
// passes how long the job has run since its start_time, as Slurm does for PreemptExemptTime.
BOOST_AUTO_TEST_CASE(a_restarted_trial_keeps_its_grace_whatever_its_last_verdict) {
    EngineSettings s;
    s.min_run_s = 600.0;
    const Assessment victim = trial(2, 1e-5, Decision::preemptable, 20000);
    const Assessment better = trial(1, 1e-3, Decision::run, 90000);
    const Assessment newcomer = trial(3, 0.0, Decision::run, 60000);
    for (const Assessment& who : {better, newcomer}) {
        BOOST_TEST(preempt_verdict(who, victim, s).allowed);  // run time unknown: as assessed
        BOOST_TEST(preempt_verdict(who, victim, s, 600.0).allowed);
        const auto kept = preempt_verdict(who, victim, s, 60.0);
        BOOST_TEST(!kept.allowed);
        BOOST_TEST(contains(kept.reason, "job 2 (re)started 60 s ago, within min_run 600 s"), kept.reason);
    }
    // a hopeless trial gives way at once, grace or not
    Assessment doomed = trial(4, 0.0, Decision::terminate);
    doomed.state = TrialState::hopeless;
    BOOST_TEST(preempt_verdict(better, doomed, s, 10.0).allowed);
    // min_run 0: no grace
    s.min_run_s = 0.0;
    BOOST_TEST(preempt_verdict(better, victim, s, 0.0).allowed);
}

BOOST_AUTO_TEST_CASE(hopeless_rule_stops_a_trial_that_cannot_win) {
    EngineSettings s;  // hopeless_probability 0.02, 6 points, 35 % of the run
    const auto reason = hopeless_rule(behind_trial(), s);
    BOOST_REQUIRE(reason.has_value());
    BOOST_TEST((reason->code == ReasonCode::hopeless));
    BOOST_TEST(reason->a == 0.80);
    BOOST_TEST(reason->b == 0.75);
    BOOST_TEST(reason->c == 0.85);
    BOOST_TEST(reason->d == 0.90);
    BOOST_TEST(reason->e == 0.01);
    BOOST_TEST(contains(describe(Decision::terminate, *reason), "cannot beat the group's best 0.9"));

    BOOST_TEST(!hopeless_rule(ahead_trial(), s).has_value());
    StopEvidence e = behind_trial();
    e.win_probability = 0.02;  // not below hopeless_probability
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e = behind_trial();
    e.points = 5;  // too few points (hopeless_min_points 6)
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e.points = 6;
    BOOST_TEST(hopeless_rule(e, s).has_value());
    e = behind_trial();
    e.final_metric.extrapolated = false;
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e = behind_trial();
    e.best_other = std::nan("");  // nobody to beat
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e = behind_trial();
    e.last_step = 600;  // 30 % of its run
    BOOST_TEST(!hopeless_rule(e, s).has_value());
}

// behind_track_margin: a trial whose chance from its gap to its sweep's best path is below
// hopeless_probability is hopeless from hopeless_min_progress on, whatever its forecast says;
// before it, the gap does not judge it.
BOOST_AUTO_TEST_CASE(behind_track_makes_a_trial_behind_the_best_path_hopeless) {
    EngineSettings s;
    BOOST_TEST(s.behind_track_margin == 0.1);  // the default
    StopEvidence e = behind_trial();           // step 1000 of 2000, best 0.90
    e.win_probability = 0.2;                   // its forecast would keep it
    BOOST_REQUIRE(!hopeless_rule(e, s).has_value());
    e.behind_lead = -0.1;
    e.behind_chance = 0.001;
    const auto reason = hopeless_rule(e, s);
    BOOST_REQUIRE(reason.has_value());
    BOOST_TEST((reason->code == ReasonCode::behind_track));
    BOOST_TEST(reason->a == 0.1, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(reason->b == 0.001);
    BOOST_TEST(reason->c == 0.90);
    BOOST_TEST(reason->d == 0.80);
    BOOST_TEST(reason->e == 0.85);
    const std::string text = describe(Decision::terminate, *reason);
    BOOST_TEST(contains(text,
                        "it runs 0.1 behind the path of its group's best 0.9 at the same fractions of their "
                        "runs and does not close the gap (chance 0.001"),
               text);
    BOOST_TEST(contains(text, "behind_track_margin)"), text);
    BOOST_TEST((to_string(ReasonCode::behind_track) == std::string("behind_track")));
    ReasonCode parsed{};
    BOOST_TEST(reason_code_from("behind_track", parsed));
    BOOST_TEST((parsed == ReasonCode::behind_track));

    StopEvidence f = e;
    f.behind_chance = 0.05;  // the gap leaves it a chance
    BOOST_TEST(!hopeless_rule(f, s).has_value());
    f = e;
    f.last_step = 400;  // 20 % of its run: before hopeless_min_progress
    BOOST_TEST(!hopeless_rule(f, s).has_value());
    f = e;
    f.leader = true;  // it holds its sweep's best
    BOOST_TEST(!hopeless_rule(f, s).has_value());
    f = e;
    f.win_probability = 0.01;  // the forecast's own verdict comes first
    BOOST_TEST((hopeless_rule(f, s)->code == ReasonCode::hopeless));
}

// stale_best_fraction: a trial behind whose own best has not moved (by 1 % of the sweep's range)
// for that fraction of its run, and is not forecast to come back past it, is hopeless whatever
// chance its interval leaves it (a run overfitting since early on: gbdt at learning rate 1 in
// contrib/heldout/fresh, its validation loss rising from a tenth of its run on).
BOOST_AUTO_TEST_CASE(stale_best_rule_stops_a_trial_that_moved_away_from_its_best) {
    EngineSettings s;
    BOOST_TEST(s.stale_best_fraction == 0.0);  // off by default
    StopEvidence off = behind_trial();
    off.win_probability = 0.2;
    off.final_metric.value = 0.70;
    off.own_best = 0.80;
    off.own_best_step = 300;
    BOOST_TEST(!hopeless_rule(off, s).has_value());
    s.stale_best_fraction = 0.3;
    StopEvidence e = behind_trial();  // step 1000 of 2000, best 0.90, range 0.5
    e.win_probability = 0.2;          // the chance rule would not stop it
    e.final_metric.value = 0.70;      // below its own best: falling away
    e.own_best = 0.80;
    e.own_best_step = 300;  // 35 % of its run ago
    BOOST_REQUIRE(!(e.win_probability < s.hopeless_probability));
    const auto reason = hopeless_rule(e, s);
    BOOST_REQUIRE(reason.has_value());
    BOOST_TEST((reason->code == ReasonCode::stale_best));
    BOOST_TEST(reason->a == 0.80);
    BOOST_TEST(reason->b == 300.0);
    BOOST_TEST(reason->c == 0.35, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(reason->d == 0.90);
    BOOST_TEST(reason->e == 0.70);
    const std::string text = describe(Decision::terminate, *reason);
    BOOST_TEST(contains(text,
                        "its best 0.8 has not improved by 1% of its group's range since step 300 (35% "
                        "of its run ago), is behind the group's best 0.9"),
               text);
    BOOST_TEST((to_string(ReasonCode::stale_best) == std::string("stale_best")));
    ReasonCode parsed{};
    BOOST_TEST(reason_code_from("stale_best", parsed));
    BOOST_TEST((parsed == ReasonCode::stale_best));

    StopEvidence f = e;
    f.own_best_step = 450;  // improved 27.5 % of its run ago: not stale enough
    BOOST_TEST(!hopeless_rule(f, s).has_value());
    f = e;
    f.final_metric.value = 0.82;  // forecast to come back past its own best
    BOOST_TEST(!hopeless_rule(f, s).has_value());
    f = e;
    f.own_best = 0.896;  // within 1 % of the range (0.005) of the sweep's best: a near tie
    BOOST_TEST(!hopeless_rule(f, s).has_value());
    f = e;
    f.leader = true;
    BOOST_TEST(!hopeless_rule(f, s).has_value());
    f = e;
    f.last_step = 600;  // 30 % of its run: not judged yet
    f.own_best_step = 0;
    BOOST_TEST(!hopeless_rule(f, s).has_value());
    f = e;
    f.own_best = std::nan("");  // no own best known
    BOOST_TEST(!hopeless_rule(f, s).has_value());
    s.stale_best_fraction = 0.0;  // off
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    // minimised metrics: the same, mirrored
    s.stale_best_fraction = 0.3;
    StopEvidence m = e;
    m.direction = Direction::minimize;
    m.best_other = 0.10;
    m.own_best = 0.20;
    m.final_metric.value = 0.30;
    BOOST_TEST(hopeless_rule(m, s).has_value());
    m.final_metric.value = 0.15;  // forecast below its own best loss: coming back
    BOOST_TEST(!hopeless_rule(m, s).has_value());
}

// --explore-lr-drops: a trial whose learning rate drops ahead is not judged before it has run
// kDropSettle of its run past its first declared drop (the late-step sweep of contrib/heldout:
// its best sits on a plateau behind a smooth trial until its drop at half the run).
BOOST_AUTO_TEST_CASE(no_verdict_before_the_first_declared_drop) {
    EngineSettings s;
    StopEvidence e = behind_trial();  // step 1000 of 2000, chance 0.01: hopeless
    BOOST_REQUIRE(hopeless_rule(e, s).has_value());
    e.first_drop = 1000;  // its drop now: not yet settled (until step 1100)
    BOOST_TEST(before_first_drop(e));
    BOOST_TEST(!far_enough(e, s));
    BOOST_TEST(!final_stop_allowed(e, s));
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e.win_probability = 1e-6;  // not even decisively
    e.last_step = 900;
    BOOST_TEST(!decisively_hopeless(e, s));
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e = behind_trial();
    e.first_drop = 900;  // passed by 0.05 of its run at step 1000
    BOOST_TEST(!before_first_drop(e));
    BOOST_TEST(hopeless_rule(e, s).has_value());
    BOOST_TEST(final_stop_allowed(e, s));
    e.first_drop = 0;  // none declared
    BOOST_TEST(!before_first_drop(e));
    // the near-tie rule waits too
    e = behind_trial();
    e.win_probability = 0.3;
    e.final_metric.value = 0.899;
    e.final_metric.lower = 0.89;
    e.final_metric.upper = 0.905;
    BOOST_REQUIRE(expected_gain_rule(e, s).has_value());
    e.first_drop = 1500;
    BOOST_TEST(!expected_gain_rule(e, s).has_value());
}

BOOST_AUTO_TEST_CASE(stale_best_step_counts_only_improvements_beyond_the_margin) {
    const std::vector<double> steps{1, 2, 3, 4, 5, 6};
    // rises, then noise on a plateau within the margin
    OwnBest b = stale_best_step(steps, {0.5, 0.7, 0.8, 0.805, 0.79, 0.808}, Direction::maximize, 0.01);
    BOOST_TEST(b.best == 0.808);
    BOOST_TEST(b.step == 3.0);
    // a loss: the lowest counts; NaN points are skipped
    b = stale_best_step(steps, {1.0, 0.9, std::nan(""), 0.6, 0.95, 1.2}, Direction::minimize, 0.01);
    BOOST_TEST(b.best == 0.6);
    BOOST_TEST(b.step == 4.0);
    b = stale_best_step({}, {}, Direction::maximize, 0.01);
    BOOST_TEST(std::isnan(b.best));
    BOOST_TEST(b.step == 0.0);
}

// The trial holding its sweep's best metric is never hopeless, even when its forecast falls below
// the runner-up's best (pollux seed 6: a leader two points past its curve's jump, forecast from
// the points before it, was stopped and the sweep lost its best), nor decisively so.
BOOST_AUTO_TEST_CASE(the_sweeps_leader_is_never_hopeless) {
    EngineSettings s;
    StopEvidence e = behind_trial();
    BOOST_REQUIRE(hopeless_rule(e, s).has_value());
    e.leader = true;  // best_other is now the runner-up's best
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e.win_probability = 0.0001;
    e.last_step = 400;  // 20 %: an early stop would need decisive evidence, which this is
    BOOST_TEST(!decisively_hopeless(e, s));
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e.leader = false;
    BOOST_TEST(decisively_hopeless(e, s));
    BOOST_TEST((hopeless_rule(e, s)->code == ReasonCode::hopeless_early));
}

// A sweep whose checked forecasts have held is judged from audited_min_progress (0.15) of a run,
// not hopeless_min_progress (0.35); never earlier than either setting allows, and not with
// audited_min_progress at or above hopeless_min_progress (off). Such a verdict is final (cancel or
// hold) only from hopeless_min_progress, or on decisive evidence.
BOOST_AUTO_TEST_CASE(held_forecasts_are_judged_from_audited_min_progress) {
    EngineSettings s;
    BOOST_TEST(s.audited_min_progress == 0.15);
    StopEvidence e = behind_trial();
    e.last_step = 400;  // 20 % of its run
    BOOST_TEST(judged_from(e, s) == 0.35);
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e.forecasts_held = true;
    BOOST_TEST(judged_from(e, s) == 0.15);
    const auto reason = hopeless_rule(e, s);
    BOOST_REQUIRE(reason.has_value());
    BOOST_TEST((reason->code == ReasonCode::hopeless));
    BOOST_TEST(!final_stop_allowed(e, s));  // judged, but not final before 35 %
    e.win_probability = 0.0001;             // ... unless the evidence is decisive
    BOOST_TEST(final_stop_allowed(e, s));
    e.win_probability = 0.01;
    e.last_step = 700;  // 35 %
    BOOST_TEST(final_stop_allowed(e, s));
    e.last_step = 200;  // 10 %: before audited_min_progress too
    BOOST_TEST(!far_enough(e, s));
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e.last_step = 400;
    s.audited_min_progress = 1.0;  // off
    BOOST_TEST(judged_from(e, s) == 0.35);
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    s.audited_min_progress = 0.15;
    s.hopeless_min_progress = 0.1;  // the lower of the two
    BOOST_TEST(judged_from(e, s) == 0.1);
}

// Held: at least min_checks ratios, and the (1 + level) / 2 quantile (the 90th percentile at
// 80 %) within the optimistic bound (ratio <= 1).
BOOST_AUTO_TEST_CASE(audits_held_reads_the_quantile_of_the_checks) {
    BOOST_TEST(!audits_held({}, 4, 0.8));
    BOOST_TEST(!audits_held({0.1, -0.5, 0.9}, 4, 0.8));  // too few
    BOOST_TEST(audits_held({0.1, -0.5, 0.9, 1.0}, 4, 0.8));
    BOOST_TEST(!audits_held({0.1, -0.5, 0.9, 1.01}, 4, 0.8));  // under 10 checks: every one
    std::vector<double> r(19, 0.5);
    r.push_back(3.0);  // 1 of 20 beyond: the 90th percentile is within
    BOOST_TEST(audits_held(r, 4, 0.8));
    r[0] = r[1] = 3.0;  // 3 of 20 beyond (15 %, more than the 10 % the level allows)
    BOOST_TEST(!audits_held(r, 4, 0.8));
    BOOST_TEST(!audits_held({std::nan(""), 0.1, 0.1, 0.1}, 4, 0.8));  // a check that is not a number: a miss
}

// Before hopeless_min_progress, only decisive evidence stops a trial: from early_stop_progress (0.1)
// of its run, a chance below early_stop_probability (0.001, at most hopeless_probability).
BOOST_AUTO_TEST_CASE(an_early_stop_needs_decisive_evidence) {
    EngineSettings s;
    StopEvidence e = behind_trial();
    e.last_step = 400;                             // 20 % of its run
    BOOST_TEST(!hopeless_rule(e, s).has_value());  // chance 0.01: hopeless only from 35 %
    BOOST_TEST(!decisively_hopeless(e, s));
    e.win_probability = 0.0009;
    BOOST_TEST(decisively_hopeless(e, s));
    const auto reason = hopeless_rule(e, s);
    BOOST_REQUIRE(reason.has_value());
    BOOST_TEST((reason->code == ReasonCode::hopeless_early));
    BOOST_TEST(reason->e == 0.0009);
    BOOST_TEST(contains(describe(Decision::terminate, *reason),
                        "cannot beat the group's best 0.9 (chance 0.0009, below early_stop_probability"),
               describe(Decision::terminate, *reason));
    e.win_probability = 0.001;  // not below
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e.win_probability = 0.0009;
    e.last_step = 199;  // just under 10 % of its run
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e.last_step = 200;
    BOOST_TEST(hopeless_rule(e, s).has_value());
    StopEvidence x = e;
    x.points = 5;  // too few points
    BOOST_TEST(!hopeless_rule(x, s).has_value());
    x = e;
    x.final_metric.extrapolated = false;
    BOOST_TEST(!hopeless_rule(x, s).has_value());
    x = e;
    x.best_other = std::nan("");
    BOOST_TEST(!hopeless_rule(x, s).has_value());
    x = e;
    x.max_steps = 0;  // progress against the sweep's furthest step (2000)
    BOOST_TEST(hopeless_rule(x, s).has_value());
    BOOST_TEST((hopeless_rule(x, s)->code == ReasonCode::hopeless_early));
    x.sweep_furthest = 0;  // no run length known at all: no progress gate, the usual rule
    BOOST_TEST((hopeless_rule(x, s)->code == ReasonCode::hopeless));
    // off, and capped at hopeless_probability
    EngineSettings off = s;
    off.early_stop_probability = 0.0;
    BOOST_TEST(!hopeless_rule(e, off).has_value());
    EngineSettings loose = s;
    loose.early_stop_probability = 0.5;
    loose.hopeless_probability = 0.0005;
    BOOST_TEST(!hopeless_rule(e, loose).has_value());  // 0.0009 is not below 0.0005
    e.win_probability = 0.0004;
    BOOST_TEST(hopeless_rule(e, loose).has_value());
    // from hopeless_min_progress on, the usual rule (and its reason) applies
    e.last_step = 1000;
    BOOST_TEST((hopeless_rule(e, s)->code == ReasonCode::hopeless));
}

BOOST_AUTO_TEST_CASE(costly_chance_weighs_a_trials_chance_against_its_remaining_gpu_hours) {
    EngineSettings s;
    StopEvidence e = behind_trial();
    e.win_probability = 0.08;  // above hopeless_probability
    e.remaining_gpu_hours = 400.0;
    BOOST_TEST(costly_chance_threshold(e, s) == 0.0);  // off by default
    BOOST_TEST(!hopeless_rule(e, s).has_value());

    s.chance_worth_gpu_hours = 4000.0;  // 400 GPU-hours need a chance of 0.1; it has 0.08
    BOOST_TEST(costly_chance_threshold(e, s) == 0.1);
    const auto reason = hopeless_rule(e, s);
    BOOST_REQUIRE(reason.has_value());
    BOOST_TEST((reason->code == ReasonCode::costly_chance));
    BOOST_TEST(reason->a == 0.08);
    BOOST_TEST(reason->b == 400.0);
    BOOST_TEST(reason->c == 4000.0);
    BOOST_TEST(reason->d == 0.90);
    BOOST_TEST(reason->e == 0.80);
    BOOST_TEST(describe(Decision::requeue_hold, *reason) ==
               "requeue-hold: predicted final 0.8 has a chance of 0.08 to beat the group's best 0.9, worth "
               "320 GPU-hours at chance_worth_gpu_hours=4000, less than the 400 its run still needs");

    e.remaining_gpu_hours = 300.0;  // needs 0.075: 0.08 is enough
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e.remaining_gpu_hours = 1e6;  // the threshold stops at pause_probability (0.2)
    BOOST_TEST(costly_chance_threshold(e, s) == s.pause_probability);
    e.win_probability = 0.25;
    BOOST_TEST(!hopeless_rule(e, s).has_value());

    // the hopeless rule's other conditions hold for it too, and its cost must be known
    StopEvidence x = behind_trial();
    x.win_probability = 0.08;
    x.remaining_gpu_hours = 400.0;
    BOOST_TEST(hopeless_rule(x, s).has_value());
    x.last_step = 600;  // 30 % of its run
    BOOST_TEST(!hopeless_rule(x, s).has_value());
    x = behind_trial();
    x.win_probability = 0.08;
    x.remaining_gpu_hours = std::nan("");  // no speed measured yet
    BOOST_TEST(!hopeless_rule(x, s).has_value());
    x.remaining_gpu_hours = 400.0;
    x.leader = true;  // the sweep's best is not stopped for its cost
    BOOST_TEST(!hopeless_rule(x, s).has_value());
    x.leader = false;
    x.final_metric.extrapolated = false;
    BOOST_TEST(!hopeless_rule(x, s).has_value());
    // a trial below hopeless_probability keeps the plain hopeless reason
    x = behind_trial();
    x.remaining_gpu_hours = 400.0;
    BOOST_TEST((hopeless_rule(x, s)->code == ReasonCode::hopeless));
}

BOOST_AUTO_TEST_CASE(progress_is_judged_against_the_sweep_without_max_steps) {
    EngineSettings s;
    StopEvidence e = behind_trial();
    e.max_steps = 0;
    e.sweep_furthest = 10000;  // 1000 of 10000 steps: not far enough
    BOOST_TEST(!far_enough(e, s));
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    e.sweep_furthest = 2500;
    BOOST_TEST(far_enough(e, s));
    BOOST_TEST(hopeless_rule(e, s).has_value());
}

BOOST_AUTO_TEST_CASE(expected_gain_rule_compares_with_min_expected_gain) {
    EngineSettings s;
    const StopEvidence e = behind_trial();
    const double gain =
        expected_improvement_heavy(e.final_metric, e.direction, e.best_other, s.interval_level) /
        e.sweep_scale;
    BOOST_REQUIRE(gain > 0.0);
    s.min_expected_gain = 0.0;  // the rule is off
    BOOST_TEST(!expected_gain_rule(e, s).has_value());
    BOOST_TEST(EngineSettings{}.min_expected_gain == 0.005);  // the default: on

    s.min_expected_gain = 1.01 * gain;  // the gain is below it: stopped
    const auto reason = expected_gain_rule(e, s);
    BOOST_REQUIRE(reason.has_value());
    BOOST_TEST((reason->code == ReasonCode::negligible_gain));
    BOOST_TEST(reason->a == gain);
    BOOST_TEST(reason->b == s.min_expected_gain);
    BOOST_TEST(reason->c == 0.80);
    BOOST_TEST(reason->d == 0.90);
    BOOST_TEST(
        contains(describe(Decision::requeue_hold, *reason), "is expected to improve the group's best 0.9"));

    s.min_expected_gain = 0.99 * gain;  // the gain is above it: runs on
    BOOST_TEST(!expected_gain_rule(e, s).has_value());

    s.min_expected_gain = 0.02;
    BOOST_TEST(!expected_gain_rule(ahead_trial(), s).has_value());
    s.min_expected_gain = 1.01 * gain;
    StopEvidence leader = e;
    leader.leader = true;  // the sweep's best is never stopped for adding nothing to itself
    BOOST_TEST(!expected_gain_rule(leader, s).has_value());
    StopEvidence done = e;
    done.last_step = done.max_steps;
    BOOST_TEST(!expected_gain_rule(done, s).has_value());
}

// A near tie only: a trial predicted far behind the sweep's best (more than near_tie_range of the
// sweep's range) has a small expected gain too, but the hopeless and pause rules judge it.
BOOST_AUTO_TEST_CASE(expected_gain_rule_judges_near_ties_only) {
    EngineSettings s;
    BOOST_TEST(s.near_tie_range == 0.2);  // the default
    StopEvidence e = behind_trial();      // 0.80 predicted, 0.90 best: 0.1 behind
    e.sweep_scale = 0.4;                  // 0.25 of the sweep's range behind: not a near tie
    s.min_expected_gain = 1.0;            // any gain is below it
    BOOST_TEST(!expected_gain_rule(e, s).has_value());
    e.sweep_scale = 0.6;  // 0.17 of the range behind: a near tie
    BOOST_TEST(expected_gain_rule(e, s).has_value());
    e.sweep_scale = 0.4;
    s.near_tie_range = 0.0;  // no gate: any trial
    BOOST_TEST(expected_gain_rule(e, s).has_value());
    s.near_tie_range = 0.3;
    BOOST_TEST(expected_gain_rule(e, s).has_value());
    s.near_tie_range = 0.2;
    e.final_metric.value = std::nan("");  // no prediction: not judged
    BOOST_TEST(!expected_gain_rule(e, s).has_value());

    // the setting is read, bounded and printed as the others
    const auto set = apply_setting(Settings{}, "near_tie_range=0.5");
    BOOST_REQUIRE(set.ok());
    BOOST_TEST(set->engine.near_tie_range == 0.5);
    for (const char* bad : {"near_tie_range=-1", "near_tie_range=nan", "near_tie_range=x"}) {
        const auto r = apply_setting(*set, bad);
        BOOST_REQUIRE(!r.ok());
        BOOST_TEST(r.error().message.find("near_tie_range") != std::string::npos, r.error().message);
    }
}

BOOST_AUTO_TEST_CASE(milestone_rule_stops_a_trial_behind_at_a_milestone) {
    EngineSettings s;
    s.milestone_stop_probability = 1.0;
    StopEvidence e = behind_trial();
    e.win_probability = 0.3;  // above hopeless_probability: only the milestone rule can stop it
    BOOST_TEST(!hopeless_rule(e, s).has_value());
    BOOST_TEST(milestone_rule_applies(e, s));

    // 9 trials reached step 500; this one's 0.40 ranks 5th, outside the top third
    const std::vector<double> at_500{0.9, 0.8, 0.7, 0.6, 0.4, 0.3, 0.2, 0.1, 0.05};
    MilestoneStanding behind;
    behind.reached = 500;
    behind.rank = asha_rank(0.4, at_500, Direction::maximize, s.asha_reduction);
    const auto reason = milestone_rule(e, behind, s);
    BOOST_REQUIRE(reason.has_value());
    BOOST_TEST((reason->code == ReasonCode::behind_at_milestone));
    BOOST_TEST(reason->a == 500);
    BOOST_TEST(reason->b == 5);
    BOOST_TEST(reason->c == 9);
    BOOST_TEST(reason->d == 3);
    BOOST_TEST(reason->e == 0.3);
    BOOST_TEST(describe(Decision::requeue_hold, *reason) ==
               "requeue-hold: milestone step 500: rank 5 of 9 in its group, outside the top 1/3, and a "
               "chance of 0.3 to beat the group's best");

    // ahead at the milestone (2nd of 9): runs on
    MilestoneStanding ahead;
    ahead.reached = 500;
    ahead.rank = asha_rank(0.8, at_500, Direction::maximize, s.asha_reduction);
    BOOST_TEST(ahead.rank.promoted);
    BOOST_TEST(!milestone_rule(e, ahead, s).has_value());
    // no milestone reached yet
    BOOST_TEST(!milestone_rule(e, MilestoneStanding{}, s).has_value());

    // the rule is off, the trial is done, or its chance is not below the threshold
    s.milestone_stop_probability = 0.0;
    BOOST_TEST(!milestone_rule_applies(e, s));
    BOOST_TEST(!milestone_rule(e, behind, s).has_value());
    s.milestone_stop_probability = 0.25;
    BOOST_TEST(!milestone_rule_applies(e, s));
    s.milestone_stop_probability = 1.0;
    StopEvidence done = e;
    done.last_step = done.max_steps;
    BOOST_TEST(!milestone_rule_applies(done, s));
    BOOST_TEST(!milestone_rule(done, behind, s).has_value());
}

BOOST_AUTO_TEST_CASE(ladder_precedence) {
    EngineSettings s;
    LadderInputs in = every_rung();

    in.exploratory = false;
    BOOST_TEST((ladder_rung(in) == LadderRung::nonexploratory));
    TrialVerdict v = decide_trial(in, s);
    BOOST_TEST((v.decision == Decision::keep));
    BOOST_TEST((v.reason.code == ReasonCode::nonexploratory));
    BOOST_TEST(v.value == s.nonexploratory_value);

    in.exploratory = true;
    BOOST_TEST((ladder_rung(in) == LadderRung::invalid_report));
    v = decide_trial(in, s);
    BOOST_TEST((v.decision == Decision::keep));
    BOOST_TEST((v.reason.code == ReasonCode::invalid_report));
    BOOST_TEST(v.value == s.unknown_value);

    in.invalid_report = false;
    BOOST_TEST((ladder_rung(in) == LadderRung::diverged));
    v = decide_trial(in, s);
    BOOST_TEST((v.state == TrialState::hopeless));
    BOOST_TEST((v.decision == Decision::terminate));
    BOOST_TEST((v.reason.code == ReasonCode::diverged));
    BOOST_TEST(v.reason.a == 700);
    BOOST_TEST(std::isnan(v.reason.d));  // the stopping rule's reason is replaced
    BOOST_TEST(v.value == 0.0);

    in.diverged = false;
    BOOST_TEST((ladder_rung(in) == LadderRung::hopeless));
    in.hopeless_action = HopelessAction::requeue_hold;
    v = decide_trial(in, s);
    BOOST_TEST((v.state == TrialState::hopeless));
    BOOST_TEST((v.decision == Decision::requeue_hold));
    BOOST_TEST((v.reason.code == ReasonCode::hopeless));
    BOOST_TEST(v.reason.d == 0.9);  // the stopping rule's reason is kept
    BOOST_TEST(v.value == 0.0);

    in.state = TrialState::promising;
    BOOST_TEST((ladder_rung(in) == LadderRung::finished));
    v = decide_trial(in, s);
    BOOST_TEST((v.state == TrialState::promising));
    BOOST_TEST((v.decision == Decision::keep));
    BOOST_TEST((v.reason.code == ReasonCode::finished));
    BOOST_TEST(v.reason.a == 2000);

    in.last_step = 1000;
    BOOST_TEST((ladder_rung(in) == LadderRung::price));
    v = decide_trial(in, s);
    BOOST_TEST((v.decision == Decision::preemptable));
    BOOST_TEST((v.reason.code == ReasonCode::below_price));
    BOOST_TEST(v.reason.a == 1e-6);
    BOOST_TEST(v.reason.b == 1e-5);
    BOOST_TEST(v.reason.c == 0.9);
    BOOST_TEST(v.value == value_factor(1e-6, 1e-5, 100));

    in.speed = std::nan("");  // no speed yet: no utility to trust
    BOOST_TEST((ladder_rung(in) == LadderRung::milestones));
    in.speed = 1.5;
    in.state = TrialState::unknown;  // not fitted yet
    BOOST_TEST((ladder_rung(in) == LadderRung::milestones));
    in.points = 0;  // no points: cannot have finished
    in.last_step = 0;
    BOOST_TEST((ladder_rung(in) == LadderRung::milestones));
}

BOOST_AUTO_TEST_CASE(ladder_falls_back_to_successive_halving) {
    EngineSettings s;
    s.min_run_s = 600;
    LadderInputs in;
    in.exploratory = true;
    in.points = 3;
    in.last_step = 300;
    in.max_steps = 2000;
    in.hopeless_action = HopelessAction::requeue_hold;
    BOOST_REQUIRE((ladder_rung(in) == LadderRung::milestones));

    TrialVerdict v = decide_trial(in, s);  // no milestone reached
    BOOST_TEST((v.decision == Decision::run));
    BOOST_TEST((v.reason.code == ReasonCode::too_few_points));
    BOOST_TEST(v.reason.a == 3);
    BOOST_TEST(v.reason.b == static_cast<double>(s.min_points_to_fit));

    in.standing.reached = 250;
    in.standing.rank = AshaRank{1, 4, true};
    v = decide_trial(in, s);
    BOOST_TEST((v.decision == Decision::run));
    BOOST_TEST((v.reason.code == ReasonCode::asha_promoted));
    BOOST_TEST(v.value == 0.5 * (1.0 + s.unknown_value));

    in.standing.rank = AshaRank{3, 4, false};
    v = decide_trial(in, s);
    BOOST_TEST((v.state == TrialState::unknown));
    BOOST_TEST((v.decision == Decision::wait));
    BOOST_TEST((v.reason.code == ReasonCode::asha_behind));
    BOOST_TEST(v.value == 0.5 * s.unknown_value);
    in.job_state = JobState::running;
    in.running_s = 100;
    v = decide_trial(in, s);
    BOOST_TEST((v.decision == Decision::keep));
    BOOST_TEST((v.reason.code == ReasonCode::in_grace));
    in.running_s = 1000;
    BOOST_TEST((decide_trial(in, s).decision == Decision::preemptable));

    s.milestone_stop_unpredicted = true;  // behind and too short to predict: stopped
    v = decide_trial(in, s);
    BOOST_TEST((v.state == TrialState::hopeless));
    BOOST_TEST((v.decision == Decision::requeue_hold));
    BOOST_TEST((v.reason.code == ReasonCode::behind_at_milestone));
    BOOST_TEST(v.value == 0.0);
    BOOST_TEST(
        contains(describe(v.decision, v.reason), "rank 3 of 4 in its group, outside the top 1/3, too early"));
}

BOOST_AUTO_TEST_SUITE_END()
