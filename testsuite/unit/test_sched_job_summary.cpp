#define BOOST_TEST_MODULE test_sched_job_summary
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "core/sched/job_summary.hpp"
#include "core/sched/policy.hpp"

using namespace explsched;

namespace {

Assessment sample() {
    Assessment a;
    a.key = TrialKey{42, 7};
    a.exploratory = true;
    a.priority = 12345;
    a.state = TrialState::promising;
    a.decision = Decision::preemptable;
    a.utility = 3.25e-6;
    a.price = 5.5e-6;
    a.prediction.value = 0.412;
    a.prediction.lower = 0.398;
    a.prediction.upper = 0.431;
    a.prediction.horizon = 2000;
    a.prediction.observed = 14;
    a.prediction.extrapolated = true;
    a.reason.code = ReasonCode::below_price;
    a.reason.a = a.utility;
    a.reason.b = a.price;
    a.reason.c = 0.93;
    return a;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sched_job_summary)

BOOST_AUTO_TEST_CASE(round_trip) {
    const std::string line = summary_line(sample(), 0.93, "group=lr metric=loss:min max_steps=2000");
    BOOST_TEST(
        line.rfind("explsched: group=lr metric=loss:min max_steps=2000 state=promising decision=preemptable",
                   0) == 0,
        line);
    auto s = parse_summary_line(line);
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
    BOOST_TEST((s->state == TrialState::promising));
    BOOST_TEST((s->decision == Decision::preemptable));
    BOOST_TEST(s->utility == 3.25e-6, boost::test_tools::tolerance(1e-3));
    BOOST_TEST(s->price == 5.5e-6, boost::test_tools::tolerance(1e-3));
    BOOST_TEST(s->load == 0.93, boost::test_tools::tolerance(1e-3));
    BOOST_TEST(s->prediction.value == 0.412, boost::test_tools::tolerance(1e-3));
    BOOST_TEST(s->prediction.lower == 0.398, boost::test_tools::tolerance(1e-3));
    BOOST_TEST(s->prediction.horizon == 2000.0);
    BOOST_TEST(s->prediction.observed == 14u);
    BOOST_TEST(s->prediction.extrapolated);
    BOOST_TEST(s->reason.find("below the GPU price") != std::string::npos, s->reason);
    BOOST_TEST(line.find(" code=below_price reason=") != std::string::npos, line);
    BOOST_TEST((s->reason_code == ReasonCode::below_price));
}

BOOST_AUTO_TEST_CASE(every_reason_code_round_trips_by_name) {
    // each code from the first to the last, and none past it
    int n = 0;
    for (;; ++n) {
        const auto code = static_cast<ReasonCode>(n);
        if (std::string(to_string(code)) == "?") break;
        ReasonCode back{};
        BOOST_TEST(reason_code_from(to_string(code), back), to_string(code));
        BOOST_TEST((back == code));
    }
    BOOST_TEST(n == static_cast<int>(ReasonCode::behind_track) + 1);  // the last code
    ReasonCode out = ReasonCode::hopeless;
    BOOST_TEST(!reason_code_from("ashA_behind", out));
    BOOST_TEST(!reason_code_from("", out));
    BOOST_TEST(!reason_code_from("?", out));
    BOOST_TEST((out == ReasonCode::hopeless));  // left as it was
}

BOOST_AUTO_TEST_CASE(a_line_without_a_code_still_parses) {
    // written before code= was added (a job saved by the previous version across an upgrade)
    auto s = parse_summary_line("explsched: state=unknown decision=wait utility=0 price=1 load=1 reason=x");
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(!s->reason_code.has_value());
    const Assessment a = assessment_for_preemption(TrialKey{9, TrialKey::kNoArrayTask}, 5, &*s);
    BOOST_TEST((a.reason.code == Reason{}.code));
}

BOOST_AUTO_TEST_CASE(a_widened_interval_says_so_and_round_trips) {
    Assessment a = sample();
    BOOST_TEST(summary_line(a, 0.5).find("widened=") == std::string::npos);  // as fitted: not shown
    auto plain = parse_summary_line(summary_line(a, 0.5));
    BOOST_REQUIRE(plain.ok());
    BOOST_TEST(plain->prediction.widened == 1.0);
    a.prediction.widened = 2.5;
    const std::string line = summary_line(a, 0.5);
    BOOST_TEST(line.find(" widened=2.5 ") != std::string::npos, line);
    auto s = parse_summary_line(line);
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
    BOOST_TEST(s->prediction.widened == 2.5);
    std::string bad = line;
    bad.replace(bad.find("widened=2.5"), 11, "widened=0.5");
    auto r = parse_summary_line(bad);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message == "summary line: bad widened='0.5'");
}

