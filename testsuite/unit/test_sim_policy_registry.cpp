#define BOOST_TEST_MODULE test_sim_policy_registry
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>

#include "explsched_config.h"
#include "sim/cluster.hpp"
#include "sim/sim_policy.hpp"
#include "sim/workload.hpp"

using namespace explsched;
using namespace explsched::sim;

namespace {
const ClusterSpec kCluster = homogeneous_cluster(4);
PolicyContext context_with_cluster() {
    PolicyContext context;
    context.cluster = &kCluster;
    return context;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(sim_policy_registry)

BOOST_AUTO_TEST_CASE(every_listed_policy_is_made_and_unknown_names_are_named) {
    const PolicyContext context = context_with_cluster();
    Workload workload;
    for (const std::string& name : policy_names()) {
        auto p = make_policy(name, context, workload);
        BOOST_TEST(p.ok(), name << ": " << (p.ok() ? std::string() : p.error().message));
    }
    auto bad = make_policy("lottery", context, workload);
    BOOST_TEST_REQUIRE(!bad.ok());
    BOOST_TEST(bad.error().message.find("'lottery' is not one of fifo") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(gavel_exists_exactly_when_built_with_glpk) {
    const auto& names = policy_names();
    const bool listed = std::find(names.begin(), names.end(), "gavel") != names.end();
    const PolicyContext context = context_with_cluster();
    Workload workload;
    auto gavel = make_policy("gavel", context, workload);
#ifdef HAVE_GLPK
    BOOST_TEST(listed);
    BOOST_TEST(gavel.ok());
#else
    BOOST_TEST(!listed);
    BOOST_TEST_REQUIRE(!gavel.ok());
    BOOST_TEST(gavel.error().message.find("configure found no GLPK") != std::string::npos,
               gavel.error().message);
#endif
}

BOOST_AUTO_TEST_SUITE_END()
