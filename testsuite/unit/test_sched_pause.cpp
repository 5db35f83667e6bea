#define BOOST_TEST_MODULE test_sched_pause
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/sched/action_ledger.hpp"
#include "core/sched/engine.hpp"
#include "core/sched/pause.hpp"
#include "engine_fixture.hpp"

using namespace explsched;
using namespace enginetest;

namespace {

StopEvidence evidence(double value, double lower, double upper, double best, double win) {
    StopEvidence e;
    e.points = 20;
    e.last_step = 2000;
    e.max_steps = 6000;
    e.final_metric.value = value;
    e.final_metric.lower = lower;
    e.final_metric.upper = upper;
    e.final_metric.extrapolated = true;
    e.best_other = best;
    e.win_probability = win;
    e.own_win_probability = win;
    e.sweep_scale = 0.5;
    return e;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pause_and_resume)

BOOST_AUTO_TEST_CASE(outlook_reads_the_optimistic_end_of_the_interval) {
    EngineSettings s;
    const PauseOutlook up = pause_outlook(evidence(0.8, 0.7, 0.92, 0.9, 0.1), 0.6, 1.0, 1, 1.0, s);
    BOOST_TEST(up.bound == 0.92);
    BOOST_TEST(up.can_matter);
    BOOST_TEST(up.optimism == 0.04, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(up.optimistic_utility > 0.0);
    const PauseOutlook down = pause_outlook(evidence(0.8, 0.7, 0.85, 0.9, 0.01), 0.6, 1.0, 1, 1.0, s);
    BOOST_TEST(!down.can_matter);
    BOOST_TEST(down.optimistic_utility < up.optimistic_utility);
    // minimising: the optimistic end is the lower one
    StopEvidence e = evidence(0.5, 0.3, 0.6, 0.35, 0.2);
    e.direction = Direction::minimize;
    BOOST_TEST(pause_outlook(e, 0.7, 1.0, 1, 1.0, s).bound == 0.3);
    BOOST_TEST(pause_outlook(e, 0.7, 1.0, 1, 1.0, s).can_matter);
    // an owner whose forecasts fail gets no optimism either
    BOOST_TEST(pause_outlook(evidence(0.8, 0.7, 0.92, 0.9, 0.1), 0.6, 1.0, 1, 0.0, s).optimistic_utility ==
               0.0);
}

BOOST_AUTO_TEST_CASE(pause_rule_needs_an_unlikely_trial_below_the_price_past_its_grace) {
    EngineSettings s;
    s.min_run_s = 600;
    const StopEvidence e = evidence(0.8, 0.7, 0.92, 0.9, 0.1);
    const PauseOutlook o = pause_outlook(e, 0.6, 1.0, 1, 1.0, s);
    auto r = pause_rule(e, o, 1e-6, 2e-6, 1000, s);
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST((r->code == ReasonCode::pause_unlikely));
    BOOST_TEST(describe(Decision::pause, *r).find("paused with its checkpoint") != std::string::npos);
    BOOST_TEST(!pause_rule(e, o, 3e-6, 2e-6, 1000, s).has_value());  // worth its price
    BOOST_TEST(!pause_rule(e, o, 1e-6, 2e-6, 100, s).has_value());   // in its grace
    StopEvidence likely = e;
    likely.win_probability = likely.own_win_probability = 0.4;
    BOOST_TEST(!pause_rule(likely, o, 1e-6, 2e-6, 1000, s).has_value());
    // sibling_jumps: a bound moved for its siblings' later jumps keeps a trial from being stopped,
    // not from being paused; the pause reads its own chance
    StopEvidence saved = e;
    saved.win_probability = 0.4;
    auto r2 = pause_rule(saved, o, 1e-6, 2e-6, 1000, s);
    BOOST_REQUIRE(r2.has_value());
    BOOST_TEST(r2->a == 0.1);
    StopEvidence own_likely = e;
    own_likely.own_win_probability = 0.4;
    BOOST_TEST(!pause_rule(own_likely, o, 1e-6, 2e-6, 1000, s).has_value());
    StopEvidence early = e;
    early.last_step = 300;  // 5 % of its run
    BOOST_TEST(!pause_rule(early, o, 1e-6, 2e-6, 1000, s).has_value());
    StopEvidence leader = e;
    leader.leader = true;
    BOOST_TEST(!pause_rule(leader, o, 1e-6, 2e-6, 1000, s).has_value());
    s.pause_probability = 0.0;
    BOOST_TEST(!pause_enabled(0, s));
    s.pause_probability = 0.2;
    BOOST_TEST(pause_enabled(0, s));
    BOOST_TEST(!pause_enabled(1, s));  // pause_max 1
}

// pause_idle_utility: a trial the pause rule picked is paused without anyone waiting only past
// hopeless_min_progress, at a utility of at most that fraction of the price, and when even its
// optimistic utility is below the price (the resume rule would not resume it at once).
BOOST_AUTO_TEST_CASE(idle_pause_needs_next_to_no_utility_past_hopeless_min_progress) {
    EngineSettings s;
    s.min_run_s = 600;
    StopEvidence e = evidence(0.6, 0.55, 0.65, 0.9, 0.05);
    e.last_step = 3000;  // half its run
    const PauseOutlook o = pause_outlook(e, 0.5, 1.0, 1, 1.0, s);
    BOOST_REQUIRE(!o.can_matter);
    const double price = 2.0 * o.optimistic_utility + 1e-9;  // even the bound is not worth it
    const auto unlikely = pause_rule(e, o, 0.05 * price, price, 1000, s);
    BOOST_REQUIRE(unlikely.has_value());
    BOOST_TEST(!idle_pause_rule(e, o, *unlikely, s).has_value());  // off by default
    s.pause_idle_utility = 0.1;
    const auto idle = idle_pause_rule(e, o, *unlikely, s);
    BOOST_REQUIRE(idle.has_value());
    BOOST_TEST((idle->code == ReasonCode::pause_idle));
    BOOST_TEST(idle->a == unlikely->a);
    BOOST_TEST(
        describe(Decision::pause, *idle).find("although no trial waits for its GPUs") != std::string::npos,
        describe(Decision::pause, *idle));
    // more than a tenth of the price: it waits for a pending trial to need its GPUs
    const auto worth = pause_rule(e, o, 0.2 * price, price, 1000, s);
    BOOST_REQUIRE(worth.has_value());
    BOOST_TEST(!idle_pause_rule(e, o, *worth, s).has_value());
    // an optimistic bound worth the price: the resume rule would resume it at once
    const auto cheap = pause_rule(e, o, 0.05 * price, 0.5 * o.optimistic_utility, 1000, s);
    BOOST_REQUIRE(cheap.has_value());
    BOOST_TEST(!idle_pause_rule(e, o, *cheap, s).has_value());
    // before hopeless_min_progress (0.35): a late bloomer's plateau is left alone
    StopEvidence early = e;
    early.last_step = 1800;  // 30 % of its run
    const auto r_early = pause_rule(early, o, 0.05 * price, price, 1000, s);
    BOOST_REQUIRE(r_early.has_value());
    BOOST_TEST(!idle_pause_rule(early, o, *r_early, s).has_value());
    // only what the pause rule picked
    Reason other = *unlikely;
    other.code = ReasonCode::explore_first;
    BOOST_TEST(!idle_pause_rule(e, o, other, s).has_value());
    s.pause_idle_utility = 1.5;
    BOOST_TEST(!validate(s).ok());
}

BOOST_AUTO_TEST_CASE(a_stop_is_final_only_when_the_optimistic_bound_cannot_matter) {
    EngineSettings s;
    const StopEvidence can = evidence(0.8, 0.7, 0.92, 0.9, 0.01);
    BOOST_TEST(!stop_is_final(can, pause_outlook(can, 0.6, 1.0, 1, 1.0, s), s));
    StopEvidence cannot = evidence(0.6, 0.55, 0.65, 0.9, 0.001);
    const PauseOutlook o = pause_outlook(cannot, 0.5, 1.0, 1, 1.0, s);
    // a third of its run: before any hopeless rule may judge it (hopeless_min_progress 0.35), so
    // a trial paused early on a plateau (a late bloomer's) stays paused rather than stopped
    BOOST_TEST(!stop_is_final(cannot, o, s));
    // ... unless the evidence is decisive (a chance below early_stop_probability, 0.001)
    StopEvidence decisive = cannot;
    decisive.win_probability = 0.0005;
    BOOST_TEST(stop_is_final(decisive, o, s));
    s.early_stop_probability = 0.0;
    BOOST_TEST(!stop_is_final(decisive, o, s));
    s.early_stop_probability = 0.001;
    cannot.last_step = 3000;  // half its run
    BOOST_TEST(stop_is_final(cannot, o, s));
    // never for the sweep's leader: its forecast below the runner-up lags its own curve
    StopEvidence leading = cannot;
    leading.leader = true;
    BOOST_TEST(!stop_is_final(leading, o, s));
    leading.win_probability = 0.0005;  // not even decisively
    BOOST_TEST(!stop_is_final(leading, o, s));
    const Reason r = cannot_matter_reason(cannot, o);
    BOOST_TEST(describe(Decision::terminate, r).find("even the optimistic bound 0.65") != std::string::npos,
               describe(Decision::terminate, r));
}

BOOST_AUTO_TEST_CASE(resume_order_follows_the_key_within_the_budget) {
    std::vector<PauseCandidate> c = {{0, 2, 0.1}, {1, 1, 0.5}, {2, 1, 0.3}, {3, 4, 0.9}};
    const auto chosen = choose_by_key(c, 3);
    BOOST_TEST(chosen == (std::vector<std::size_t>{1, 2}), boost::test_tools::per_element());
    BOOST_TEST(choose_by_key(c, 0).empty());
    BOOST_TEST(choose_by_key(c, 8) == (std::vector<std::size_t>{3, 1, 2, 0}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(engine_pauses_an_unlikely_trial_only_when_pending_trials_need_its_gpus) {
    EngineSettings s;
    s.min_run_s = 0;
    s.hopeless_probability = 0.0;  // the pause rule alone
    s.min_expected_gain = 0.0;
    s.pause_probability = 0.5;
    Engine e = Engine::create(s).value();
    const auto good = rising(30, 0.95), meh = rising(30, 0.90, 0.7), fresh = rising(2, 0.9);
    std::vector<JobView> jobs = {view(1, "g", good), view(2, "g", meh),
                                 view(3, "g", fresh, JobState::pending)};
    std::vector<Assessment> out;
    // two GPUs, both busy, a pending trial wants one: the unlikely one is paused
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 2), out).ok());
    BOOST_TEST((out[2].decision == Decision::run));
    BOOST_TEST((out[1].decision == Decision::pause), explain(out[1]));
    BOOST_TEST((out[1].reason.code == ReasonCode::pause_unlikely));
    BOOST_TEST((out[0].decision != Decision::pause));
    // no pending demand: nothing is paused (GPUs freed would idle)
    jobs.pop_back();
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1001, 2), out).ok());
    BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));
    // off: never
    s.pause_probability = 0.0;
    Engine off = Engine::create(s).value();
    jobs.push_back(view(3, "g", fresh, JobState::pending));
    BOOST_REQUIRE(off.evaluate(jobs, cluster(1000, 2), out).ok());
    BOOST_TEST((out[1].decision != Decision::pause));
}

