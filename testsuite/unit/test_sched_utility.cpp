#define BOOST_TEST_MODULE test_sched_utility
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "core/sched/utility.hpp"

using namespace explsched;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

BOOST_AUTO_TEST_SUITE(utility)

BOOST_AUTO_TEST_CASE(speed_from_wall_time_or_throughput) {
    std::vector<CurvePoint> timed;
    for (int i = 0; i < 10; ++i) timed.push_back({100.0 * i, 0.5, 20.0 * i, kNaN});
    BOOST_TEST(observed_speed(timed) == 5.0, boost::test_tools::tolerance(1e-12));
    // a requeue gap (an hour without progress) does not drag the estimate once the current run's
    // start is known; without it, the wait counts as time (never faster than the truth)
    std::vector<CurvePoint> gap = timed;
    for (std::size_t i = 5; i < gap.size(); ++i) gap[i].wall_time += 3600.0;
    BOOST_TEST(observed_speed(gap, 8, 1.5, gap[5].wall_time - 10.0) == 5.0,
               boost::test_tools::tolerance(1e-12));
    BOOST_TEST(observed_speed(gap) < 1.0);
    timed.back().throughput = 7.0;
    BOOST_TEST(observed_speed(timed) == 7.0);
    std::vector<CurvePoint> untimed = {{1, 0.5, kNaN, kNaN}, {2, 0.6, kNaN, kNaN}};
    BOOST_TEST(std::isnan(observed_speed(untimed)));
    BOOST_TEST(std::isnan(observed_speed(PointSpan())));
}

