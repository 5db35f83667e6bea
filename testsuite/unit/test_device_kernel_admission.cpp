#define BOOST_TEST_MODULE test_device_kernel_admission
#include <boost/test/unit_test.hpp>

#include <vector>

#include "core/device/kernel_admission.hpp"

using namespace explsched;

namespace {

constexpr std::uint32_t kHp = 1;
constexpr std::uint32_t kBe = 2;
constexpr std::uint32_t kBe2 = 3;
constexpr std::uint64_t kUs = 1000;

AdmissionConfig config() {
    AdmissionConfig c;
    c.sm_cap = 132;
    c.bw_cap = 1.0;
    c.be_budget_ns = 100 * kUs;
    c.protected_idle_ns = 100 * kUs;
    c.lost_completion_ns = 1000000 * kUs;
    return c;
}

AdmissionRequest req(std::uint32_t client, std::uint64_t seq, double sms, std::uint64_t dur_ns,
                     std::uint64_t at_ns, std::uint64_t key = 0, std::uint64_t stream = 0, double bw = 0.0) {
    AdmissionRequest r;
    r.client = client;
    r.seq = seq;
    r.stream = stream;
    r.key = key != 0 ? key : seq;
    r.demand.sms = sms;
    r.demand.bw = bw;
    r.demand.duration_ns = dur_ns;
    r.submitted_ns = at_ns;
    return r;
}

std::vector<Grant> admit(KernelAdmission& a, std::uint64_t now) {
    std::vector<Grant> g;
    a.admit(now, g);
    return g;
}

KernelAdmission two_jobs() {
    KernelAdmission a(config());
    a.set_client(kHp, 10.0);
    a.set_client(kBe, 1.0);
    return a;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(device_kernel_admission)

BOOST_AUTO_TEST_CASE(validate_names_the_field) {
    AdmissionConfig c = config();
    BOOST_TEST(validate(c).ok());
    c.sm_cap = 0;
    BOOST_TEST(validate(c).error().message.find("admission sm_cap") == 0u);
    c = config();
    c.bw_cap = -1;
    BOOST_TEST(validate(c).error().message.find("admission bw_cap") == 0u);
    c = config();
    c.be_budget_ns = 0;
    BOOST_TEST(validate(c).error().message == "admission be_budget_ns: must be positive");
}

BOOST_AUTO_TEST_CASE(the_top_priority_is_protected_and_never_held) {
    KernelAdmission a = two_jobs();
    BOOST_TEST(a.is_protected(kHp));
    BOOST_TEST(!a.is_protected(kBe));
    a.note_running(req(kBe, 1, 132, 1000 * kUs, 0), 0);  // the GPU is full of BE work
    a.submit(req(kHp, 1, 132, 100 * kUs, 5));
    const auto g = admit(a, 5);
    BOOST_REQUIRE(g.size() == 1u);
    BOOST_TEST(g[0].client == kHp);
    BOOST_TEST(g[0].waited_ns == 0u);
    BOOST_TEST(a.stats(kHp).held == 0u);
    // Equal priorities are all protected: nobody is managed.
    a.set_client(kBe, 10.0);
    BOOST_TEST(a.is_protected(kBe));
}

BOOST_AUTO_TEST_CASE(best_effort_waits_while_the_protected_job_fills_the_gpu) {
    KernelAdmission a = two_jobs();
    a.note_running(req(kHp, 1, 132, 1000 * kUs, 0, 100), 0);
    a.submit(req(kBe, 1, 132, 10 * kUs, 10));
    BOOST_TEST(admit(a, 10).empty());
    BOOST_TEST(a.stats(kBe).held == 1u);
    BOOST_TEST(admit(a, 500 * kUs).empty());
    BOOST_TEST(a.stats(kBe).held == 1u);  // counted once
    const auto done = a.complete(kHp, 1, 1000 * kUs);
    BOOST_REQUIRE(done.has_value());
    BOOST_TEST(done->duration_ns == 1000 * kUs);
    BOOST_TEST(done->key == 100u);
    const auto g = admit(a, 1000 * kUs);
    BOOST_REQUIRE(g.size() == 1u);
    BOOST_TEST(g[0].client == kBe);
    BOOST_TEST(g[0].waited_ns == 1000 * kUs - 10);
    BOOST_TEST(a.stats(kBe).wait_ns_max == 1000 * kUs - 10);
}

BOOST_AUTO_TEST_CASE(best_effort_fills_the_sms_left) {
    KernelAdmission a = two_jobs();
    a.note_running(req(kHp, 1, 60, 1000 * kUs, 0), 0);
    a.submit(req(kBe, 1, 60, 10 * kUs, 0));
    a.submit(req(kBe, 2, 80, 10 * kUs, 0, 0, 1));
    const auto g = admit(a, 0);
    BOOST_REQUIRE(g.size() == 1u);  // 60 + 60 fit in 132; 60 + 60 + 80 do not
    BOOST_TEST(g[0].seq == 1u);
    BOOST_TEST(a.waiting() == 1u);
    BOOST_TEST(a.in_flight_sms() == 120.0);
}

BOOST_AUTO_TEST_CASE(best_effort_respects_the_bandwidth_cap) {
    KernelAdmission a = two_jobs();
    a.note_running(req(kHp, 1, 40, 1000 * kUs, 0, 0, 0, 0.8), 0);  // memory bound
    a.submit(req(kBe, 1, 20, 10 * kUs, 0, 0, 0, 0.3));
    BOOST_TEST(admit(a, 0).empty());
    KernelAdmission b = two_jobs();
    b.note_running(req(kHp, 1, 40, 1000 * kUs, 0, 0, 0, 0.8), 0);
    b.submit(req(kBe, 1, 20, 10 * kUs, 0, 0, 0, 0.2));  // compute bound: fits beside it
    BOOST_TEST(admit(b, 0).size() == 1u);
}

BOOST_AUTO_TEST_CASE(best_effort_is_admitted_by_priority) {
    KernelAdmission a = two_jobs();
    a.set_client(kBe2, 5.0);
    a.note_running(req(kHp, 1, 132, 1000 * kUs, 0), 0);
    a.submit(req(kBe, 1, 132, 20 * kUs, 10));   // first, lower priority
    a.submit(req(kBe2, 1, 132, 20 * kUs, 20));  // later, higher priority
    BOOST_TEST(admit(a, 20).empty());
    (void)a.complete(kHp, 1, 1000 * kUs);
    auto g = admit(a, 1000 * kUs);
    BOOST_REQUIRE(g.size() == 1u);
    BOOST_TEST(g[0].client == kBe2);
    (void)a.complete(kBe2, 1, 1020 * kUs);
    g = admit(a, 1020 * kUs);
    BOOST_REQUIRE(g.size() == 1u);
    BOOST_TEST(g[0].client == kBe);
}

BOOST_AUTO_TEST_CASE(budget_bounds_best_effort_work_under_uncertainty) {
    KernelAdmission a = two_jobs();  // the protected job is registered but idle
    a.submit(req(kBe, 1, 1, 40 * kUs, 0, 0, 1));
    a.submit(req(kBe, 2, 1, 40 * kUs, 0, 0, 2));
    a.submit(req(kBe, 3, 1, 40 * kUs, 0, 0, 3));
    const auto g = admit(a, 0);
    BOOST_TEST(g.size() == 2u);  // 40 + 40 <= 100 us; a third would make 120
    // A kernel longer than the budget runs alone, and only while no protected kernel runs.
    a.set_client(kBe2, 1.0);
    a.submit(req(kBe2, 1, 10, 500 * kUs, 0));
    BOOST_TEST(admit(a, 1).empty());
    (void)a.complete(kBe, 1, 40 * kUs);
    (void)a.complete(kBe, 2, 41 * kUs);
    auto g2 = admit(a, 41 * kUs);  // kBe's third (FIFO head first among equals), not the long one
    BOOST_REQUIRE(g2.size() == 1u);
    BOOST_TEST(g2[0].client == kBe);
    (void)a.complete(kBe, 3, 80 * kUs);
    a.note_running(req(kHp, 1, 1, 100 * kUs, 80 * kUs), 80 * kUs);  // protected busy, then unknown
    BOOST_TEST(admit(a, 80 * kUs).empty());
    (void)a.complete(kHp, 1, 180 * kUs);
    BOOST_TEST(admit(a, 400 * kUs).size() == 1u);  // protected idle: the long kernel goes
}

BOOST_AUTO_TEST_CASE(lookahead_uses_the_learned_kernel_sequence) {
    KernelAdmission a = two_jobs();
    // The protected job repeats A (full GPU), B (10 SMs), C (full GPU), each 100 us.
    const std::uint64_t keys[] = {1, 2, 3, 1, 2, 3, 1, 2};
    const double sms[] = {132, 10, 132, 132, 10, 132, 132, 10};
    for (std::uint64_t i = 0; i < 8; ++i) {
        a.note_running(req(kHp, i + 1, sms[i], 100 * kUs, i * 100 * kUs, keys[i]), i * 100 * kUs);
        if (i < 7) (void)a.complete(kHp, i + 1, (i + 1) * 100 * kUs);
    }
    // Now B runs (700..800 us) and C is predicted next. A short BE kernel fits beside B...
    const std::uint64_t now = 710 * kUs;
    ProtectedForecast f = a.forecast(now, 50 * kUs);
    BOOST_TEST(f.sms == 10.0);
    BOOST_TEST(f.covered_ns == 50 * kUs);
    a.submit(req(kBe, 1, 100, 50 * kUs, now));
    BOOST_TEST(admit(a, now).size() == 1u);
    (void)a.complete(kBe, 1, now + 50 * kUs);
    // ...a longer one would still run when C needs the whole GPU.
    f = a.forecast(now, 150 * kUs);
    BOOST_TEST(f.sms == 132.0);
    BOOST_TEST(f.covered_ns == 150 * kUs);
    a.submit(req(kBe, 2, 100, 150 * kUs, now));
    BOOST_TEST(admit(a, now).empty());
}

BOOST_AUTO_TEST_CASE(completion_releases_earlier_kernels_of_its_stream) {
    KernelAdmission a = two_jobs();
    auto untracked = [](AdmissionRequest r) {
        r.tracked = false;
        return r;
    };
    a.note_running(untracked(req(kHp, 1, 10, 100 * kUs, 0)), 0);
    a.note_running(untracked(req(kHp, 2, 10, 100 * kUs, 0)), 0);
    a.note_running(req(kHp, 3, 10, 100 * kUs, 0), 0);
    a.note_running(req(kHp, 4, 10, 100 * kUs, 0, 0, 7), 0);  // another stream
    BOOST_TEST(a.in_flight() == 4u);
    (void)a.complete(kHp, 3, 50 * kUs);
    BOOST_TEST(a.in_flight() == 1u);
    BOOST_TEST(a.stats(kHp).completed == 3u);
}

BOOST_AUTO_TEST_CASE(untracked_kernels_expire_at_their_expected_end_in_stream_order) {
    KernelAdmission a = two_jobs();
    for (std::uint64_t i = 1; i <= 3; ++i) {
        AdmissionRequest r = req(kHp, i, 10, 100 * kUs, 0);
        r.tracked = false;
        a.note_running(r, 0);
    }
    BOOST_TEST(a.next_timer_ns(0).value() == 100 * kUs);
    BOOST_TEST(a.expire(150 * kUs) == 1u);  // the second runs 100..200 us, the third 200..300
    BOOST_TEST(a.expire(250 * kUs) == 1u);
    BOOST_TEST(a.expire(300 * kUs) == 1u);
    BOOST_TEST(a.in_flight() == 0u);
    // A tracked kernel whose completion never comes is released eventually, as expired.
    a.note_running(req(kHp, 4, 10, 100 * kUs, 0), 300 * kUs);
    BOOST_TEST(a.expire(2 * 1000000 * kUs) == 1u);
    BOOST_TEST(a.stats(kHp).expired == 1u);
}

BOOST_AUTO_TEST_CASE(a_departed_client_frees_its_share) {
    KernelAdmission a = two_jobs();
    a.note_running(req(kHp, 1, 132, 1000 * kUs, 0), 0);
    a.submit(req(kBe, 1, 132, 10 * kUs, 0));
    BOOST_TEST(admit(a, 0).empty());
    a.remove_client(kHp);
    BOOST_TEST(!a.has_client(kHp));
    BOOST_TEST(a.is_protected(kBe));  // alone now: the top priority present
    BOOST_TEST(admit(a, 1).size() == 1u);
}

BOOST_AUTO_TEST_CASE(timer_marks_the_protected_job_turning_idle) {
    KernelAdmission a = two_jobs();
    a.note_running(req(kHp, 1, 10, 100 * kUs, 0), 0);
    (void)a.complete(kHp, 1, 100 * kUs);
    BOOST_TEST(a.next_timer_ns(100 * kUs).value() == 200 * kUs);
    BOOST_TEST(!a.next_timer_ns(300 * kUs).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