// A job array with a task limit (sbatch --array=0-31%2) on a cluster with GPUs to spare: its
// running tasks hold its slots, and its waiting tasks start only when one ends. An unlikely running
// task is paused for a waiting task of its array although its utility is above the GPU price (GPUs
// are not short, the slot is), one per waiting task, least likely first; not the leader, not for a
// task that is not held back by the limit (GPUs are free for it), not for another array's task.
// A paused task is not resumed while its array has no slot for it.
BOOST_AUTO_TEST_CASE(an_unlikely_task_gives_its_slot_to_a_waiting_task_of_its_throttled_array) {
    EngineSettings s;
    s.min_run_s = 0;
    s.hopeless_probability = 0.0;  // the pause rule alone
    s.min_expected_gain = 0.0;
    s.pause_probability = 0.5;
    s.price_lower_quantile = 0.0;  // the price floor at the least utility seen: every trial meets it
    s.price_smoothing = 1.0;
    Engine e = Engine::create(s).value();
    const auto good = rising(30, 0.95), meh = rising(30, 0.90, 0.7), worse = rising(30, 0.85, 0.7);
    const auto none = std::vector<CurvePoint>{}, flat = rising(30, 0.5, 0.05);
    // another sweep's lone trial on 30 GPUs: the least utility per GPU-second, so the price floor
    // (and, on a cluster this empty, the price) is below g's unlikely task's utility
    std::vector<JobView> jobs = {view(1, "g", good), view(2, "g", meh), view(3, "g", none, JobState::pending),
                                 view(9, "h", flat)};
    for (JobView& j : jobs) j.array_job_id = 100;
    jobs[3].array_job_id = 0;
    jobs[3].gpus = 30;
    std::vector<Assessment> out;
    // 256 GPUs, 32 busy: the waiting task could start on a free GPU, nothing is paused
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 256), out).ok());
    BOOST_TEST((out[2].decision == Decision::run), explain(out[2]));
    BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));
    // the array runs at its limit: the unlikely task gives its slot, the leader keeps its own
    jobs[2].throttled = true;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1001, 256), out).ok());
    BOOST_TEST((out[1].decision == Decision::pause), explain(out[1]));
    BOOST_TEST((out[1].reason.code == ReasonCode::pause_slot), explain(out[1]));
    BOOST_TEST(out[1].reason.c == 1.0);
    BOOST_TEST(explain(out[1]).find("wait for the slot it holds") != std::string::npos, explain(out[1]));
    BOOST_TEST((out[0].decision != Decision::pause), explain(out[0]));
    // it was not below the GPU price: that rule alone would not pause it
    BOOST_TEST(out[1].utility > out[1].price, explain(out[1]));
    // a waiting task of another array: no slot of this one frees it
    jobs[2].array_job_id = 200;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1002, 256), out).ok());
    BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));
    // not in an array at all (array 0): never
    for (JobView& j : jobs) j.array_job_id = 0;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1003, 256), out).ok());
    BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));
    // two unlikely tasks, one waiting task: the less likely one is paused, the other goes on
    for (JobView& j : jobs) j.array_job_id = 100;
    jobs[3].array_job_id = 0;
    jobs.insert(jobs.begin() + 2, view(4, "g", worse));
    jobs[2].array_job_id = 100;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1004, 256), out).ok());
    BOOST_TEST((out[2].decision == Decision::pause), explain(out[2]));
    BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));
    // ... and two waiting tasks (one its array's record of pending tasks): both are paused
    jobs.push_back(view(5, "g", none, JobState::pending));
    jobs.back().array_job_id = 100;
    jobs.back().throttled = true;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1005, 256), out).ok());
    BOOST_TEST((out[1].decision == Decision::pause), explain(out[1]));
    BOOST_TEST((out[2].decision == Decision::pause), explain(out[2]));
    BOOST_TEST((out[0].decision != Decision::pause), explain(out[0]));

    // a full cluster: a waiting task of a throttled array could not use a GPU another trial freed,
    // so no trial outside its array is paused for it; unthrottled, the pause rule pauses one as ever
    std::vector<JobView> full = {view(1, "g", good), view(2, "g", meh),
                                 view(3, "g", none, JobState::pending)};
    full[2].array_job_id = 400;
    full[2].throttled = true;
    Engine busy = Engine::create(s).value();
    BOOST_REQUIRE(busy.evaluate(full, cluster(1000, 2), out).ok());
    BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));
    full[2].throttled = false;
    BOOST_REQUIRE(busy.evaluate(full, cluster(1001, 2), out).ok());
    BOOST_TEST((out[1].decision == Decision::pause), explain(out[1]));
    BOOST_TEST((out[1].reason.code == ReasonCode::pause_unlikely), explain(out[1]));

    // a paused task whose array runs at its limit stays paused; with a slot free it resumes
    const auto late = rising(20, 1.2, 1.5);
    std::vector<JobView> paused = {view(1, "g", good), view(2, "g", late, JobState::pending)};
    for (JobView& j : paused) j.array_job_id = 300;
    paused[1].paused = true;
    paused[1].pauses = 1;
    paused[1].throttled = true;
    Engine thaw = Engine::create(s).value();
    BOOST_REQUIRE(thaw.evaluate(paused, cluster(1000, 8), out).ok());
    BOOST_TEST((out[1].decision == Decision::pause), explain(out[1]));
    BOOST_TEST((out[1].reason.code == ReasonCode::paused_no_slot), explain(out[1]));
    BOOST_TEST(explain(out[1]).find("task limit") != std::string::npos, explain(out[1]));
    paused[1].throttled = false;
    BOOST_REQUIRE(thaw.evaluate(paused, cluster(1001, 8), out).ok());
    BOOST_TEST((out[1].decision == Decision::run), explain(out[1]));
    BOOST_TEST((out[1].reason.code == ReasonCode::resumed), explain(out[1]));
}

