#define BOOST_TEST_MODULE sim_cluster
#include <boost/test/unit_test.hpp>

#include <string>

#include "sim/cluster.hpp"

using namespace explsched;
using namespace explsched::sim;

BOOST_AUTO_TEST_SUITE(sim_cluster)

BOOST_AUTO_TEST_CASE(spec_parsing) {
    auto spec = parse_cluster_spec("V100:2x8, k80:3x4");
    BOOST_REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? std::string() : spec.error().message));
    BOOST_TEST(spec->total_gpus() == 28u);
    BOOST_TEST(spec->gpus_of("v100") == 16u);
    BOOST_TEST(spec->gpus_of("k80") == 12u);
    BOOST_TEST(spec->types().size() == 2u);
    BOOST_TEST(spec->describe() == "v100:2x8,k80:3x4");
    auto plain = parse_cluster_spec("4x2");
    BOOST_REQUIRE(plain.ok());
    BOOST_TEST(plain->gpus_of("v100") == 8u);
    for (const char* bad : {"", "v100:0x8", "v100:2y8", "v100:", "v 100:1x1", "1x2000"}) {
        auto r = parse_cluster_spec(bad);
        BOOST_TEST(!r.ok(), bad);
    }
    auto err = parse_cluster_spec("v100:2x8,k80:three");
    BOOST_REQUIRE(!err.ok());
    BOOST_TEST(err.error().message.find("'k80:three'") != std::string::npos, err.error().message);
    BOOST_TEST(homogeneous_cluster(20, "v100", 8).describe() == "v100:2x8,v100:1x4");
}

BOOST_AUTO_TEST_CASE(allocation_packs_then_spans_and_releases) {
    Cluster c(*parse_cluster_spec("v100:3x4,k80:1x2"));
    BOOST_TEST(c.free_gpus() == 14u);
    const Allocation a = c.allocate("v100", 3);
    BOOST_REQUIRE(!a.empty());
    BOOST_TEST(a.nodes.size() == 1u);  // fits on one node
    const Allocation b = c.allocate("v100", 2);
    BOOST_TEST(b.nodes.size() == 1u);
    BOOST_TEST(b.nodes[0].first != a.nodes[0].first);  // node with 1 free is too small
    const Allocation s = c.allocate("v100", 6);        // 1 + 2 + 4 free: must span
    BOOST_TEST(s.gpus() == 6u);
    BOOST_TEST(s.nodes.size() == 2u);
    BOOST_TEST(c.free_gpus("v100") == 1u);
    BOOST_TEST(c.allocate("v100", 2).empty());
    BOOST_TEST(c.allocate("a100", 1).empty());
    BOOST_TEST(c.allocate("k80", 2).gpu_type == "k80");
    c.release(s);
    c.release(a);
    BOOST_TEST(c.free_gpus("v100") == 10u);
    BOOST_TEST(c.free_gpus() == 10u);
}

BOOST_AUTO_TEST_SUITE_END()
