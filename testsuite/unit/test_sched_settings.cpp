#define BOOST_TEST_MODULE test_sched_settings
#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "core/sched/settings.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(sched_settings)

BOOST_AUTO_TEST_CASE(defaults_are_used_when_text_is_empty) {
    auto s = parse_settings("", ",");
    BOOST_REQUIRE(s.ok());
    const Settings d;
    BOOST_TEST(s->engine.preempt_margin == d.engine.preempt_margin);
    BOOST_TEST(s->grace_time == 60u);
    BOOST_TEST(s->report_port == 6828);
    BOOST_TEST((s->engine.hopeless_action == HopelessAction::requeue_hold));
}

BOOST_AUTO_TEST_CASE(comma_separated_priority_parameters) {
    auto s = parse_settings("preempt_margin=0.4, grace_time=2m,hopeless_action=cancel,,mps=yes", ",");
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
    BOOST_TEST(s->engine.preempt_margin == 0.4);
    BOOST_TEST(s->engine.preempt_rank_margin == 1.0);  // the default
    BOOST_TEST(s->grace_time == 120u);
    auto r = parse_settings("preempt_rank_margin=0", ",");
    BOOST_REQUIRE(r.ok());
    BOOST_TEST(r->engine.preempt_rank_margin == 0.0);
    BOOST_TEST((s->engine.hopeless_action == HopelessAction::terminate));
    BOOST_TEST(s->mps);
}

BOOST_AUTO_TEST_CASE(forecast_audit_settings) {
    auto d = parse_settings("", ",");
    BOOST_REQUIRE(d.ok());
    BOOST_TEST(d->engine.calibration_min_audits == 8u);
    BOOST_TEST(d->engine.calibration_max_widen == 5.0);
    BOOST_TEST(d->engine.hopeless_min_progress == 0.35);
    BOOST_TEST(d->engine.milestone_stop_probability == 0.0);
    auto s = parse_settings("calibration_min_audits=0,calibration_max_widen=2.5", ",");
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
    BOOST_TEST(s->engine.calibration_min_audits == 0u);
    BOOST_TEST(s->engine.calibration_max_widen == 2.5);
    auto many = parse_settings("calibration_min_audits=257", ",");  // more than the audit keeps
    BOOST_REQUIRE(!many.ok());
    BOOST_TEST(many.error().message.find("calibration_min_audits") != std::string::npos,
               many.error().message);
    auto bad = parse_settings("calibration_max_widen=0.5", ",");
    BOOST_REQUIRE(!bad.ok());
    BOOST_TEST(bad.error().message.find("'calibration_max_widen': 0.5 is out of range") != std::string::npos,
               bad.error().message);
}

BOOST_AUTO_TEST_CASE(sibling_jumps_setting) {
    auto d = parse_settings("", ",");
    BOOST_REQUIRE(d.ok());
    BOOST_TEST(!d->engine.sibling_jumps);  // off
    auto s = parse_settings("sibling_jumps=yes", ",");
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
    BOOST_TEST(s->engine.sibling_jumps);
    const auto all = describe_settings(*s);
    BOOST_TEST((std::find(all.begin(), all.end(), "sibling_jumps=yes") != all.end()));
    auto bad = parse_settings("sibling_jumps=maybe", ",");
    BOOST_REQUIRE(!bad.ok());
    BOOST_TEST(bad.error().message.find("'sibling_jumps'") != std::string::npos, bad.error().message);
}