// The engine with pause_idle_utility: the same round with nobody waiting pauses a trial far behind
// past hopeless_min_progress whose utility is next to nothing; the leader runs on; without the
// setting (or before hopeless_min_progress) nothing is paused.
BOOST_AUTO_TEST_CASE(engine_pauses_a_trial_buying_next_to_nothing_though_nobody_waits) {
    EngineSettings s;
    s.min_run_s = 0;
    s.hopeless_probability = 0.0;  // the pause rules alone
    s.min_expected_gain = 0.0;
    s.pause_probability = 0.5;
    s.price_lower_quantile = 0.98;  // a price floor at the best utility seen
    s.price_upper_quantile = 0.99;
    s.price_smoothing = 1.0;
    s.price_min_ratio = 1.01;
    const auto good = rising(40, 0.95), flat = rising(40, 0.6, 0.05), flat_early = rising(20, 0.6, 0.05);
    auto round = [&](const EngineSettings& settings, const std::vector<CurvePoint>& pts) {
        Engine e = Engine::create(settings).value();
        std::vector<JobView> jobs = {view(1, "g", good), view(2, "g", pts)};
        std::vector<Assessment> out;
        for (int r = 0; r < 3; ++r) BOOST_REQUIRE(e.evaluate(jobs, cluster(1000 + r, 4), out).ok());
        BOOST_TEST((out[0].decision != Decision::pause), explain(out[0]));
        return out[1];
    };
    const Assessment off = round(s, flat);  // 4,000 of 6,000 steps, nobody waits
    BOOST_TEST((off.decision != Decision::pause), explain(off));
    EngineSettings idle = s;
    idle.pause_idle_utility = 0.1;
    const Assessment paused = round(idle, flat);
    BOOST_TEST((paused.decision == Decision::pause), explain(paused));
    BOOST_TEST((paused.reason.code == ReasonCode::pause_idle), explain(paused));
    const Assessment early = round(idle, flat_early);  // 2,000 of 6,000: under hopeless_min_progress
    BOOST_TEST((early.decision != Decision::pause), explain(early));
}

