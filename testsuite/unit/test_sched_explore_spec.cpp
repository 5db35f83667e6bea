#define BOOST_TEST_MODULE test_sched_explore_spec
#include <boost/test/unit_test.hpp>

#include "core/sched/explore_spec.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(sched_explore_spec)

BOOST_AUTO_TEST_CASE(group_names) {
    BOOST_TEST(parse_explore_group("lr-sweep_2.a").ok());
    for (const char* bad : {"", "a b", "-x", ".x", "x/y", "x;rm", "é"}) {
        auto g = parse_explore_group(bad);
        BOOST_TEST_CONTEXT(bad) {
            BOOST_REQUIRE(!g.ok());
            BOOST_TEST(g.error().message.rfind("--explore: '", 0) == 0, g.error().message);
        }
    }
    BOOST_TEST(!parse_explore_group(std::string(65, 'a')).ok());
    BOOST_TEST(parse_explore_group(std::string(64, 'a')).ok());
}

BOOST_AUTO_TEST_CASE(metric_direction) {
    auto m = parse_explore_metric("val_loss");
    BOOST_REQUIRE(m.ok());
    BOOST_TEST(m->first == "val_loss");
    BOOST_TEST((m->second == MetricDirection::min));
    BOOST_TEST((parse_explore_metric("accuracy")->second == MetricDirection::max));
    BOOST_TEST((parse_explore_metric("wer:min")->second == MetricDirection::min));
    BOOST_TEST((parse_explore_metric("bleu:max")->second == MetricDirection::max));
    auto bad = parse_explore_metric("loss:down");
    BOOST_REQUIRE(!bad.ok());
    BOOST_TEST(bad.error().message == "--explore-metric: 'loss:down' has a direction that is not min or max");
    BOOST_TEST(!parse_explore_metric(":max").ok());
}

BOOST_AUTO_TEST_CASE(numbers_and_lists) {
    BOOST_TEST(parse_explore_max_steps("1000").value() == 1000u);
    for (const char* bad : {"0", "-1", "1e3", "", "10000000000000"})
        BOOST_TEST(!parse_explore_max_steps(bad).ok(), bad);
    auto l = parse_explore_milestones("100, 300,900");
    BOOST_REQUIRE(l.ok());
    BOOST_TEST(l->size() == 3u);
    BOOST_TEST(l->at(2) == 900u);
    BOOST_TEST(parse_explore_milestones("100,100").error().message.find("strictly increasing") !=
               std::string::npos);
    BOOST_TEST(!parse_explore_milestones("1,,2").ok());
    // --explore-lr-drops: the same list, its errors named for it
    auto d = parse_explore_lr_drops("30000, 60000");
    BOOST_REQUIRE(d.ok());
    BOOST_TEST((*d == std::vector<uint64_t>{30000, 60000}));
    BOOST_TEST(parse_explore_lr_drops("300,100").error().message ==
               "--explore-lr-drops: '300,100' is not strictly increasing");
    BOOST_TEST(parse_explore_lr_drops("0,5").error().message ==
               "--explore-lr-drops: '0,5' is not a comma-separated list of step counts (e.g. 30000,60000)");
    for (const char* bad : {"", "a", "1,,2", "-3", "1.5", "10000000000000"})
        BOOST_TEST(!parse_explore_lr_drops(bad).ok(), bad);
    std::string many;
    for (int i = 1; i <= 33; ++i) many += (i > 1 ? "," : "") + std::to_string(i);
    BOOST_TEST(parse_explore_lr_drops(many).error().message.find("has more than 32 drops") !=
               std::string::npos);
    BOOST_TEST(parse_explore_milestones(many).error().message.find("has more than 32 rungs") !=
               std::string::npos);
    BOOST_TEST((parse_explore_on_hopeless("cancel").value() == HopelessAction::terminate));
    BOOST_TEST(!parse_explore_on_hopeless("kill").ok());
    BOOST_TEST((parse_kernel_sched_option("enforce").value() == KernelSchedMode::enforce));
}

BOOST_AUTO_TEST_CASE(trial_only_options_need_explore) {
    ExploreSpec spec;
    spec.max_steps = 10;
    BOOST_TEST(validate_explore_spec(spec).error().message == "--explore-max-steps needs --explore=GROUP");
    spec = ExploreSpec{};
    spec.kernel_sched = KernelSchedMode::observe;  // device level works for any job
    BOOST_TEST(validate_explore_spec(spec).ok());
    spec.group = "g";
    spec.max_steps = 100;
    spec.milestones = {10, 200};
    BOOST_TEST(validate_explore_spec(spec).error().message.find("beyond --explore-max-steps=100") !=
               std::string::npos);
    spec.milestones = {10, 50};
    spec.lr_drops = {50, 150};
    BOOST_TEST(validate_explore_spec(spec).error().message ==
               "--explore-lr-drops: last drop 150 is beyond --explore-max-steps=100");
    spec.lr_drops = {50, 100};
    BOOST_TEST(validate_explore_spec(spec).ok());
    ExploreSpec plain;
    plain.lr_drops = {50};
    BOOST_TEST(validate_explore_spec(plain).error().message == "--explore-lr-drops needs --explore=GROUP");
}