BOOST_AUTO_TEST_CASE(a_reported_throughput_is_a_hint_bounded_by_the_measured_speed) {
    std::vector<CurvePoint> timed;
    for (int i = 0; i < 10; ++i) timed.push_back({100.0 * i, 0.5, 20.0 * i, kNaN});  // 5 steps/s
    timed.back().throughput = 1e15;
    BOOST_TEST(observed_speed(timed) == 7.5, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(observed_speed(timed, 8, 0.0) == 5.0, boost::test_tools::tolerance(1e-12));
    timed.back().throughput = 4.0;  // lower than measured: taken
    BOOST_TEST(observed_speed(timed) == 4.0);
    std::vector<CurvePoint> untimed = {{1, 0.5, kNaN, 1e15}, {2, 0.6, kNaN, 1e15}};
    BOOST_TEST(std::isnan(observed_speed(untimed)));  // nothing measured: the claim is ignored
}

BOOST_AUTO_TEST_CASE(reports_sent_in_bursts_do_not_inflate_the_measured_speed) {
    // 5 steps/s of real training, reported three at a time 1 ms apart every 60 s: a median of the
    // per-interval rates would read ~33,000 steps/s; the steps over the time they took say 5.
    std::vector<CurvePoint> burst;
    for (int b = 0; b < 6; ++b)
        for (int k = 0; k < 3; ++k) burst.push_back({300.0 * b + 100.0 * k, 0.5, 60.0 * b + 0.001 * k, kNaN});
    const double speed = observed_speed(burst, 8, 0.0);
    BOOST_TEST(speed > 4.0);
    BOOST_TEST(speed < 10.0);
    burst.back().throughput = 1e6;  // and a claim is bounded by that
    BOOST_TEST(observed_speed(burst) < 15.0);
}

BOOST_AUTO_TEST_CASE(win_probability_reads_the_optimistic_side) {
    Prediction p;
    p.value = 0.80;
    p.lower = 0.78;
    p.upper = 0.84;
    const double z = 1.2816;
    BOOST_TEST(win_probability(p, Direction::maximize, 0.80, z) == 0.5, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(win_probability(p, Direction::maximize, 0.84, z) == normal_cdf(-z),
               boost::test_tools::tolerance(1e-9));
    BOOST_TEST(win_probability(p, Direction::maximize, 0.95, z) < 0.001);
    BOOST_TEST(win_probability(p, Direction::maximize, 0.60, z) > 0.999);
    BOOST_TEST(win_probability(p, Direction::maximize, kNaN, z) == 1.0);  // nobody to beat
    // minimising: lower is better, the optimistic side is the lower one
    BOOST_TEST(win_probability(p, Direction::minimize, 0.78, z) == normal_cdf(-z),
               boost::test_tools::tolerance(1e-9));
    BOOST_TEST(normal_cdf(0.0) == 0.5);
}

BOOST_AUTO_TEST_CASE(utility_scales_with_gain_gpus_and_group_value) {
    UtilityInputs in;
    in.gain = 0.02;
    in.group_scale = 0.4;
    in.win_probability = 1.0;
    in.dominated_weight = 0.05;
    in.gpus = 1;
    in.horizon_s = 1000;
    const double base = utility_per_gpu_second(in);
    BOOST_TEST(base == 0.02 / 0.4 / 1000, boost::test_tools::tolerance(1e-12));
    in.gpus = 4;
    BOOST_TEST(utility_per_gpu_second(in) == base / 4, boost::test_tools::tolerance(1e-12));
    in.gpus = 1;
    in.win_probability = 0.0;  // cannot beat the group's best: only the dominated weight is left
    BOOST_TEST(utility_per_gpu_second(in) == 0.05 * base, boost::test_tools::tolerance(1e-12));
    in.win_probability = 1.0;
    in.gain = -0.1;
    BOOST_TEST(utility_per_gpu_second(in) == 0.0);
    in.gain = kNaN;
    BOOST_TEST(utility_per_gpu_second(in) == 0.0);
    in.gain = 0.02;
    in.group_scale = 0.0;
    BOOST_TEST(utility_per_gpu_second(in) == 0.0);
}

BOOST_AUTO_TEST_CASE(heavy_tailed_win_probability) {
    // t3 CDF: symmetric, the closed form's known values
    BOOST_TEST(student_t3_cdf(0.0) == 0.5, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(student_t3_cdf(1.0) + student_t3_cdf(-1.0) == 1.0, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(student_t3_cdf(2.353363) == 0.95, boost::test_tools::tolerance(1e-5));  // t_{0.95,3}
    Prediction p;
    p.value = 0.80;
    p.lower = 0.76;
    p.upper = 0.84;
    // the interval's edge keeps (1 - level) / 2 of the mass beyond it, as with the normal reading
    BOOST_TEST(win_probability_heavy(p, Direction::maximize, 0.84, 0.8) == 0.1,
               boost::test_tools::tolerance(1e-6));
    BOOST_TEST(win_probability_heavy(p, Direction::maximize, 0.80, 0.8) == 0.5,
               boost::test_tools::tolerance(1e-12));
    BOOST_TEST(win_probability_heavy(p, Direction::minimize, 0.76, 0.8) == 0.1,
               boost::test_tools::tolerance(1e-6));
    // but far tails are heavier: two half-widths short, the normal reading says 0.5 %, t3 2.3 %
    const double z = 1.2815515655446004;
    const double normal = win_probability(p, Direction::maximize, 0.88, z);
    const double heavy = win_probability_heavy(p, Direction::maximize, 0.88, 0.8);
    BOOST_TEST(normal < 0.01);
    BOOST_TEST(heavy > 0.02);
    BOOST_TEST(heavy < 0.03);
    BOOST_TEST(win_probability_heavy(p, Direction::maximize, kNaN, 0.8) == 1.0);
    // expected improvement: the mean excess over the best; heavier tails keep more of it far out
    const double at = expected_improvement_heavy(p, Direction::maximize, 0.80, 0.8);
    BOOST_TEST(at > 0.0);
    BOOST_TEST(expected_improvement_heavy(p, Direction::maximize, 0.70, 0.8) > 0.099);  // ~ the margin
    BOOST_TEST(expected_improvement_heavy(p, Direction::maximize, 0.70, 0.8) < 0.10 + at);
    BOOST_TEST(expected_improvement_heavy(p, Direction::maximize, 0.88, 0.8) >
               expected_improvement(p, Direction::maximize, 0.88, z));
    BOOST_TEST(expected_improvement_heavy(p, Direction::minimize, 0.80, 0.8) == at,
               boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_SUITE_END()
