#define BOOST_TEST_MODULE test_sched_decision
#include <boost/test/unit_test.hpp>

#include "core/sched/decision.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(decision)

BOOST_AUTO_TEST_CASE(names) {
    BOOST_TEST(std::string(to_string(Decision::requeue_hold)) == "requeue-hold");
    BOOST_TEST(std::string(to_string(TrialState::promising)) == "promising");
    BOOST_TEST(std::string(to_string(ReasonCode::asha_behind)) == "asha_behind");
}

BOOST_AUTO_TEST_CASE(every_reason_reads_as_a_sentence_with_its_numbers) {
    Reason r;
    r.code = ReasonCode::below_price;
    r.a = 3.1e-6;
    r.b = 5.2e-6;
    r.c = 0.93;
    BOOST_TEST(describe(Decision::preemptable, r) ==
               "preemptable: utility 3.1e-06/GPU-s is below the GPU price 5.2e-06 at load 0.93");
    r = Reason{};
    r.code = ReasonCode::hopeless;
    r.a = 0.71;
    r.b = 0.69;
    r.c = 0.73;
    r.d = 0.8;
    r.e = 0.001;
    BOOST_TEST(describe(Decision::terminate, r) ==
               "terminate: predicted final 0.71 in [0.69, 0.73] cannot beat the group's best 0.8 "
               "(chance 0.001)");
    r = Reason{};
    r.code = ReasonCode::asha_promoted;
    r.a = 300;
    r.b = 1;
    r.c = 9;
    r.d = 3;
    BOOST_TEST(describe(Decision::keep, r) ==
               "keep: milestone step 300: rank 1 of 9 in its group, within the top 1/3");
    r.code = ReasonCode::in_grace;
    r.a = 120;
    r.b = 600;
    BOOST_TEST(describe(Decision::keep, r) == "keep: running 120 s, not preemptable before 600 s");
    for (ReasonCode code :
         {ReasonCode::nonexploratory, ReasonCode::invalid_report, ReasonCode::diverged, ReasonCode::finished,
          ReasonCode::too_few_points, ReasonCode::asha_behind, ReasonCode::above_price}) {
        Reason q;
        q.code = code;
        q.a = 1;
        q.b = 2;
        q.c = 3;
        q.d = 4;
        const std::string text = describe(Decision::run, q);
        BOOST_TEST(text.rfind("run: ", 0) == 0u);
        BOOST_TEST(text.size() > 12u);
    }
}

BOOST_AUTO_TEST_SUITE_END()