BOOST_AUTO_TEST_CASE(env_round_trip) {
    ExploreSpec spec;
    spec.group = "sweep1";
    spec.metric = "acc";
    spec.direction = MetricDirection::max;
    spec.max_steps = 5000;
    spec.on_hopeless = HopelessAction::none;
    spec.milestones = {100, 1000};
    spec.kernel_sched = KernelSchedMode::observe;
    spec.lr_drops = {1500, 3000};
    std::vector<std::string> lines;
    for (const auto& [k, v] : explore_env(spec)) lines.push_back(k + "=" + v);
    lines.push_back("UNRELATED=1");
    lines.push_back("NOEQUALS");
    std::vector<std::string_view> views(lines.begin(), lines.end());
    auto back = parse_explore_env(views);
    BOOST_REQUIRE(back.ok());
    BOOST_TEST(back->group == "sweep1");
    BOOST_TEST(back->metric == "acc");
    BOOST_TEST((back->direction == MetricDirection::max));
    BOOST_TEST(*back->max_steps == 5000u);
    BOOST_TEST((*back->on_hopeless == HopelessAction::none));
    BOOST_TEST(back->milestones == spec.milestones);
    BOOST_TEST((*back->kernel_sched == KernelSchedMode::observe));
    BOOST_TEST(back->lr_drops == spec.lr_drops);
    BOOST_TEST(explore_trial_text(*back) == "group=sweep1 metric=acc:max max_steps=5000 lr_drops=1500,3000");
    // a forged record: the drops are parsed as strictly as the option
    std::vector<std::string_view> forged = {"EXPLSCHED_GROUP=ok", "EXPLSCHED_LR_DROPS=5,3"};
    auto r = parse_explore_env(forged);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message ==
               "job record variable EXPLSCHED_LR_DROPS: --explore-lr-drops: '5,3' is not "
               "strictly increasing");
}

BOOST_AUTO_TEST_CASE(altered_record_is_an_error_naming_the_variable) {
    std::vector<std::string_view> env = {"EXPLSCHED_GROUP=ok", "EXPLSCHED_MAX_STEPS=abc"};
    auto r = parse_explore_env(env);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message.rfind("job record variable EXPLSCHED_MAX_STEPS: ", 0) == 0,
               r.error().message);
    BOOST_TEST(!parse_explore_env({}).value().exploratory());
}

BOOST_AUTO_TEST_CASE(model_names) {
    for (const char* good :
         {"ResNet-50 (batch size 64)", "A3C", "LM (batch size 5)", "bert/base,seq+128", "x"})
        BOOST_TEST(parse_explore_model(good).value() == good);
    for (const char* bad : {"", " lead", "trail ", "-x", "(x)", "a=b", "a;b", "a\tb", "a\nb", "a'b", "a\"b",
                            "a$b", "a~b", "\xc3\xa9"}) {
        auto m = parse_explore_model(bad);
        BOOST_TEST_CONTEXT(bad) {
            BOOST_REQUIRE(!m.ok());
            BOOST_TEST(m.error().message.rfind("--explore-model: '", 0) == 0, m.error().message);
        }
    }
    BOOST_TEST(parse_explore_model(std::string(96, 'a')).ok());
    BOOST_TEST(!parse_explore_model(std::string(97, 'a')).ok());
    // stored, read back and shown as one word
    ExploreSpec spec;
    spec.group = "g";
    spec.model = "ResNet-50 (batch size 64)";
    BOOST_TEST(validate_explore_spec(spec).ok());
    std::vector<std::string> lines;
    for (const auto& [k, v] : explore_env(spec)) lines.push_back(k + "=" + v);
    std::vector<std::string_view> views(lines.begin(), lines.end());
    BOOST_TEST(parse_explore_env(views).value().model == spec.model);
    const std::string trial = explore_trial_text(spec);
    BOOST_TEST(trial.find(" model=ResNet-50~(batch~size~64)") != std::string::npos, trial);
    BOOST_TEST(model_from_word(model_word(spec.model)) == spec.model);
    // without --explore it would do nothing: refused
    spec.group.clear();
    BOOST_TEST(validate_explore_spec(spec).error().message == "--explore-model needs --explore=GROUP");
    // an altered record
    const std::vector<std::string_view> forged = {"EXPLSCHED_GROUP=g", "EXPLSCHED_MODEL=a;rm -rf"};
    auto r = parse_explore_env(forged);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message.find("EXPLSCHED_MODEL") != std::string::npos, r.error().message);
}

BOOST_AUTO_TEST_CASE(errors_quote_a_bounded_printable_excerpt_of_the_value) {
    // a crafted job environment (libslurm, no SPANK plugin): the error names the option and does not
    // carry 100 kB or raw escape sequences into slurmctld's log
    const std::string huge = "EXPLSCHED_MODEL=" + std::string(100000, 'x');
    const std::string esc = "EXPLSCHED_MODEL=a\x01\x1b[2J";
    for (const std::string& model : {huge, esc}) {
        const std::vector<std::string_view> env{"EXPLSCHED_GROUP=g", model};
        auto spec = parse_explore_env(env);
        BOOST_REQUIRE(!spec);
        const std::string& m = spec.error().message;
        BOOST_TEST(m.find("EXPLSCHED_MODEL") != std::string::npos, m);
        BOOST_TEST(m.find("--explore-model") != std::string::npos, m);
        BOOST_TEST(m.size() < 400u, m.size());
        BOOST_TEST(m.find('\x1b') == std::string::npos);
        BOOST_TEST(m.find('\x01') == std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(a_variable_written_twice_is_refused) {
    const std::vector<std::string_view> env{"EXPLSCHED_GROUP=mine", "EXPLSCHED_GROUP=theirs"};
    auto spec = parse_explore_env(env);
    BOOST_REQUIRE(!spec);
    BOOST_TEST(spec.error().message == "job record variable EXPLSCHED_GROUP appears more than once");
    const std::vector<std::string_view> other{"EXPLSCHED_GROUP=mine", "OTHER=1", "OTHER=2"};
    BOOST_TEST(static_cast<bool>(parse_explore_env(other)));  // names that are not ours are not our business
}

BOOST_AUTO_TEST_SUITE_END()
