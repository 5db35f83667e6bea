#define BOOST_TEST_MODULE daemon_rate_limiter
#include <boost/test/unit_test.hpp>

#include "daemon/rate_limiter.hpp"

using namespace explsched::daemon;
using Clock = RateLimiter::Clock;

BOOST_AUTO_TEST_SUITE(daemon_rate_limiter)

BOOST_AUTO_TEST_CASE(a_bucket_allows_its_burst_then_its_rate) {
    RateLimiter r;
    const auto t0 = Clock::now();
    int taken = 0;
    for (int i = 0; i < 20; ++i) taken += r.take("uid=1", 2.0, 10.0, t0) ? 1 : 0;
    BOOST_TEST(taken == 10);
    BOOST_TEST(!r.take("uid=1", 2.0, 10.0, t0 + std::chrono::milliseconds(100)));  // 0.2 tokens
    BOOST_TEST(r.take("uid=1", 2.0, 10.0, t0 + std::chrono::milliseconds(600)));   // 1.2 tokens
    BOOST_TEST(!r.take("uid=1", 2.0, 10.0, t0 + std::chrono::milliseconds(600)));
    // Refill never exceeds the burst.
    taken = 0;
    for (int i = 0; i < 20; ++i) taken += r.take("uid=1", 2.0, 10.0, t0 + std::chrono::hours(1)) ? 1 : 0;
    BOOST_TEST(taken == 10);
}

BOOST_AUTO_TEST_CASE(one_key_exhausted_leaves_another_untouched) {
    RateLimiter r;
    const auto t0 = Clock::now();
    while (r.take("uid=666", 1.0, 5.0, t0)) {
    }
    BOOST_TEST(r.take("uid=1000", 1.0, 5.0, t0));
}

BOOST_AUTO_TEST_CASE(prune_forgets_only_refilled_buckets) {
    RateLimiter r;
    const auto t0 = Clock::now();
    r.take("a", 1.0, 5.0, t0);
    for (int i = 0; i < 5; ++i) r.take("b", 1.0, 5.0, t0);
    r.prune(1.0, 5.0, t0 + std::chrono::seconds(2));  // a refilled, b has 2 of 5
    BOOST_TEST(r.size() == 1u);
    r.prune(1.0, 5.0, t0 + std::chrono::seconds(10));
    BOOST_TEST(r.size() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