BOOST_AUTO_TEST_CASE(a_jump_allowance_says_so_and_round_trips) {
    Assessment a = sample();
    BOOST_TEST(summary_line(a, 0.5).find("jump=") == std::string::npos);  // none: not shown
    a.prediction.jump_allowance = 0.15;
    const std::string line = summary_line(a, 0.5);
    BOOST_TEST(line.find(" jump=0.15 ") != std::string::npos, line);
    auto s = parse_summary_line(line);
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
    BOOST_TEST(s->prediction.jump_allowance == 0.15);
    for (const char* bad_value : {"jump=-0.1", "jump=nan", "jump=x"}) {
        std::string bad = line;
        bad.replace(bad.find("jump=0.15"), 9, bad_value);
        auto r = parse_summary_line(bad);
        BOOST_TEST_CONTEXT(bad_value) {
            BOOST_REQUIRE(!r.ok());
            BOOST_TEST(r.error().message.find("summary line: bad jump=") == 0, r.error().message);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_best_track_lead_says_so_and_round_trips) {
    Assessment a = sample();
    BOOST_TEST(summary_line(a, 0.5).find("track=") == std::string::npos);  // none: not shown
    a.prediction.track_lead = 0.05;
    a.prediction.track_chance = 0.98;
    const std::string line = summary_line(a, 0.5);
    BOOST_TEST(line.find(" track=0.05:0.98 ") != std::string::npos, line);
    auto s = parse_summary_line(line);
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
    BOOST_TEST(s->prediction.track_lead == 0.05);
    BOOST_TEST(s->prediction.track_chance == 0.98);
    for (const char* bad_value :
         {"track=0.05", "track=-0.1:0.5", "track=0:0.5", "track=0.05:1.5", "track=x:y", "track=0.05:nan"}) {
        std::string bad = line;
        bad.replace(bad.find("track=0.05:0.98"), 15, bad_value);
        auto r = parse_summary_line(bad);
        BOOST_TEST_CONTEXT(bad_value) {
            BOOST_REQUIRE(!r.ok());
            BOOST_TEST(r.error().message.find("summary line: bad track=") == 0, r.error().message);
        }
    }
}

BOOST_AUTO_TEST_CASE(no_prediction) {
    Assessment a = sample();
    a.prediction = Prediction{};
    const std::string line = summary_line(a, 0.5);
    BOOST_TEST(line.find("pred=none") != std::string::npos);
    auto s = parse_summary_line(line);
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(std::isnan(s->prediction.value));
}

BOOST_AUTO_TEST_CASE(bad_lines_name_what_is_wrong) {
    BOOST_TEST(parse_summary_line("user comment").error().message == "summary line: no 'explsched: ' prefix");
    BOOST_TEST(parse_summary_line("explsched: state=promising").error().message ==
               "summary line: no reason=");
    BOOST_TEST(parse_summary_line("explsched: state=maybe decision=keep utility=1 price=1 reason=x")
                   .error()
                   .message == "summary line: bad state='maybe'");
    BOOST_TEST(parse_summary_line("explsched: state=unknown decision=keep utility=nan price=1 reason=x")
                   .error()
                   .message == "summary line: bad utility='nan'");
    BOOST_TEST(
        parse_summary_line("explsched: state=unknown decision=keep utility=0 price=1 code=maybe reason=x")
            .error()
            .message == "summary line: bad code='maybe'");
    BOOST_TEST(
        parse_summary_line("explsched: state=unknown decision=keep price=1 reason=x").error().message ==
        "summary line: no utility=");
}

BOOST_AUTO_TEST_CASE(preemption_from_summaries) {
    // The preempt plugin's path: two jobs' lines -> assessments -> the engine's rule.
    EngineSettings settings;
    auto low = parse_summary_line(summary_line(sample(), 1.0));
    Assessment strong = sample();
    strong.key = TrialKey{43, TrialKey::kNoArrayTask};
    strong.decision = Decision::wait;
    strong.utility = 1e-5;
    auto high = parse_summary_line(summary_line(strong, 1.0));
    BOOST_REQUIRE(low.ok() && high.ok());
    const Assessment preemptee = assessment_for_preemption(TrialKey{42, 7}, 100, &*low);
    const Assessment preemptor = assessment_for_preemption(TrialKey{43, TrialKey::kNoArrayTask}, 200, &*high);
    BOOST_TEST(preempt_verdict(preemptor, preemptee, settings).allowed);
    BOOST_TEST(!preempt_verdict(preemptee, preemptor, settings).allowed);
    // A job without a line is non-exploratory: never preempted by a trial (by default).
    const Assessment plain = assessment_for_preemption(TrialKey{44, TrialKey::kNoArrayTask}, 1, nullptr);
    BOOST_TEST(!plain.exploratory);
    BOOST_TEST(!preempt_verdict(preemptor, plain, settings).allowed);
}

BOOST_AUTO_TEST_CASE(a_trial_behind_at_a_milestone_preempts_nobody_through_its_line) {
    // The preempt plugin reads the reason code back from the line: a pending trial behind its
    // sweep at a milestone, without a forecast, far above a running trial below the price (the
    // live cluster of hostile_behind_preempt_cross_user.sh: 35001 against 10001).
    EngineSettings settings;
    Assessment behind;
    behind.key = TrialKey{4, TrialKey::kNoArrayTask};
    behind.exploratory = true;
    behind.state = TrialState::unknown;
    behind.decision = Decision::wait;
    behind.reason.code = ReasonCode::asha_behind;
    behind.reason.a = 100;
    behind.reason.b = 4;
    behind.reason.c = 4;
    behind.reason.d = 3;
    const std::string line = summary_line(behind, 1.0, "group=bsweep metric=loss:min max_steps=3000");
    BOOST_TEST(
        line.find(" code=asha_behind reason=wait: milestone step 100: rank 4 of 4") != std::string::npos,
        line);
    auto b = parse_summary_line(line);
    auto v = parse_summary_line(summary_line(sample(), 1.0));
    BOOST_REQUIRE(b.ok() && v.ok());
    const Assessment preemptor = assessment_for_preemption(behind.key, 35001, &*b);
    const Assessment preemptee = assessment_for_preemption(TrialKey{5, TrialKey::kNoArrayTask}, 10001, &*v);
    const auto refused = preempt_verdict(preemptor, preemptee, settings, 3600.0);
    BOOST_TEST(!refused.allowed);
    BOOST_TEST(refused.reason.find("behind its sweep at a milestone") != std::string::npos, refused.reason);
    // promoted at the milestone instead, the rank margin lets it preempt (35001 > 2 x 10001)
    behind.reason.code = ReasonCode::asha_promoted;
    auto p = parse_summary_line(summary_line(behind, 1.0));
    BOOST_REQUIRE(p.ok());
    BOOST_TEST(preempt_verdict(assessment_for_preemption(behind.key, 35001, &*p), preemptee, settings, 3600.0)
                   .allowed);
}

BOOST_AUTO_TEST_CASE(a_refused_preemption_quotes_the_line_not_figures_it_lacks) {
    // The line carries the code and the written reason, not the figures a-e: the refusal quotes
    // the reason as written (it printed "nan" for each figure before).
    EngineSettings settings;
    Assessment kept = sample();
    kept.decision = Decision::keep;
    kept.reason.code = ReasonCode::above_price;
    kept.reason.a = 7.5e-6;
    kept.reason.b = 5.5e-6;
    kept.reason.c = 0.93;
    const std::string written = explain(kept);
    auto k = parse_summary_line(summary_line(kept, 0.93));
    auto w = parse_summary_line(summary_line(sample(), 1.0));
    BOOST_REQUIRE(k.ok() && w.ok());
    const Assessment preemptee = assessment_for_preemption(kept.key, 100, &*k);
    const Assessment preemptor = assessment_for_preemption(TrialKey{43, TrialKey::kNoArrayTask}, 200, &*w);
    BOOST_TEST(explain(preemptee) == written);
    const auto refused = preempt_verdict(preemptor, preemptee, settings, 3600.0);
    BOOST_TEST(!refused.allowed);
    BOOST_TEST(refused.reason.find("is not preemptable (" + written + ")") != std::string::npos,
               refused.reason);
    BOOST_TEST(refused.reason.find("nan") == std::string::npos, refused.reason);
}

BOOST_AUTO_TEST_CASE(priority_terms_add_up) {
    EngineSettings settings;
    JobView view;
    view.group = "0:g";
    view.submit_time = 1000;
    view.partition_factor = 1.0;
    Assessment a = provisional_assessment(view, settings.unknown_value, settings);
    BOOST_TEST(a.exploratory);
    BOOST_TEST((a.decision == Decision::wait));
    BOOST_TEST(a.priority ==
               static_cast<uint32_t>(settings.weight_value * 0.5 + settings.weight_partition + 1));
    const PriorityTerms t = priority_terms(view, a, 1000 + settings.max_age_s / 2, settings);
    BOOST_TEST(t.age == settings.weight_age * 0.5, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(t.partition == settings.weight_partition);
    BOOST_TEST(t.value >= 0.0);
}

BOOST_AUTO_TEST_CASE(gpu_type_and_model_round_trip) {
    Assessment a = sample();
    a.gpu_type = "k80";
    a.measured_gpu_type = "v100";
    a.gpu_value = GpuValue{GpuValuation::scaled, 0.1412};
    const std::string line = summary_line(a, 0.5, "group=lr metric=loss:min model=ResNet-50~(batch~size~64)");
    BOOST_TEST(
        line.find(" gpu=k80 gpu_value=scaled:0.1412:v100 code=below_price reason=") != std::string::npos,
        line);
    auto s = parse_summary_line(line);
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
    BOOST_TEST(s->gpu_known);
    BOOST_TEST(s->gpu_type == "k80");
    BOOST_TEST((s->gpu_value.how == GpuValuation::scaled));
    BOOST_TEST(s->gpu_value.ratio == 0.1412, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(s->measured_gpu_type == "v100");
    BOOST_TEST(s->model == "ResNet-50 (batch size 64)");
    // unknown type, not scaled
    a.gpu_type.clear();
    a.measured_gpu_type.clear();
    a.gpu_value = GpuValue{GpuValuation::type_unknown, 1.0};
    const std::string plain = summary_line(a, 0.5, "group=lr metric=loss:min");
    BOOST_TEST(
        plain.find(" gpu=unknown gpu_value=type-unknown code=below_price reason=") != std::string::npos,
        plain);
    s = parse_summary_line(plain);
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(s->gpu_known);
    BOOST_TEST(s->gpu_type.empty());
    BOOST_TEST(s->model.empty());
    // a line from before GPU types: still parsed, says nothing of them
    std::string old = plain;
    old.erase(old.find(" gpu="), old.find(" reason=") - old.find(" gpu="));
    s = parse_summary_line(old);
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(!s->gpu_known);
    for (const char* bad :
         {"gpu_value=fast", "gpu_value=scaled:x:v100", "gpu_value=scaled:0.5", "gpu_value=scaled:0.5:"}) {
        std::string forged = plain;
        forged.replace(forged.find("gpu_value=type-unknown"), 22, bad);
        BOOST_TEST(!parse_summary_line(forged).ok(), forged);
    }
}

BOOST_AUTO_TEST_SUITE_END()