BOOST_AUTO_TEST_CASE(explore_first_pauses_a_follower_while_its_sweeps_untried_trials_wait) {
    // Two running trials of sweep g, nearly tied (no rule would pause or stop either), 2,000 of
    // 6,000 steps done; g's third trial has not run yet and the cluster is full.
    const auto first = rising(20, 0.95), second = rising(20, 0.949), none = std::vector<CurvePoint>{};
    const auto other = rising(20, 0.9);
    std::vector<JobView> jobs = {view(1, "g", first), view(2, "g", second),
                                 view(3, "g", none, JobState::pending)};
    std::vector<Assessment> out;
    EngineSettings s;
    s.min_run_s = 0;
    Engine defaults = Engine::create(s).value();  // off by default
    BOOST_REQUIRE(defaults.evaluate(jobs, cluster(1000, 2), out).ok());
    BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));

    s.explore_first_progress = 0.3;
    Engine e = Engine::create(s).value();
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 2), out).ok());
    BOOST_TEST((out[0].decision != Decision::pause), explain(out[0]));  // the leader goes on
    BOOST_TEST((out[1].decision == Decision::pause), explain(out[1]));
    BOOST_TEST((out[1].reason.code == ReasonCode::explore_first));
    BOOST_TEST(out[1].reason.a == 1.0);
    BOOST_TEST(out[1].reason.b == 2000.0 / 6000.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(explain(out[1]).find("its sweep's untried trials wait") != std::string::npos, explain(out[1]));
    BOOST_TEST((out[2].decision == Decision::run));

    // not before explore_first_progress of its run
    s.explore_first_progress = 0.4;
    Engine later = Engine::create(s).value();
    BOOST_REQUIRE(later.evaluate(jobs, cluster(1000, 2), out).ok());
    BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));
    // not when GPUs are free for the untried trial
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 3), out).ok());
    BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));
    // not for another sweep's untried trial (nor another user's: sweeps are per user)
    jobs[2] = view(3, "h", none, JobState::pending);
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 2), out).ok());
    BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));
    // not once the pending member has reported (it was tried)
    jobs[2] = view(3, "g", other, JobState::pending);
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 2), out).ok());
    BOOST_TEST((out[1].reason.code != ReasonCode::explore_first), explain(out[1]));
    // not with its pause spent
    jobs[2] = view(3, "g", none, JobState::pending);
    jobs[1].pauses = s.pause_max;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 2), out).ok());
    BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));
}

BOOST_AUTO_TEST_CASE(engine_turns_a_stop_into_a_pause_while_the_bound_can_matter) {
    EngineSettings s;
    s.min_run_s = 0;
    s.hopeless_probability = 0.3;  // the hopeless rule fires on a trial whose interval reaches the best
    s.hopeless_min_progress = 0.0;
    Engine e = Engine::create(s).value();
    const auto good = rising(30, 0.95), close = rising(30, 0.93, 0.9);
    std::vector<JobView> jobs = {view(1, "g", good), view(2, "g", close)};
    jobs[1].has_hopeless_action = true;
    jobs[1].hopeless_action = HopelessAction::terminate;
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 8), out).ok());
    BOOST_REQUIRE((out[1].state == TrialState::hopeless));
    const bool bound_beats = out[1].prediction.upper > out[0].prediction.value - 1.0;  // informative only
    (void)bound_beats;
    BOOST_TEST((out[1].decision == Decision::pause || out[1].decision == Decision::terminate));
    // once paused (pause_max reached), the same trial is stopped as without pause
    jobs[1].pauses = 1;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1001, 8), out).ok());
    BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
    // far below the best: final at once
    const auto poor = rising(30, 0.55);
    jobs[1].points = poor;
    jobs[1].pauses = 0;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1002, 8), out).ok());
    BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
}

