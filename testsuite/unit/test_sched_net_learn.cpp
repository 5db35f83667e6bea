#define BOOST_TEST_MODULE test_sched_net_learn
// NetLearner: the pair table learned from running multi-node jobs' reported speeds.
#include <boost/test/unit_test.hpp>

#include <string>
#include <unordered_map>
#include <vector>

#include "core/sched/net_learn.hpp"

using namespace explsched;
using namespace explsched::net;

namespace {

// Reported curves by job id; `report` appends a point at the next step with a throughput.
struct Curves {
    std::unordered_map<std::uint32_t, std::vector<CurvePoint>> points;
    void report(std::uint32_t id, double speed) {
        auto& v = points[id];
        CurvePoint p;
        p.step = static_cast<double>(v.size() + 1) * 10.0;
        p.metric = 1.0;
        p.throughput = speed;
        v.push_back(p);
    }
    std::function<PointSpan(std::uint32_t)> lookup() const {
        return [this](std::uint32_t id) {
            const auto it = points.find(id);
            return it == points.end() ? PointSpan() : PointSpan(it->second);
        };
    }
};

double learned(const NetLearner& l, const std::string& row, const std::string& col) {
    const PairTable& t = l.table();
    const auto r = t.measured_ratio(t.find(row), t.find(col));
    return r ? *r : -1.0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(net_learn)

BOOST_AUTO_TEST_CASE(a_pair_is_learned_from_speed_beside_a_sharer_against_speed_alone) {
    NetLearner l(PairTable{});
    Curves c;
    const RoundRunning victim{1, "Victim", 4, {2, 3}};
    const RoundRunning bully{2, "Bully", 4, {2, 3}};
    // rounds 1-4 alone at 10 steps/s (the first round only starts tracking it)
    for (int round = 0; round < 4; ++round) {
        c.report(1, 10.0);
        l.round({victim}, c.lookup());
    }
    BOOST_TEST(l.observations() == 3u);
    // Bully joins: the points reported before the change settles are not used
    c.report(1, 10.0);  // reported before this round saw Bully: under the old company
    auto lines = l.round({victim, bully}, c.lookup());
    BOOST_TEST(lines.empty());
    BOOST_TEST(learned(l, "Victim,4,2", "Bully,4,2") == -1.0);
    for (int round = 0; round < 10; ++round) {
        c.report(1, 4.0);
        lines = l.round({victim, bully}, c.lookup());
    }
    BOOST_REQUIRE(!lines.empty());
    BOOST_TEST(lines.back().find("JobId=1 Victim,4,2 beside Bully,4,2: 0.40 of alone") != std::string::npos);
    BOOST_TEST(learned(l, "Victim,4,2", "Bully,4,2") == 0.4, boost::test_tools::tolerance(0.02));
    // Bully reported nothing: nothing is learned of how Victim hurts it
    BOOST_TEST(learned(l, "Bully,4,2", "Victim,4,2") == -1.0);
}

BOOST_AUTO_TEST_CASE(a_new_job_of_a_known_type_is_compared_with_its_type_alone) {
    NetLearner l(PairTable{});
    Curves c;
    for (int round = 0; round < 3; ++round) {
        c.report(1, 8.0);
        l.round({{1, "M", 4, {0, 1}}}, c.lookup());
    }
    // job 5 of the same type starts beside job 6; it never ran alone
    for (int round = 0; round < 6; ++round) {
        c.report(5, 4.0);
        l.round({{5, "M", 4, {2, 3}}, {6, "N", 4, {3, 4}}}, c.lookup());
    }
    BOOST_TEST(learned(l, "M,4,2", "N,4,2") == 0.5, boost::test_tools::tolerance(0.02));
}

BOOST_AUTO_TEST_CASE(a_claimed_collapse_is_bounded_by_the_floor_and_invented_types_by_max_types) {
    LearnSettings s;
    s.estimator.max_types = 8;
    NetLearner l(PairTable{}, s);
    Curves c;
    for (int round = 0; round < 3; ++round) {
        c.report(1, 100.0);
        l.round({{1, "Liar", 4, {0, 1}}}, c.lookup());
    }
    for (int round = 0; round < 20; ++round) {
        c.report(1, 0.001);  // "my speed collapses whenever anyone is near me"
        l.round({{1, "Liar", 4, {0, 1}}, {2, "Honest", 4, {1, 2}}}, c.lookup());
    }
    BOOST_TEST(learned(l, "Liar,4,2", "Honest,4,2") >= 0.35 - 1e-9);
    BOOST_TEST(learned(l, "Liar,4,2", "Honest,4,2") <= 0.36);
    // faster beside a sharer than alone by more than max_ratio: noise, ignored
    const std::size_t before = l.observations();
    for (int round = 0; round < 3; ++round) {
        c.report(1, 1000.0);
        l.round({{1, "Liar", 4, {0, 1}}, {2, "Honest", 4, {1, 2}}}, c.lookup());
    }
    BOOST_TEST(l.observations() == before);
    // 100 invented model names: the table stops growing at max_types
    for (std::uint32_t id = 10; id < 110; ++id) {
        const std::string model = "m" + std::to_string(id);
        for (int round = 0; round < 3; ++round) {
            c.report(id, 5.0);
            c.report(id + 1000, 5.0);
            l.round({{id, model, 4, {0, 1}}}, c.lookup());
        }
        for (int round = 0; round < 3; ++round) {
            c.report(id, 2.0);
            l.round({{id, model, 4, {0, 1}}, {id + 1000, model + "x", 4, {1, 2}}}, c.lookup());
        }
    }
    BOOST_TEST(l.table().size() <= 8u);
}

BOOST_AUTO_TEST_CASE(jobs_that_stop_running_are_forgotten_and_start_over) {
    NetLearner l(PairTable{});
    Curves c;
    for (int round = 0; round < 3; ++round) {
        c.report(1, 10.0);
        l.round({{1, "A", 4, {0, 1}}}, c.lookup());
    }
    const std::size_t seen = l.observations();
    l.round({}, c.lookup());  // requeued: gone from the running set
    c.report(1, 10.0);
    l.round({{1, "A", 4, {0, 1}}}, c.lookup());  // back: tracked afresh, this round only settles
    BOOST_TEST(l.observations() == seen);
}

BOOST_AUTO_TEST_SUITE_END()
