#define BOOST_TEST_MODULE test_sim_contention_sim
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>

#include "core/device/orion_profile.hpp"
#include "sim/contention_sim.hpp"

#include <ostream>

namespace explsched {
std::ostream& operator<<(std::ostream& out, SharingPolicy p) { return out << to_string(p); }
}  // namespace explsched

using namespace explsched;

namespace {

KernelProfile kernel(double sms, std::uint64_t ns, KernelClass cls = KernelClass::compute) {
    KernelProfile k;
    k.name = "k" + std::to_string(static_cast<int>(sms)) + "_" + std::to_string(ns);
    k.cls = cls;
    k.demand.sms = sms;
    k.demand.cls = cls;
    k.demand.bw = bandwidth_demand(cls, sms, 80);
    k.demand.duration_ns = ns;
    return k;
}

SimParams short_run() {
    SimParams p;
    p.device.sm_count = 80;
    p.horizon_ns = 400'000'000;
    p.warmup_ns = 50'000'000;
    return p;
}

bool have_profiles() {
    const std::string dir = std::string(EXPLSCHED_DATA_DIR) + "/kernel-profiles/";
    if (std::filesystem::exists(dir)) return true;
    BOOST_TEST_MESSAGE("shared data not present: " << dir);
    return false;
}

std::vector<SimJobSpec> orion_pair(const std::string& hp) {
    const std::string dir = std::string(EXPLSCHED_DATA_DIR) + "/kernel-profiles/";
    auto h = load_orion_profile(dir + hp + ".csv", 80);
    auto b = load_orion_profile(dir + "resnet50_32_fb1_new.csv", 80);
    BOOST_REQUIRE(h.ok() && b.ok());
    return {SimJobSpec{hp, *h, 10.0, true, 0.3, 0}, SimJobSpec{"train", *b, 1.0, false, 0.0, 0}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sim_contention_sim)

BOOST_AUTO_TEST_CASE(policy_names_round_trip) {
    for (auto p : {SharingPolicy::exclusive, SharingPolicy::unmanaged, SharingPolicy::time_slicing,
                   SharingPolicy::orion, SharingPolicy::explsched}) {
        BOOST_TEST(parse_sharing_policy(to_string(p)).value() == p);
    }
    BOOST_TEST(parse_sharing_policy("mps").error().message ==
               "sharing policy 'mps': expected exclusive, unmanaged, time_slicing, orion or explsched");
}

BOOST_AUTO_TEST_CASE(bad_parameters_are_errors) {
    SimParams p = short_run();
    p.horizon_ns = p.warmup_ns;
    BOOST_TEST(!validate(p).ok());
    p = short_run();
    p.device.colocation_penalty = 1.0;
    BOOST_TEST(validate(p).error().message == "simulator colocation_penalty: must be in [0, 1)");
    BOOST_TEST(simulate({}, SharingPolicy::unmanaged, short_run()).error().message ==
               "simulator: no jobs to simulate");
    SimJobSpec empty{"e", {}, 1.0, false, 0.0, 0};
    BOOST_TEST(simulate({empty}, SharingPolicy::unmanaged, short_run()).error().message ==
               "simulator job 'e': has no kernels");
}

BOOST_AUTO_TEST_CASE(exclusive_closed_loop_runs_at_kernel_speed) {
    // 10 kernels of 100 us on a launch-ahead CPU: an iteration takes the GPU time plus the first
    // launch; the work rate is the share of time the GPU is busy.
    SimJobSpec j{"loop", std::vector<KernelProfile>(10, kernel(80, 100'000)), 1.0, false, 0.0, 0};
    auto r = simulate({j}, SharingPolicy::exclusive, short_run());
    BOOST_REQUIRE(r.ok());
    const SimJobResult& x = r->jobs[0];
    BOOST_TEST(x.mean_latency_ns == 1'004'000.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(x.work_rate > 0.99);
    BOOST_TEST(x.work_rate <= 1.0);
}

BOOST_AUTO_TEST_CASE(unmanaged_colocation_slows_both_and_time_slicing_alternates) {
    SimJobSpec a{"a", std::vector<KernelProfile>(10, kernel(80, 100'000)), 2.0, false, 0.0, 0};
    SimJobSpec b{"b", std::vector<KernelProfile>(10, kernel(80, 100'000)), 1.0, false, 0.0, 0};
    auto u = simulate({a, b}, SharingPolicy::unmanaged, short_run());
    BOOST_REQUIRE(u.ok());
    BOOST_TEST(u->jobs[0].work_rate == 0.5, boost::test_tools::tolerance(0.02));
    BOOST_TEST(u->jobs[1].work_rate == 0.5, boost::test_tools::tolerance(0.02));
    auto t = simulate({a, b}, SharingPolicy::time_slicing, short_run());
    BOOST_REQUIRE(t.ok());
    const double total = t->jobs[0].work_rate + t->jobs[1].work_rate;
    BOOST_TEST(total < 1.0);  // context switches cost
    BOOST_TEST(total > 0.95);
}

BOOST_AUTO_TEST_CASE(explsched_protects_the_high_priority_job_on_shipped_profiles) {
    if (!have_profiles()) return;
    const auto jobs = orion_pair("resnet50_4_fwd_new");
    const SimParams p = short_run();
    auto ex = simulate(jobs, SharingPolicy::exclusive, p);
    auto un = simulate(jobs, SharingPolicy::unmanaged, p);
    auto ts = simulate(jobs, SharingPolicy::time_slicing, p);
    auto es = simulate(jobs, SharingPolicy::explsched, p);
    BOOST_REQUIRE(ex.ok() && un.ok() && ts.ok() && es.ok());
    auto slowdown = [&](const SimResult& r) {
        return r.jobs[0].mean_latency_ns / ex->jobs[0].mean_latency_ns - 1.0;
    };
    auto be_share = [&](const SimResult& r) { return r.jobs[1].work_rate / ex->jobs[1].work_rate; };
    BOOST_TEST(ex->jobs[0].requests > 10u);
    BOOST_TEST(slowdown(*es) < 0.05);
    BOOST_TEST(be_share(*es) > 0.5);
    BOOST_TEST(slowdown(*un) > 0.2);
    BOOST_TEST(slowdown(*ts) > 0.5);
    // The same requests arrive under every policy.
    BOOST_TEST(es->jobs[0].requests == ex->jobs[0].requests);
}

BOOST_AUTO_TEST_CASE(results_are_reproducible) {
    if (!have_profiles()) return;
    const auto jobs = orion_pair("mobilenetv2_4_fwd_new");
    auto a = simulate(jobs, SharingPolicy::orion, short_run());
    auto b = simulate(jobs, SharingPolicy::orion, short_run());
    BOOST_REQUIRE(a.ok() && b.ok());
    BOOST_TEST(a->jobs[0].mean_latency_ns == b->jobs[0].mean_latency_ns);
    BOOST_TEST(a->jobs[1].work_rate == b->jobs[1].work_rate);
}

BOOST_AUTO_TEST_SUITE_END()
