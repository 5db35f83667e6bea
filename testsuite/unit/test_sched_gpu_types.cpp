#define BOOST_TEST_MODULE test_sched_gpu_types
#include <boost/test/unit_test.hpp>

#include <string>

#include "core/sched/gpu_types.hpp"

using namespace explsched;

namespace {

ThroughputTable table() {
    ThroughputTable t;
    t.set("ResNet-50 (batch size 64)", "k80", 0.62);
    t.set("ResNet-50 (batch size 64)", "p100", 2.62);
    t.set("ResNet-50 (batch size 64)", "v100", 4.39);
    t.set("Recommendation (batch size 512)", "k80", 32.86);
    t.set("Recommendation (batch size 512)", "v100", 23.32);
    return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sched_gpu_types)

BOOST_AUTO_TEST_CASE(names_are_interned_lower_case_and_bounded) {
    GpuTypeNames names;
    const GpuTypeId v100 = names.intern("V100");
    BOOST_TEST(v100 != kNoGpuType);
    BOOST_TEST(names.intern("v100") == v100);
    BOOST_TEST(names.find("v100") == v100);
    BOOST_TEST(names.name(v100) == "v100");
    BOOST_TEST(names.find("k80") == kNoGpuType);
    BOOST_TEST(names.count() == 1u);
    for (const char* bad : {"", "a b", "x;y", "v100\n", "é"})
        BOOST_TEST(names.intern(bad) == kNoGpuType, bad);
    BOOST_TEST(names.intern(std::string(33, 'a')) == kNoGpuType);
    BOOST_TEST(names.name(200) == "");
    for (std::size_t i = 0; i < 100; ++i) names.intern("t" + std::to_string(i));
    BOOST_TEST(names.count() == GpuTypeNames::kMaxTypes);  // the rest are unknown (id 0)
    BOOST_TEST(names.intern("t99") == kNoGpuType);
    GpuTypeNames copy;
    copy.intern("v100");
    copy.catch_up(names);
    BOOST_TEST(copy.count() == names.count());
    BOOST_TEST(copy.name(5) == names.name(5));
}

BOOST_AUTO_TEST_CASE(types_from_slurm_text) {
    GpuTypeNames names;
    const GpuTypeMask node = node_gpu_types("gpu:v100:2,gpu:k80:2(S:0-1)", names);
    BOOST_TEST(node == (gpu_type_bit(names.find("v100")) | gpu_type_bit(names.find("k80"))));
    BOOST_TEST(node_gpu_types("gpu:4", names) == 0u);
    BOOST_TEST(node_gpu_types("", names) == 0u);
    const GpuTypeMask a100 = node_gpu_types("mps:100,gpu:a100:8", names);
    BOOST_TEST(a100 == gpu_type_bit(names.find("a100")));
    BOOST_TEST(names.name(tres_gpu_type("gres:gpu:v100:1", names)) == "v100");
    BOOST_TEST(names.name(tres_gpu_type("gres/gpu:k80=2", names)) == "k80");
    BOOST_TEST(names.name(tres_gpu_type("cpu=1,mem=100M,gres/gpu=1,gres/gpu:k80=1", names)) == "k80");
    BOOST_TEST(tres_gpu_type("gres:gpu:1", names) == kNoGpuType);
    BOOST_TEST(tres_gpu_type("gres/gpu=2", names) == kNoGpuType);
    BOOST_TEST(tres_gpu_type("license/x:1", names) == kNoGpuType);
    BOOST_TEST(tres_gpu_type("gres:gpu:bad;type:1", names) == kNoGpuType);
}

BOOST_AUTO_TEST_CASE(the_type_rule) {
    GpuTypeNames names;
    const GpuTypeId v100 = names.intern("v100"), k80 = names.intern("k80"), p100 = names.intern("p100");
    const ThroughputTable t = table();
    const std::string resnet = "ResNet-50 (batch size 64)", rec = "Recommendation (batch size 512)";
    JobGpuFacts f;
    // pending, requested a type: that type; measured on its previous run's
    f.requested = k80;
    f.previous = v100;
    f.offered = gpu_type_bit(v100) | gpu_type_bit(k80);
    GpuTypeChoice c = choose_gpu_types(f, resnet, 1, t, names);
    BOOST_TEST(c.valued_on == k80);
    BOOST_TEST(c.measured_on == v100);
    // untyped request: the partition's only type, else its fastest for the model
    f.requested = kNoGpuType;
    f.previous = kNoGpuType;
    f.offered = gpu_type_bit(p100);
    BOOST_TEST(choose_gpu_types(f, resnet, 1, t, names).valued_on == p100);
    f.offered = gpu_type_bit(v100) | gpu_type_bit(k80);
    BOOST_TEST(choose_gpu_types(f, resnet, 1, t, names).valued_on == v100);
    BOOST_TEST(choose_gpu_types(f, rec, 1, t, names).valued_on == k80);  // faster on k80 in Gavel's table
    BOOST_TEST(choose_gpu_types(f, "", 1, t, names).valued_on == kNoGpuType);
    BOOST_TEST(choose_gpu_types(f, "unknown model", 1, t, names).valued_on == kNoGpuType);
    BOOST_TEST(choose_gpu_types(f, resnet, 1, ThroughputTable{}, names).valued_on == kNoGpuType);
    BOOST_TEST(choose_gpu_types(f, resnet, 3, t, names).valued_on == kNoGpuType);  // no row at scale 3
    // running: the type it holds; measured on the previous type until this run reported a point
    f = JobGpuFacts{};
    f.running = true;
    f.allocated = k80;
    f.requested = kNoGpuType;
    f.previous = v100;
    f.start_time = 1000;
    f.last_point_time = 900;
    c = choose_gpu_types(f, resnet, 1, t, names);
    BOOST_TEST(c.valued_on == k80);
    BOOST_TEST(c.measured_on == v100);
    f.last_point_time = 1001;
    BOOST_TEST(choose_gpu_types(f, resnet, 1, t, names).measured_on == kNoGpuType);
    f.allocated = kNoGpuType;  // a node of mixed types and an untyped request
    f.requested = v100;
    BOOST_TEST(choose_gpu_types(f, resnet, 1, t, names).valued_on == v100);
}

BOOST_AUTO_TEST_CASE(valuations_and_their_words) {
    const ThroughputTable t = table();
    const std::string resnet = "ResNet-50 (batch size 64)";
    GpuValue v = gpu_valuation(resnet, "k80", "v100", 1, t);
    BOOST_TEST((v.how == GpuValuation::scaled));
    BOOST_TEST(v.ratio == 0.62 / 4.39, boost::test_tools::tolerance(1e-12));
    BOOST_TEST((gpu_valuation("", "k80", "v100", 1, t).how == GpuValuation::no_model));
    BOOST_TEST((gpu_valuation(resnet, "k80", "v100", 1, ThroughputTable{}).how == GpuValuation::no_table));
    BOOST_TEST((gpu_valuation("resnet50", "k80", "v100", 1, t).how == GpuValuation::model_not_in_table));
    BOOST_TEST((gpu_valuation(resnet, "", "v100", 1, t).how == GpuValuation::type_unknown));
    BOOST_TEST((gpu_valuation(resnet, "k80", "", 1, t).how == GpuValuation::same_type));
    BOOST_TEST((gpu_valuation(resnet, "K80", "k80", 1, t).how == GpuValuation::same_type));
    BOOST_TEST((gpu_valuation(resnet, "a100", "v100", 1, t).how == GpuValuation::no_row));
    BOOST_TEST((gpu_valuation(resnet, "k80", "v100", 2, t).how == GpuValuation::no_row));
    for (GpuValuation how :
         {GpuValuation::no_model, GpuValuation::no_table, GpuValuation::model_not_in_table,
          GpuValuation::type_unknown, GpuValuation::same_type, GpuValuation::no_row, GpuValuation::scaled}) {
        GpuValuation back = GpuValuation::no_model;
        BOOST_TEST(gpu_valuation_from(to_string(how), back));
        BOOST_TEST((back == how));
    }
    GpuValuation unused = GpuValuation::no_model;
    BOOST_TEST(!gpu_valuation_from("scaled:1", unused));
    const std::string words = describe_gpu_value("k80", GpuValuation::scaled, 0.1412, "v100", resnet);
    BOOST_TEST(words.find("valued on k80") == 0u, words);
    BOOST_TEST(words.find("'ResNet-50 (batch size 64)' on k80 = 0.141x v100") != std::string::npos, words);
    const std::string missing =
        describe_gpu_value("k80", GpuValuation::model_not_in_table, 1.0, "", "resnet50");
    BOOST_TEST(missing.find("not a row of the throughput table") != std::string::npos, missing);
    BOOST_TEST(describe_gpu_value("", GpuValuation::type_unknown, 1.0, "", "").find("unknown") !=
               std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
