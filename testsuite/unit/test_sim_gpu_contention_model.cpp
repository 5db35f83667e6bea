#define BOOST_TEST_MODULE test_sim_gpu_contention_model
#include <boost/test/unit_test.hpp>

#include <vector>

#include "sim/gpu_contention_model.hpp"

using namespace explsched;

namespace {
std::vector<double> rates(const ContentionParams& p, const std::vector<RunningKernel>& k) {
    std::vector<double> r;
    progress_rates(p, k, r);
    return r;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(sim_gpu_contention_model)

BOOST_AUTO_TEST_CASE(kernels_that_fit_run_at_full_speed) {
    ContentionParams p;
    p.sm_count = 80;
    const auto r = rates(p, {{40, 0.3, 0}, {40, 0.5, 1}});
    BOOST_TEST(r[0] == 1.0);
    BOOST_TEST(r[1] == 1.0);
    BOOST_TEST(rates(p, {}).empty());
}

BOOST_AUTO_TEST_CASE(oversubscribed_sms_are_shared_in_proportion) {
    ContentionParams p;
    p.sm_count = 80;
    const auto r = rates(p, {{80, 0.1, 0}, {80, 0.1, 1}});
    BOOST_TEST(r[0] == 0.5);
    BOOST_TEST(r[1] == 0.5);
    const auto s = rates(p, {{80, 0.0, 0}, {80, 0.0, 1}, {80, 0.0, 2}, {80, 0.0, 3}});
    BOOST_TEST(s[3] == 0.25);
}

BOOST_AUTO_TEST_CASE(bandwidth_is_shared_max_min_fairly) {
    ContentionParams p;
    p.sm_count = 80;
    // Two memory-bound kernels wanting 0.8 each share 1.0: each gets 0.5 of 0.8.
    auto r = rates(p, {{20, 0.8, 0}, {20, 0.8, 1}});
    BOOST_TEST(r[0] == 0.625, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(r[1] == 0.625, boost::test_tools::tolerance(1e-12));
    // A compute-bound kernel needing 0.1 keeps full speed; the memory-bound one gets the rest.
    r = rates(p, {{20, 0.1, 0}, {20, 1.0, 1}});
    BOOST_TEST(r[0] == 1.0);
    BOOST_TEST(r[1] == 0.9, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(colocation_penalty_applies_only_across_jobs) {
    ContentionParams p;
    p.sm_count = 80;
    p.colocation_penalty = 0.1;
    auto same_job = rates(p, {{10, 0.1, 3}, {10, 0.1, 3}});
    BOOST_TEST(same_job[0] == 1.0);
    auto two_jobs = rates(p, {{10, 0.1, 3}, {10, 0.1, 4}});
    BOOST_TEST(two_jobs[0] == 0.9, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_SUITE_END()