BOOST_AUTO_TEST_CASE(chance_worth_gpu_hours_setting) {
    auto d = parse_settings("", ",");
    BOOST_REQUIRE(d.ok());
    BOOST_TEST(d->engine.chance_worth_gpu_hours == 0.0);  // off
    auto s = parse_settings("chance_worth_gpu_hours=3000", ",");
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
    BOOST_TEST(s->engine.chance_worth_gpu_hours == 3000.0);
    BOOST_TEST(d->engine.explore_first_progress == 0.0);  // off
    auto x = parse_settings("explore_first_progress=0.1", ",");
    BOOST_REQUIRE_MESSAGE(x.ok(), (x.ok() ? "" : x.error().message));
    BOOST_TEST(x->engine.explore_first_progress == 0.1);
    auto over = parse_settings("explore_first_progress=1.5", ",");
    BOOST_REQUIRE(!over.ok());
    BOOST_TEST(over.error().message.find("'explore_first_progress'") != std::string::npos,
               over.error().message);
    for (const char* text : {"chance_worth_gpu_hours=-1", "chance_worth_gpu_hours=inf",
                             "chance_worth_gpu_hours=1e13", "chance_worth_gpu_hours=lots"}) {
        auto bad = parse_settings(text, ",");
        BOOST_TEST_CONTEXT(text) {
            BOOST_REQUIRE(!bad.ok());
            BOOST_TEST(bad.error().message.find("'chance_worth_gpu_hours'") != std::string::npos,
                       bad.error().message);
        }
    }
}

BOOST_AUTO_TEST_CASE(calibration_and_sibling_prior_settings) {
    auto d = parse_settings("", ",");
    BOOST_REQUIRE(d.ok());
    BOOST_TEST(d->engine.interval_calibration == 1.0);  // the engine's rules: the interval as fitted
    BOOST_TEST(d->engine.fallback_calibration == 1.0);
    BOOST_TEST(d->engine.sibling_prior_weight == 0.0);
    auto s = parse_settings(
        "interval_calibration=1.78,fallback_calibration=1.5,sibling_prior_weight=1.5,sibling_shape_bandwidth="
        "0.1,"
        "sibling_level_bandwidth=0.5,sibling_calibration=1.2",
        ",");
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
    BOOST_TEST(s->engine.interval_calibration == 1.78);
    BOOST_TEST(s->engine.fallback_calibration == 1.5);
    BOOST_TEST(s->engine.sibling_prior_weight == 1.5);
    BOOST_TEST(s->engine.sibling_shape_bandwidth == 0.1);
    BOOST_TEST(s->engine.sibling_level_bandwidth == 0.5);
    BOOST_TEST(s->engine.sibling_calibration == 1.2);
    for (const char* text :
         {"interval_calibration=0", "fallback_calibration=-1", "sibling_prior_weight=-0.5",
          "sibling_shape_bandwidth=0", "sibling_calibration=1000", "interval_calibration=x"}) {
        auto bad = parse_settings(text, ",");
        BOOST_TEST_CONTEXT(text) {
            BOOST_REQUIRE(!bad.ok());
            const std::string key(text, std::string(text).find('='));
            BOOST_TEST(bad.error().message.find("'" + key + "'") != std::string::npos, bad.error().message);
        }
    }
}

BOOST_AUTO_TEST_CASE(plugstack_args) {
    auto s = parse_settings_args({"kernel_sched=observe", "runtime_dir=/tmp/x", "report_port=7000"});
    BOOST_REQUIRE(s.ok());
    BOOST_TEST((s->kernel_sched == KernelSchedMode::observe));
    BOOST_TEST(s->runtime_dir == "/tmp/x");
    BOOST_TEST(s->report_port == 7000);
    BOOST_TEST(s->kerneld_user == "explsched");  // the default
}

BOOST_AUTO_TEST_CASE(kerneld_user_is_a_user_name) {
    auto s = parse_settings_args({"kerneld_user=gpu-sched_1"});
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(s->kerneld_user == "gpu-sched_1");
    for (const char* bad : {"kerneld_user=", "kerneld_user=-x", "kerneld_user=a b", "kerneld_user=../root",
                            "kerneld_user=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}) {
        auto b = parse_settings_args({bad});
        BOOST_TEST_CONTEXT(bad) {
            BOOST_REQUIRE(!b.ok());
            BOOST_TEST(b.error().message.find("is not a user name") != std::string::npos, b.error().message);
        }
    }
}

BOOST_AUTO_TEST_CASE(unknown_key_is_an_error_naming_it) {
    auto s = parse_settings("preempt_margin=0.3,bogus_key=1", ",");
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().message.find("unknown setting 'bogus_key'") != std::string::npos);
    BOOST_TEST(s.error().message.find("preempt_margin") != std::string::npos);  // lists known keys
}