// A trial the host cannot requeue (sbatch --no-requeue, or not a batch job) is never paused: in
// the rounds that pause its requeueable twin (unlikely, explore first, a stop turned into a pause)
// it runs on or is stopped; a final stop whose action is requeue-and-hold only marks it
// (preemptable), while a cancel stays a cancel.
BOOST_AUTO_TEST_CASE(a_trial_the_host_cannot_requeue_is_never_paused) {
    EngineSettings s;
    s.min_run_s = 0;
    s.hopeless_probability = 0.0;
    s.min_expected_gain = 0.0;
    s.pause_probability = 0.5;
    std::vector<Assessment> out;
    {
        Engine e = Engine::create(s).value();
        const auto good = rising(30, 0.95), meh = rising(30, 0.90, 0.7), fresh = rising(2, 0.9);
        std::vector<JobView> jobs = {view(1, "g", good), view(2, "g", meh),
                                     view(3, "g", fresh, JobState::pending)};
        BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 2), out).ok());
        BOOST_REQUIRE((out[1].decision == Decision::pause));  // the requeueable twin
        jobs[1].requeueable = false;
        BOOST_REQUIRE(e.evaluate(jobs, cluster(1001, 2), out).ok());
        BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));
        BOOST_TEST((out[1].decision != Decision::requeue_hold), explain(out[1]));
    }
    {
        EngineSettings ef;
        ef.min_run_s = 0;
        ef.explore_first_progress = 0.3;
        Engine e = Engine::create(ef).value();
        const auto first = rising(20, 0.95), second = rising(20, 0.949), none = std::vector<CurvePoint>{};
        std::vector<JobView> jobs = {view(1, "g", first), view(2, "g", second),
                                     view(3, "g", none, JobState::pending)};
        BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 2), out).ok());
        BOOST_REQUIRE((out[1].decision == Decision::pause));
        jobs[1].requeueable = false;
        BOOST_REQUIRE(e.evaluate(jobs, cluster(1001, 2), out).ok());
        BOOST_TEST((out[1].decision != Decision::pause), explain(out[1]));
        BOOST_TEST((out[1].reason.code != ReasonCode::explore_first), explain(out[1]));
    }
    {
        EngineSettings h;
        h.min_run_s = 0;
        h.hopeless_probability = 0.3;
        h.hopeless_min_progress = 0.0;
        Engine e = Engine::create(h).value();
        const auto good = rising(30, 0.95), poor = rising(30, 0.55);
        std::vector<JobView> jobs = {view(1, "g", good), view(2, "g", poor)};
        BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 8), out).ok());
        BOOST_REQUIRE((out[1].decision == Decision::requeue_hold));  // the site default
        jobs[1].requeueable = false;
        BOOST_REQUIRE(e.evaluate(jobs, cluster(1001, 8), out).ok());
        BOOST_TEST((out[1].state == TrialState::hopeless), explain(out[1]));
        BOOST_TEST((out[1].decision == Decision::preemptable), explain(out[1]));
        jobs[1].has_hopeless_action = true;
        jobs[1].hopeless_action = HopelessAction::terminate;
        BOOST_REQUIRE(e.evaluate(jobs, cluster(1002, 8), out).ok());
        BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
    }
}

// A trial resumed from a pause is not stopped on its forecast within its grace (min_run) after the
// restart: the resume bought new evidence at a restart's cost, and a verdict on the same evidence
// a few points on would throw both away. After the grace it is judged as any; a diverged curve is
// stopped at once.
BOOST_AUTO_TEST_CASE(a_resumed_trial_keeps_its_grace_before_a_verdict_on_its_forecast) {
    EngineSettings s;
    s.min_run_s = 600;
    Engine e = Engine::create(s).value();
    const auto good = rising(30, 0.95), poor = rising(30, 0.5);
    std::vector<JobView> jobs = {view(1, "g", good), view(2, "g", poor)};
    jobs[1].has_hopeless_action = true;
    jobs[1].hopeless_action = HopelessAction::terminate;
    jobs[1].pauses = 1;         // paused once, resumed
    jobs[1].start_time = 5000;  // restarted at 5000
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5100, 8), out).ok());
    BOOST_TEST((out[1].decision == Decision::keep), explain(out[1]));
    BOOST_TEST((out[1].reason.code == ReasonCode::resumed_grace), explain(out[1]));
    BOOST_TEST(out[1].reason.a == 100.0);
    BOOST_TEST(out[1].reason.b == 600.0);
    BOOST_TEST(out[1].reason.c < s.hopeless_probability);  // its chance: hopeless on its forecast
    BOOST_TEST(explain(out[1]).find(
                   "resumed from pause 100 s ago: no verdict on its forecast before min_run 600 s") !=
                   std::string::npos,
               explain(out[1]));
    // its grace over: stopped as any hopeless trial
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5700, 8), out).ok());
    BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
    // started again without a new pause (its owner requeued it): no new grace
    jobs[1].start_time = 5800;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5850, 8), out).ok());
    BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
    // paused a second time and resumed: a grace again, for that run
    jobs[1].pauses = 2;
    jobs[1].start_time = 6000;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(6050, 8), out).ok());
    BOOST_TEST((out[1].reason.code == ReasonCode::resumed_grace), explain(out[1]));
    jobs[1].start_time = 6100;  // requeued by its owner within that grace: none for the new run
    BOOST_REQUIRE(e.evaluate(jobs, cluster(6150, 8), out).ok());
    BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
    // never paused: no such grace (a hopeless trial is stopped whenever it started)
    Engine fresh = Engine::create(s).value();
    jobs[1].pauses = 0;
    jobs[1].start_time = 5000;
    BOOST_REQUIRE(fresh.evaluate(jobs, cluster(5100, 8), out).ok());
    BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
    // a diverged curve is stopped at once, resumed or not
    Engine other = Engine::create(s).value();
    auto diverged = poor;
    diverged.back().metric = std::numeric_limits<double>::quiet_NaN();
    jobs[1].points = diverged;
    jobs[1].pauses = 1;
    BOOST_REQUIRE(other.evaluate(jobs, cluster(5101, 8), out).ok());
    BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
    BOOST_TEST((out[1].reason.code == ReasonCode::diverged), explain(out[1]));
}

