#define BOOST_TEST_MODULE test_sched_policy
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>

#include "core/sched/policy.hpp"

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

BOOST_AUTO_TEST_CASE(without_utility_rank_decides) {
    EngineSettings s;
    Assessment plain = trial(1, 0.0, Decision::run, 500);
    plain.exploratory = false;
    BOOST_TEST(preempt_verdict(plain, trial(2, 1e-6, Decision::preemptable, 400), s).allowed);
    BOOST_TEST(!preempt_verdict(plain, trial(2, 1e-6, Decision::preemptable, 600), s).allowed);
}

BOOST_AUTO_TEST_SUITE_END()