BOOST_AUTO_TEST_CASE(bad_values_name_key_and_value) {
    struct Case {
        const char* text;
        const char* expect;
    };
    const Case cases[] = {
        {"preempt_margin=abc", "setting 'preempt_margin': 'abc' is not a finite number"},
        {"preempt_margin=nan", "'nan' is not a finite number"},
        {"preempt_margin=-1", "out of range"},
        {"preempt_rank_margin=-0.5", "out of range"},
        {"preempt_rank_margin=twice", "setting 'preempt_rank_margin': 'twice' is not a finite number"},
        {"report_port=0", "setting 'report_port': 0 is out of range [1, 65535]"},
        {"report_port=70000", "out of range"},
        {"report_port=12x", "'12x' is not a non-negative integer"},
        {"grace_time=5y", "'5y' is not a duration"},
        {"hopeless_action=kill", "'kill' is not one of requeue, cancel, none"},
        {"kernel_sched=always", "'always' is not one of off, observe, enforce"},
        {"mps=maybe", "'maybe' is not a boolean"},
        {"report_db=relative.db", "'relative.db' is not an absolute path"},
        {"throughput_table=gavel.json", "setting 'throughput_table': 'gavel.json' is not an absolute path"},
        {"report_host=a b", "not a host name"},
        {"weight_age", "expected key=value"},
    };
    for (const Case& c : cases) {
        auto s = parse_settings(c.text, ",");
        BOOST_TEST_CONTEXT(c.text) {
            BOOST_REQUIRE(!s.ok());
            BOOST_TEST(s.error().message.find(c.expect) != std::string::npos, s.error().message);
        }
    }
}

BOOST_AUTO_TEST_CASE(throughput_table_is_an_optional_path) {
    BOOST_TEST(Settings{}.throughput_table.empty());
    auto s = parse_settings("throughput_table=/etc/slurm/gavel.json,rerank_period=5", ",");
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(s->throughput_table == "/etc/slurm/gavel.json");
    BOOST_TEST(parse_settings("throughput_table=", ",", *s).value().throughput_table.empty());
}

BOOST_AUTO_TEST_CASE(failed_parse_leaves_base_untouched) {
    Settings base;
    base.engine.preempt_margin = 0.9;
    auto s = parse_settings("preempt_margin=0.1,report_port=-5", ",", base);
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(base.engine.preempt_margin == 0.9);
}

BOOST_AUTO_TEST_CASE(file_text_errors_name_the_line) {
    const char* text = "# explschedd.conf\n\nreport_port = 7001\nreport_db=/var/x.db # comment\nnope=1\n";
    auto s = parse_settings_file_text(text, "explschedd.conf");
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().message.rfind("explschedd.conf:5: unknown setting 'nope'", 0) == 0,
               s.error().message);
    auto good = parse_settings_file_text("report_port = 7001\nreport_db=/var/x.db # c\n", "f");
    BOOST_REQUIRE(good.ok());
    BOOST_TEST(good->report_port == 7001);
    BOOST_TEST(good->report_db == "/var/x.db");
}

BOOST_AUTO_TEST_CASE(describe_round_trips) {
    auto s = parse_settings("preempt_margin=0.5,hopeless_action=none,kernel_sched=enforce", ",");
    BOOST_REQUIRE(s.ok());
    const auto lines = describe_settings(*s);
    BOOST_TEST(lines.size() == setting_keys().size());
    std::string joined;
    for (const auto& l : lines) joined += l + ",";
    auto again = parse_settings(joined, ",");
    BOOST_REQUIRE_MESSAGE(again.ok(), (again.ok() ? "" : again.error().message));
    BOOST_TEST(describe_settings(*again) == lines);
    BOOST_TEST(std::count(lines.begin(), lines.end(), "hopeless_action=none") == 1);
}

BOOST_AUTO_TEST_SUITE_END()