// Two paused members of a sweep whose other members all ended are each its last open question:
// both are released, and neither is judged again on its forecast before it restarts. Before, once
// both were released neither was the last any more (the other no longer paused): `pollux` seed 6,
// protect_leader=no, with the behind track pausing a second member, lost a sweep's best so,
// cancelled by the near-tie rule a round after its release, before it restarted.
BOOST_AUTO_TEST_CASE(two_trials_released_as_their_sweeps_last_are_not_judged_before_they_restart) {
    EngineSettings s;
    s.min_run_s = 600;
    const auto good = rising(60, 0.95), poor = rising(30, 0.951), poorer = rising(30, 0.95);
    Engine e = Engine::create(s).value();
    JobView leader = view(1, "g", good);
    std::vector<JobView> jobs = {view(2, "g", poor, JobState::pending),
                                 view(3, "g", poorer, JobState::pending)};
    for (JobView& v : jobs) {
        v.paused = true;
        v.pauses = 1;
        v.has_hopeless_action = true;
        v.hopeless_action = HopelessAction::terminate;
    }
    e.record_ended({leader});  // the sweep's best ended: the two paused members are all that is left
    std::vector<Assessment> out;
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 8), out).ok());
    for (const Assessment& a : out) BOOST_TEST((a.decision == Decision::run), explain(a));  // both released
    for (JobView& v : jobs) v.paused = false;  // released, not restarted yet
    BOOST_REQUIRE(e.evaluate(jobs, cluster(5060, 8), out).ok());
    for (const Assessment& a : out) {
        BOOST_TEST((a.state == TrialState::hopeless), explain(a));  // its forecast says so
        BOOST_TEST((a.decision == Decision::run), explain(a));
        BOOST_TEST((a.reason.code == ReasonCode::resumed_pending), explain(a));
    }
    // a member released while another member still ran is judged as before
    Engine other = Engine::create(s).value();
    std::vector<JobView> with_leader = {view(1, "g", good), jobs[0]};
    BOOST_REQUIRE(other.evaluate(with_leader, cluster(5060, 8), out).ok());
    BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
}

// A trial released from its pause as its sweep's last open question (every other member paused
// or gone) is not judged again on the forecast it was resumed on while it waits to restart: it
// runs, and its resumed run keeps its grace. Pollux seed 6 lost a sweep's best so (resumed, then
// cancelled by the near-tie rule a round later, before it restarted). While its sweep still runs,
// it is judged as before; a diverged curve is stopped at once.
BOOST_AUTO_TEST_CASE(a_trial_resumed_as_its_sweeps_last_is_not_judged_before_it_restarts) {
    EngineSettings s;
    s.min_run_s = 600;
    const auto good = rising(30, 0.95), poor = rising(30, 0.5);
    auto jobs_with = [&](bool sibling_paused) {
        std::vector<JobView> jobs = {view(1, "g", good), view(2, "g", poor, JobState::pending)};
        jobs[0].paused = sibling_paused;
        if (sibling_paused) jobs[0].pauses = 1;
        jobs[1].has_hopeless_action = true;
        jobs[1].hopeless_action = HopelessAction::terminate;
        jobs[1].pauses = 1;  // paused once, released, not restarted yet
        return jobs;
    };
    std::vector<Assessment> out;
    {
        Engine e = Engine::create(s).value();
        std::vector<JobView> jobs = jobs_with(true);
        BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 8), out).ok());
        BOOST_TEST((out[1].state == TrialState::hopeless), explain(out[1]));  // its forecast says so
        BOOST_TEST((out[1].decision == Decision::run), explain(out[1]));
        BOOST_TEST((out[1].reason.code == ReasonCode::resumed_pending), explain(out[1]));
        BOOST_TEST(out[1].reason.b == 600.0);
        BOOST_TEST(out[1].reason.c < s.hopeless_probability);
        BOOST_TEST(explain(out[1]).find("resumed from pause, not restarted yet: no verdict on its forecast "
                                        "before it ran min_run 600 s") != std::string::npos,
                   explain(out[1]));
        // restarted: its grace (resumed_grace) for min_run, then judged as any
        jobs[1].state = JobState::running;
        jobs[1].start_time = 5060;
        BOOST_REQUIRE(e.evaluate(jobs, cluster(5100, 8), out).ok());
        BOOST_TEST((out[1].reason.code == ReasonCode::resumed_grace), explain(out[1]));
        BOOST_TEST((out[1].decision == Decision::keep), explain(out[1]));
        BOOST_REQUIRE(e.evaluate(jobs, cluster(5700, 8), out).ok());
        BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
        // requeued after that run (by its owner): pending again, no new pass before a verdict
        jobs[1].state = JobState::pending;
        jobs[1].start_time = 0;
        BOOST_REQUIRE(e.evaluate(jobs, cluster(5760, 8), out).ok());
        BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
    }
    {
        // its sweep's leader still runs: judged on its forecast as before
        Engine e = Engine::create(s).value();
        std::vector<JobView> jobs = jobs_with(false);
        BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 8), out).ok());
        BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
    }
    {
        // a diverged curve is stopped at once, its sweep's last or not
        Engine e = Engine::create(s).value();
        std::vector<JobView> jobs = jobs_with(true);
        auto diverged = poor;
        diverged.back().metric = std::numeric_limits<double>::quiet_NaN();
        jobs[1].points = diverged;
        BOOST_REQUIRE(e.evaluate(jobs, cluster(5000, 8), out).ok());
        BOOST_TEST((out[1].decision == Decision::terminate), explain(out[1]));
        BOOST_TEST((out[1].reason.code == ReasonCode::diverged), explain(out[1]));
    }
}

BOOST_AUTO_TEST_CASE(engine_resumes_a_paused_trial_when_gpus_are_free_and_stops_one_that_cannot_matter) {
    EngineSettings s;
    s.min_run_s = 0;
    Engine e = Engine::create(s).value();
    // the late bloomer's forecast ends above the leader's best; the poor one's far below
    const auto good = rising(30, 0.95), late = rising(20, 1.2, 1.5), poor = rising(30, 0.5);
    std::vector<JobView> jobs = {view(1, "g", good), view(2, "g", late, JobState::pending),
                                 view(3, "g", poor, JobState::pending)};
    jobs[1].paused = jobs[2].paused = true;
    jobs[1].pauses = jobs[2].pauses = 1;
    jobs[2].has_hopeless_action = true;
    jobs[2].hopeless_action = HopelessAction::terminate;
    std::vector<Assessment> out;
    // one GPU, busy: the late bloomer stays paused (no room), the poor one is stopped for good
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 1), out).ok());
    BOOST_TEST((out[1].decision == Decision::pause), explain(out[1]));
    BOOST_TEST((out[2].decision == Decision::terminate), explain(out[2]));
    BOOST_TEST((out[2].reason.code == ReasonCode::bound_cannot_matter));
    // GPUs free up (the leader's finished): the late bloomer resumes
    jobs.erase(jobs.begin());
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1001, 4), out).ok());
    BOOST_TEST((out[0].decision == Decision::run), explain(out[0]));
    BOOST_TEST((out[0].reason.code == ReasonCode::resumed));
    BOOST_TEST(explain(out[0]).find("resumed from pause") != std::string::npos);
    // a paused trial does not count towards the load
    BOOST_TEST(e.last_round().utilisation == 0.0);
}

