#define BOOST_TEST_MODULE test_sched_comment_refresh
#include <boost/test/unit_test.hpp>

#include "core/sched/comment_refresh.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(sched_comment_refresh)

BOOST_AUTO_TEST_CASE(a_line_never_written_or_missing_is_due) {
    const CommentMark never;
    BOOST_TEST(comment_due(never, TrialState::unknown, Decision::wait, 0, 100, 7, true));
    const CommentMark fresh{100, TrialState::promising, Decision::keep, 5};
    BOOST_TEST(!comment_due(fresh, TrialState::promising, Decision::keep, 5, 101, 7, true));
    BOOST_TEST(comment_due(fresh, TrialState::promising, Decision::keep, 5, 101, 7, false));
}

BOOST_AUTO_TEST_CASE(a_change_of_state_decision_or_curve_is_due) {
    const CommentMark mark{100, TrialState::promising, Decision::keep, 5};
    BOOST_TEST(comment_due(mark, TrialState::hopeless, Decision::keep, 5, 101, 7, true));
    BOOST_TEST(comment_due(mark, TrialState::promising, Decision::preemptable, 5, 101, 7, true));
    BOOST_TEST(comment_due(mark, TrialState::promising, Decision::keep, 6, 101, 7, true));
    // the GPU type it is valued on (or how) changed
    BOOST_TEST(comment_due(mark, TrialState::promising, Decision::keep, 5, 101, 7, true, 0x0203));
    CommentMark typed = mark;
    typed.gpu = 0x0203;
    BOOST_TEST(!comment_due(typed, TrialState::promising, Decision::keep, 5, 101, 7, true, 0x0203));
    // the rule changed, the decision not (preemptable, below the price -> leading its sweep):
    // preempt/explsched reads the rule from the line
    CommentMark ruled{100, TrialState::promising, Decision::preemptable, 5, 0, ReasonCode::below_price};
    BOOST_TEST(!comment_due(ruled, TrialState::promising, Decision::preemptable, 5, 101, 7, true, 0,
                            ReasonCode::below_price));
    BOOST_TEST(comment_due(ruled, TrialState::promising, Decision::preemptable, 5, 101, 7, true, 0,
                           ReasonCode::leads_sweep));
}

BOOST_AUTO_TEST_CASE(the_periodic_refresh_is_spread_by_job_id) {
    const CommentMark mark{1000, TrialState::promising, Decision::keep, 5};
    // Job 7 refreshes after 30 + 7 s, job 30 after 30 + 0 s.
    BOOST_TEST(!comment_due(mark, TrialState::promising, Decision::keep, 5, 1036, 7, true));
    BOOST_TEST(comment_due(mark, TrialState::promising, Decision::keep, 5, 1037, 7, true));
    BOOST_TEST(!comment_due(mark, TrialState::promising, Decision::keep, 5, 1029, 30, true));
    BOOST_TEST(comment_due(mark, TrialState::promising, Decision::keep, 5, 1030, 30, true));
}

BOOST_AUTO_TEST_SUITE_END()