// A paused trial past hopeless_min_progress whose optimistic bound is behind its sweep's best is
// not resumed while the sweep's other trials run, however many GPUs are free (pollux seed 0: an
// ImageNet trial resumed at a price that fell to its optimistic utility, ran 76 minutes and was
// stopped at a chance of 0.017). Before hopeless_min_progress it resumes as before; once it is
// its sweep's last it resumes too.
BOOST_AUTO_TEST_CASE(a_paused_trial_whose_bound_is_behind_waits_for_its_sweeps_leaders) {
    StopEvidence e = evidence(0.6, 0.55, 0.65, 0.9, 0.05);
    EngineSettings s;
    const PauseOutlook behind = pause_outlook(e, 0.5, 1.0, 1, 1.0, s);
    BOOST_TEST(!waits_for_leaders(e, behind, s));  // a third of its run
    e.last_step = 3000;
    BOOST_TEST(waits_for_leaders(e, behind, s));
    const StopEvidence can = evidence(0.8, 0.7, 0.92, 0.9, 0.1);
    StopEvidence can_late = can;
    can_late.last_step = 3000;
    BOOST_TEST(!waits_for_leaders(can_late, pause_outlook(can_late, 0.6, 1.0, 1, 1.0, s), s));
    StopEvidence no_best = e;
    no_best.best_other = std::numeric_limits<double>::quiet_NaN();
    BOOST_TEST(!waits_for_leaders(no_best, pause_outlook(no_best, 0.5, 1.0, 1, 1.0, s), s));

    s.min_run_s = 0;
    s.hopeless_probability = 0.0;  // never final on its chance: the trial stays a paused one
    s.early_stop_probability = 0.0;
    s.min_expected_gain = 0.0;
    auto round = [&](int points, bool leader_ends) {
        Engine engine = Engine::create(s).value();
        static std::vector<std::vector<CurvePoint>> curves;
        curves = {rising(40, 0.95), rising(points, 0.5)};
        std::vector<JobView> jobs = {view(2, "g", curves[1], JobState::pending), view(1, "g", curves[0])};
        jobs[0].paused = true;
        jobs[0].pauses = 1;
        std::vector<Assessment> out;
        BOOST_REQUIRE(engine.evaluate(jobs, cluster(1000, 16), out).ok());
        if (leader_ends) {
            jobs.pop_back();
            BOOST_REQUIRE(engine.evaluate(jobs, cluster(1001, 16), out).ok());
        }
        return out[0];
    };
    const Assessment waits = round(30, false);  // half its run, 15 GPUs free
    BOOST_TEST((waits.decision == Decision::pause), explain(waits));
    BOOST_TEST((waits.reason.code == ReasonCode::paused_bound_behind), explain(waits));
    BOOST_TEST(explain(waits).find("not resumed while its sweep's other trials run") != std::string::npos,
               explain(waits));
    const Assessment early = round(20, false);  // a third of its run
    BOOST_TEST((early.reason.code != ReasonCode::paused_bound_behind), explain(early));
    const Assessment last = round(30, true);  // its sweep's last: nothing left to wait for
    BOOST_TEST((last.decision == Decision::run), explain(last));
}

// milestone_stop_unpredicted (ASHA's rule on the ranking alone, before a curve can be
// extrapolated): with pause on, a trial behind at a milestone is paused, not stopped (nothing says
// it cannot matter); once resumed it is not stopped again at the milestone it was paused at (it
// gives way instead); with pause off the rule stops it as before.
BOOST_AUTO_TEST_CASE(behind_at_a_milestone_too_early_to_predict_is_paused_not_stopped) {
    EngineSettings s;
    s.min_run_s = 0;
    s.milestone_stop_unpredicted = true;
    auto round = [&](const EngineSettings& settings, std::uint32_t pauses) {
        Engine e = Engine::create(settings).value();
        static std::vector<std::vector<CurvePoint>> curves;  // JobView's points are a view
        curves.clear();
        for (std::uint32_t id = 1; id <= 6; ++id)  // 3 points each: too short to extrapolate
            curves.push_back(rising(3, id == 6 ? 0.75 : 0.9 + 0.01 * id));
        std::vector<JobView> jobs;
        for (std::uint32_t id = 1; id <= 6; ++id) jobs.push_back(view(id, "g", curves[id - 1]));
        jobs.back().pauses = pauses;
        if (pauses == 99) jobs.back().state = JobState::pending;  // requeued, or never started
        std::vector<Assessment> out;
        BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 6), out).ok());
        return out.back();
    };
    const Assessment paused = round(s, 0);
    BOOST_TEST((paused.decision == Decision::pause), to_string(paused.decision));
    BOOST_TEST((paused.state != TrialState::hopeless));
    BOOST_TEST(describe(paused.decision, paused.reason).find("too early to predict") != std::string::npos,
               describe(paused.decision, paused.reason));
    const Assessment resumed = round(s, 1);  // pause_max 1 used: paused once and resumed
    BOOST_TEST((resumed.decision == Decision::preemptable), to_string(resumed.decision));
    const Assessment waiting = round(s, 99);
    BOOST_TEST((waiting.decision == Decision::wait), to_string(waiting.decision));
    BOOST_TEST((waiting.state != TrialState::hopeless));
    EngineSettings no_pause = s;
    no_pause.pause_probability = 0.0;
    const Assessment stopped = round(no_pause, 0);
    BOOST_TEST((stopped.decision == Decision::terminate || stopped.decision == Decision::requeue_hold),
               to_string(stopped.decision));
    BOOST_TEST((stopped.state == TrialState::hopeless));
}

// A paused trial below the GPU price waits for its sweep's leaders; once every other member of
// its sweep has ended, nothing is left to wait for, and it resumes on GPUs nobody else wants
// whatever the price (held for ever on an idle cluster otherwise).
BOOST_AUTO_TEST_CASE(the_last_paused_member_of_a_sweep_resumes_on_free_gpus_whatever_the_price) {
    auto round = [](bool leader_still_runs) {
        EngineSettings s;
        s.min_run_s = 0;
        s.price_lower_quantile = 0.98;  // a price floor at the best utility seen: above the paused one's
        s.price_upper_quantile = 0.99;
        s.price_smoothing = 1.0;
        s.price_min_ratio = 1.01;
        Engine e = Engine::create(s).value();
        static std::vector<std::vector<CurvePoint>> curves;
        curves = {rising(30, 0.95), rising(30, 0.96, 0.5), rising(20, 0.93, 0.3)};
        std::vector<JobView> jobs = {view(2, "h", curves[1]), view(3, "g", curves[2], JobState::pending),
                                     view(1, "g", curves[0])};
        jobs[1].paused = true;
        jobs[1].pauses = 1;
        std::vector<Assessment> out;
        for (int r = 0; r < 3; ++r) BOOST_REQUIRE(e.evaluate(jobs, cluster(1000 + r, 16), out).ok());
        if (!leader_still_runs) {
            // the leader ends (its best stays its sweep's); the price has not moved yet
            jobs.pop_back();
            BOOST_REQUIRE(e.evaluate(jobs, cluster(1003, 16), out).ok());
        }
        return out[1];
    };
    const Assessment waits = round(true);
    BOOST_TEST((waits.decision == Decision::pause), explain(waits));
    BOOST_TEST(explain(waits).find("below the GPU price") != std::string::npos, explain(waits));
    const Assessment last = round(false);
    BOOST_TEST((last.decision == Decision::run), explain(last));
    // it says so, not that its utility reached the price (a live run said "utility 2.37e-06 is
    // at least the GPU price 3.06e-06")
    BOOST_TEST((last.reason.code == ReasonCode::resumed_idle), explain(last));
    BOOST_TEST(explain(last).find("on GPUs nobody else wants") != std::string::npos, explain(last));
    BOOST_TEST(explain(last).find("is below the GPU price") != std::string::npos, explain(last));
    BOOST_TEST(explain(last).find("at least") == std::string::npos, explain(last));
}

BOOST_AUTO_TEST_CASE(resumes_go_in_order_of_the_optimistic_bound) {
    EngineSettings s;
    s.min_run_s = 0;
    Engine e = Engine::create(s).value();
    const auto a = rising(20, 1.25, 1.5), b = rising(20, 1.3, 1.5);
    std::vector<JobView> jobs = {view(2, "g", a, JobState::pending), view(3, "g", b, JobState::pending)};
    jobs[0].paused = jobs[1].paused = true;
    std::vector<Assessment> out;
    // one free GPU: the higher bound goes first
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1000, 1, 0), out).ok());
    BOOST_REQUIRE(out[1].prediction.upper > out[0].prediction.upper);
    BOOST_TEST((out[1].decision == Decision::run), explain(out[1]));
    BOOST_TEST((out[0].decision == Decision::pause), explain(out[0]));
    BOOST_TEST((out[0].reason.code == ReasonCode::paused_no_room), explain(out[0]));
    // two free GPUs: both
    BOOST_REQUIRE(e.evaluate(jobs, cluster(1001, 2, 0), out).ok());
    BOOST_TEST((out[0].decision == Decision::run), explain(out[0]));
    BOOST_TEST((out[1].decision == Decision::run), explain(out[1]));
}

BOOST_AUTO_TEST_CASE(ledger_knows_a_pause_until_it_is_resumed) {
    ActionLedger l;
    BOOST_TEST(l.record({42, 1000}, {LedgerAction::paused, 5, 1001, 0}));
    // requeued by the pause: new submit time, one more restart
    BOOST_TEST(l.acted({42, 2000}, 1001, 1));
    BOOST_REQUIRE(l.latest({42, 2000}, 1001, 1) != nullptr);
    BOOST_TEST((l.latest({42, 2000}, 1001, 1)->action == LedgerAction::paused));
    BOOST_TEST(l.pauses({42, 2000}, 1001, 1) == 1u);
    // another user's job with the id: nothing
    BOOST_TEST(l.latest({42, 2000}, 1002, 1) == nullptr);
    BOOST_TEST(l.update({42, 2000}, 1001, 1, LedgerAction::resumed, 9));
    BOOST_TEST(!l.acted({42, 2000}, 1001, 1));  // may be stopped later
    BOOST_TEST(l.pauses({42, 2000}, 1001, 1) == 1u);
    BOOST_TEST(l.record({42, 2000}, {LedgerAction::cancelled, 12, 1001, 1}));
    BOOST_TEST(l.acted({42, 2000}, 1001, 1));
    BOOST_TEST((l.latest({42, 2000}, 1001, 1)->action == LedgerAction::cancelled));
    BOOST_TEST(!l.update({43, 1}, 1001, 0, LedgerAction::resumed, 9));
    // survives a restart (the file)
    auto back = ActionLedger::parse(l.serialize(), "test");
    BOOST_REQUIRE(back);
    BOOST_TEST(back->pauses({42, 2000}, 1001, 1) == 1u);
    BOOST_TEST((back->latest({42, 2000}, 1001, 1)->action == LedgerAction::cancelled));
}

BOOST_AUTO_TEST_SUITE_END()
