#define BOOST_TEST_MODULE test_sched_net_contention
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "core/sched/net_contention.hpp"
#include "core/sched/net_placement.hpp"
#include "core/sched/net_plan.hpp"
#include "core/sched/net_round.hpp"
#include "core/sched/net_table.hpp"

using namespace explsched::net;

namespace {

// Three types: A is hurt badly by B (0.5) and mildly by A (0.9); B is barely hurt by anyone.
const char* iso_csv = ",isol_thp\n\"A,4,2\",100\n\"A,4,4\",80\n\"B,4,2\",50\n";
const char* ratio_csv =
    ",\"A,4,2\",\"A,4,4\",\"B,4,2\"\n"
    "\"A,4,2\",0.9,0.9,0.5\n"
    "\"A,4,4\",0.9,0.9,0.5\n"
    "\"B,4,2\",0.95,0.95,0.95\n";

PairTable small_table() {
    auto t = PairTable::from_csv(iso_csv, ratio_csv);
    BOOST_REQUIRE_MESSAGE(t.ok(), (t.ok() ? std::string() : t.error().message));
    return *t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(net_contention)

BOOST_AUTO_TEST_CASE(parses_deepshare_format_and_rejects_bad_cells) {
    const PairTable t = small_table();
    BOOST_TEST(t.size() == 3u);
    BOOST_TEST(t.measured_pairs() == 9u);
    const int a = t.find("A,4,2"), b = t.find("B,4,2");
    BOOST_TEST(*t.isolated(a) == 100.0);
    BOOST_TEST(*t.measured_ratio(a, b) == 0.5, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(t.stretch(a, b) == 1.0, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(t.find("C,4,2") == PairTable::unknown);
    BOOST_TEST(!PairTable::from_csv(iso_csv, ",\"A,4,2\"\n\"A,4,2\",abc\n").ok());
    BOOST_TEST(!PairTable::from_csv(iso_csv, ",\"A,4,2\",\"B,4,2\"\n\"A,4,2\",0.5\n").ok());
    BOOST_TEST(!PairTable::from_csv(",x\n\"A,4,2\",-3\n", ratio_csv).ok());
}

BOOST_AUTO_TEST_CASE(unknown_pairs_fall_back_to_the_rank1_fit_and_unknown_types_to_the_median) {
    auto t = PairTable::from_csv(iso_csv,
                                 ",\"A,4,2\",\"B,4,2\"\n"
                                 "\"A,4,2\",,0.5\n"
                                 "\"B,4,2\",0.8,0.9\n");
    BOOST_REQUIRE(t.ok());
    const int a = t->find("A,4,2"), b = t->find("B,4,2");
    BOOST_TEST(!t->measured_ratio(a, a).has_value());
    // a*b products fit: x(a,b)=1, x(b,a)=.25, x(b,b)=.111 -> x(a,a) ~ x(a,b)*x(b,a)/x(b,b) = 2.25
    BOOST_TEST(t->stretch(a, a) > 1.0);
    BOOST_TEST(t->stretch(a, a) < 4.0);
    const int c = t->intern("C,8,4");
    BOOST_TEST(t->stretch(c, b) > 0.0);
    BOOST_TEST(std::isfinite(t->stretch(c, c)));
    PairTable empty;
    BOOST_TEST(empty.stretch(PairTable::unknown, PairTable::unknown) == PairTable::default_stretch,
               boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(min_rule_and_additive_rule_agree_on_one_sharer_and_differ_on_two) {
    const PairTable t = small_table();
    const int a = t.find("A,4,2"), b = t.find("B,4,2");
    NetState s(4);
    s.add(1, b, 4, {0, 1});
    s.add(2, a, 4, {0, 1});
    const ContentionModel minm(t, {Rule::min_pairwise, 0.0});
    const ContentionModel add(t, {Rule::link_additive, 0.0});
    BOOST_TEST(minm.ratio(s, 2) == 0.5, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(add.ratio(s, 2) == 0.5, boost::test_tools::tolerance(1e-9));
    // a second sharer (A: stretch 1/0.9-1) on node 0
    s.add(3, a, 4, {0, 2});
    BOOST_TEST(minm.ratio(s, 2) == 0.5, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(add.ratio(s, 2) == 1.0 / (1.0 + 1.0 + (1.0 / 0.9 - 1.0)), boost::test_tools::tolerance(1e-9));
    // the floor holds
    const ContentionModel floored(t, {Rule::link_additive, 0.6});
    BOOST_TEST(floored.ratio(s, 2) == 0.6, boost::test_tools::tolerance(1e-9));
    // single-node jobs are not tracked and not hurt
    s.add(4, b, 4, {3});
    BOOST_TEST(s.job(4) == nullptr);
    BOOST_TEST(add.ratio_if_placed(s, a, {0}) == 1.0);
    // the newcomer view matches adding it
    const double predicted = add.ratio_with_newcomer(s, 3, b, {2, 3});
    s.add(5, b, 4, {2, 3});
    BOOST_TEST(add.ratio(s, 3) == predicted, boost::test_tools::tolerance(1e-12));
    s.remove(5);
    s.remove(1);
    BOOST_TEST(s.on_node(0).size() == 2u);
}

BOOST_AUTO_TEST_CASE(switch_uplinks_are_shared_links) {
    auto topo = Topology::parse(
        "SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n[3-4]\nSwitchName=top Switches=s[1-2]\n");
    BOOST_REQUIRE(topo.ok());
    BOOST_TEST(topo->switches.size() == 2u);
    BOOST_TEST(topo->switch_of.at("n4") == 1);
    BOOST_TEST(!Topology::parse("SwitchName=s1 Bogus=1\n").ok());
    const PairTable t = small_table();
    const int a = t.find("A,4,2"), b = t.find("B,4,2");
    NetState s(4, {0, 0, 1, 1});
    s.uplink_capacity = 1.0;
    s.add(1, b, 4, {0, 2});  // crosses both uplinks
    const ContentionModel add(t, {Rule::link_additive, 0.0});
    // {1,3}: no shared node, but both uplinks shared with B -> 0.5
    BOOST_TEST(add.ratio_if_placed(s, a, {1, 3}) == 0.5, boost::test_tools::tolerance(1e-9));
    // {0,1} stays under s1: shares node 0 only -> also 0.5; {1} alone under s1 would be free
    s.uplink_capacity = 4.0;
    BOOST_TEST(add.ratio_if_placed(s, a, {1, 3}) == 1.0 / 1.25, boost::test_tools::tolerance(1e-9));
    auto hosts = expand_hostlist("n[01-03,7],m5");
    BOOST_REQUIRE(hosts.ok());
    BOOST_TEST(hosts->size() == 5u);
    BOOST_TEST((*hosts)[0] == "n01");
    BOOST_TEST((*hosts)[3] == "n7");
    BOOST_TEST(!expand_hostlist("n[3-1]").ok());
}

BOOST_AUTO_TEST_CASE(placement_avoids_the_bad_sharer_and_the_blind_baseline_does_not) {
    const PairTable t = small_table();
    const int b = t.find("B,4,2");
    NetState s(4);
    s.add(1, b, 4, {0, 1});  // B on nodes 0,1 (2 GPUs each)
    const std::vector<int> free = {6, 6, 8, 8};
    const ContentionModel add(t, {Rule::link_additive, 0.35});
    const PlacementRequest req{"A", 4, {4, 2}};
    const auto blind = first_fit_placement(add, s, free, req);
    BOOST_REQUIRE(blind.found);
    BOOST_TEST(blind.nodes.size() == 4u);  // first shape that fits: 4 nodes, including B's
    BOOST_TEST(blind.ratio == 0.5, boost::test_tools::tolerance(1e-9));
    const auto aware = choose_placement(add, s, free, req);
    BOOST_REQUIRE(aware.found);
    BOOST_TEST((aware.nodes == std::vector<int>{2, 3}));
    BOOST_TEST(aware.ratio == 1.0);
    BOOST_TEST(aware.cost < blind.cost);
    const std::string why = placement_reason(aware, {"n1", "n2", "n3", "n4"});
    BOOST_TEST(why == "placement: nodes n3,n4, predicted 1.00 of isolated");
    // no room anywhere
    BOOST_TEST(!choose_placement(add, s, {1, 1, 1, 0}, req).found);
    BOOST_TEST(choose_placement(add, s, {1, 1, 1, 1}, req).nodes.size() == 4u);
}

// The round cache (NodeCosts: node costs and joined jobs' loads kept between decisions) must give
// exactly what a fresh search gives, and the joined jobs' loss must equal the model's own
// ratio-before minus ratio-with-newcomer, through adds and removes, with and without uplinks.
BOOST_AUTO_TEST_CASE(the_round_cache_gives_what_a_fresh_search_gives) {
    PairTable t;
    const char* models[] = {"A", "B", "C", "D"};
    std::vector<int> types;
    for (const char* m : models)
        for (int n : {2, 4}) types.push_back(t.intern(shape_key(m, 8, n)));
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> ratio(0.4, 1.0);
    for (int r : types) {
        t.set_isolated(r, 50.0 + 10.0 * r);
        for (int c : types)
            if (rng() % 4) t.set_ratio(r, c, ratio(rng));  // a quarter left to the fit
    }
    t.fit_factors();
    for (Rule rule : {Rule::link_additive, Rule::min_pairwise}) {
        const ContentionModel model(t, {rule, 0.35});
        NetState s(16, {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
        std::vector<int> free(16, 8);
        NodeCosts cache(model, s);
        std::vector<std::uint32_t> live;
        int placed = 0, joined_some = 0;
        for (std::uint32_t id = 1; id <= 300; ++id) {
            if (!live.empty() && rng() % 3 == 0) {  // a job ends
                const std::size_t k = rng() % live.size();
                const NetState::Job* j = s.job(live[k]);
                for (int v : j->nodes) free[static_cast<std::size_t>(v)] += j->gpus / int(j->nodes.size());
                s.remove(live[k]);
                live.erase(live.begin() + static_cast<long>(k));
            }
            const PlacementRequest req{models[rng() % 4], 8, {2, 4}};
            const PlacementChoice cached = choose_placement(model, s, free, req, &cache);
            const PlacementChoice fresh = choose_placement(model, s, free, req);
            BOOST_TEST_REQUIRE(cached.found == fresh.found);
            if (!cached.found) continue;
            BOOST_TEST(cached.nodes == fresh.nodes);
            BOOST_TEST(cached.cost == fresh.cost, boost::test_tools::tolerance(1e-12));
            // the loss, recomputed the slow way
            double loss = 0.0;
            std::vector<std::uint32_t> seen;
            for (const auto& [jid, j] : s.jobs()) {
                bool shares = false;
                for (int v : j.nodes)
                    shares = shares ||
                             std::find(cached.nodes.begin(), cached.nodes.end(), v) != cached.nodes.end();
                const auto ups = s.uplinks_of(cached.nodes);
                for (int u : j.uplinks) shares = shares || std::find(ups.begin(), ups.end(), u) != ups.end();
                if (!shares) continue;
                seen.push_back(jid);
                loss += j.gpus * std::max(0.0, model.ratio(s, jid) - model.ratio_with_newcomer(
                                                                         s, jid, cached.type, cached.nodes));
            }
            BOOST_TEST(cached.others_loss == loss, boost::test_tools::tolerance(1e-9));
            BOOST_TEST(cached.joined == static_cast<int>(seen.size()));
            joined_some += cached.joined > 0;
            const int per = 8 / static_cast<int>(cached.nodes.size());
            for (int v : cached.nodes) free[static_cast<std::size_t>(v)] -= per;
            s.add(id, cached.type, 8, cached.nodes);
            live.push_back(id);
            ++placed;
        }
        BOOST_TEST(placed > 50);       // the walk exercised the cache ...
        BOOST_TEST(joined_some > 20);  // ... with jobs sharing nodes
    }
}

// A node's version names its job list as a set: a plan that adds jobs and takes them away gives
// the versions back (cached node costs stay valid), and any other list gives another version.
BOOST_AUTO_TEST_CASE(node_versions_name_the_jobs_on_the_node) {
    NetState s(4, {0, 0, 1, 1});
    s.add(1, 0, 8, {0, 1});
    s.add(2, 1, 8, {1, 2});
    const std::uint64_t v0 = s.node_version(0), v1 = s.node_version(1), up = s.uplink_version();
    BOOST_TEST(v0 != 0u);
    BOOST_TEST(s.node_version(3) == 0u);  // empty
    s.add(7, 2, 4, {0, 1, 2});
    BOOST_TEST(s.node_version(0) != v0);
    BOOST_TEST(s.node_version(1) != v1);
    BOOST_TEST(s.uplink_version() != up);
    s.remove(7);
    BOOST_TEST(s.node_version(0) == v0);
    BOOST_TEST(s.node_version(1) == v1);
    BOOST_TEST(s.uplink_version() == up);
    // the same id with another type or GPU count is another list
    s.add(7, 3, 4, {0, 1});
    const std::uint64_t other_type = s.node_version(0);
    s.remove(7);
    s.add(7, 2, 8, {0, 1});
    BOOST_TEST(s.node_version(0) != other_type);
    BOOST_TEST(s.node_version(0) != v0);
    s.remove(7);
    // the order jobs came in does not matter; clearing gives an empty node's version
    s.remove(1);
    s.remove(2);
    s.add(2, 1, 8, {1, 2});
    s.add(1, 0, 8, {0, 1});
    BOOST_TEST(s.node_version(1) == v1);
    s.clear();
    BOOST_TEST(s.node_version(1) == 0u);
    BOOST_TEST(s.uplink_version() == 0u);
}

// A running job listed on a node index the state does not have (a host's mistake) is not added:
// nothing is written past the state's nodes (the sanitizer build would see it), and a round with
// such a job answers as if it were absent from the state.
BOOST_AUTO_TEST_CASE(a_job_on_a_node_the_state_lacks_is_not_added) {
    const PairTable t = small_table();
    NetState s(4);
    s.add(1, 0, 4, {0, 7});
    s.add(2, 0, 4, {-1, 2});
    BOOST_TEST(s.size() == 0u);
    for (int v = 0; v < 4; ++v) {
        BOOST_TEST(s.on_node(v).empty());
        BOOST_TEST(s.node_version(v) == 0u);
    }
    s.add(3, 0, 4, {1, 2});
    BOOST_TEST(s.size() == 1u);
    s.add(3, 0, 4, {1, 9});  // replaced by a job the state cannot hold: gone
    BOOST_TEST(s.size() == 0u);
    BOOST_TEST(s.on_node(1).empty());
    const ContentionModel add(t, {Rule::link_additive, 0.35});
    const std::vector<RoundNode> nodes = {{"n1", 4, true}, {"n2", 4, true}, {"n3", 4, true}, {"n4", 4, true}};
    const std::vector<RoundPending> pending = {{20, "A", 4, 2, 1.0, {}}};
    RoundCache carried;
    const auto bad = placement_round(add, nodes, {{7, "B", 4, {2, 40}}}, pending, 4.0, &carried);
    const auto none = placement_round(add, nodes, {}, pending, 4.0);
    BOOST_REQUIRE(bad.size() == 1u);
    BOOST_TEST(bad[0].pin);
    BOOST_TEST(bad[0].ratio == none[0].ratio);  // no sharer known
}

// Node costs kept from one state to the next (a plan's picks append a job to a node's list and
// its undo takes it away again; churn removes jobs) are exactly what a fresh computation gives:
// a cost extended by the appended job, or kept for the list before, is the same double.
BOOST_AUTO_TEST_CASE(kept_and_extended_node_costs_equal_fresh_ones) {
    const PairTable t = small_table();
    for (const Rule rule : {Rule::link_additive, Rule::min_pairwise}) {
        const ContentionModel m(t, {rule, 0.35});
        NetState s(10);
        NodeCosts kept;
        std::mt19937 rng(11);
        std::vector<std::uint32_t> live;
        std::uint32_t next = 1;
        int extended = 0;
        for (int step = 0; step < 400; ++step) {
            kept.rebind(m, s, t.fingerprint());
            const bool add = live.size() < 4 || rng() % 3 != 0;
            if (add) {
                std::vector<int> nodes;
                while (nodes.size() < 2 + rng() % 3) {
                    const int v = static_cast<int>(rng() % 10);
                    if (std::find(nodes.begin(), nodes.end(), v) == nodes.end()) nodes.push_back(v);
                }
                std::vector<std::uint64_t> before;
                for (int v : nodes) before.push_back(s.node_version(v));
                const int type = static_cast<int>(rng() % 4) - 1;  // -1: a type the table lacks
                s.add(next, type, 4, nodes);
                for (std::size_t i = 0; i < nodes.size(); ++i) {
                    BOOST_TEST(s.appended_over(nodes[i]) == before[i] + 1);
                    extended += s.appended_over(nodes[i]) != 0;
                }
                live.push_back(next++);
            } else {
                const std::size_t at = rng() % live.size();
                const NetState::Nodes nodes = s.job(live[at])->nodes;
                s.remove(live[at]);
                for (int v : nodes) BOOST_TEST(s.appended_over(v) == 0u);
                live.erase(live.begin() + static_cast<long>(at));
            }
            NodeCosts fresh(m, s);
            for (int type = -1; type < 3; ++type)
                for (int v = 0; v < 10; ++v) {
                    const NodeCosts::Cost a = kept.at(kept.slot(type), v), b = fresh.at(fresh.slot(type), v);
                    BOOST_TEST(a.own == b.own);  // the same double, not close
                    BOOST_TEST(a.caused == b.caused);
                }
        }
        BOOST_TEST(extended > 100);  // appends were exercised
    }
}

// Node costs made for several types in one pass over a node's jobs (cost_together, what a plan
// asks for its requests' types) are the doubles compute() makes for one type at a time, under
// either rule, with unknown types, and with jobs appended between scans (a plan's picks, which
// compute() extends for the type scanned).
BOOST_AUTO_TEST_CASE(node_costs_made_together_equal_those_made_one_type_at_a_time) {
    const PairTable t = small_table();
    for (const Rule rule : {Rule::link_additive, Rule::min_pairwise}) {
        const ContentionModel m(t, {rule, 0.35});
        std::mt19937 rng(rule == Rule::link_additive ? 3 : 4);
        std::size_t compared = 0;
        for (int round = 0; round < 40; ++round) {
            const int count = 24;
            NetState s(static_cast<std::size_t>(count));
            std::uint32_t id = 1;
            const auto add_job = [&] {
                std::vector<int> nodes;
                while (nodes.size() < 2 + rng() % 3) {
                    const int v = static_cast<int>(rng() % count);
                    if (std::find(nodes.begin(), nodes.end(), v) == nodes.end()) nodes.push_back(v);
                }
                s.add(id++, static_cast<int>(rng() % 4) - 1, 2 + 2 * static_cast<int>(rng() % 2), nodes);
            };
            for (int j = 0; j < 30; ++j) add_job();
            NodeCosts together(m, s);
            together.cost_together({-1, 0, 1, 2, 1});  // -1: a type the table lacks; 1 twice
            const std::vector<int> free(static_cast<std::size_t>(count), 4);
            for (int pick = 0; pick < 6; ++pick) {
                NodeCosts alone(m, s);
                for (int type = -1; type < 3; ++type) {
                    std::vector<std::pair<double, int>> a, b;
                    together.cheapest(together.slot(type), 4, 2, free, a);  // scans: costs made here
                    alone.cheapest(alone.slot(type), 4, 2, free, b);
                    BOOST_TEST(a == b);
                }
                for (int type = -1; type < 3; ++type)
                    for (int v = 0; v < count; ++v) {
                        const NodeCosts::Cost x = together.at(together.slot(type), v),
                                              y = alone.at(alone.slot(type), v);
                        BOOST_TEST(x.own == y.own);  // the same double, not close
                        BOOST_TEST(x.caused == y.caused);
                        ++compared;
                    }
                add_job();  // appended on a few nodes: kept costs extended or made again
            }
        }
        BOOST_TEST(compared == 40u * 6u * 4u * 24u);
    }
}

// A running job on more links than the loss cache keeps in place (8): its loss is the model's,
// under either rule, with and without leaf switches.
BOOST_AUTO_TEST_CASE(the_loss_of_a_job_on_many_links_is_the_models) {
    const PairTable t = small_table();
    for (const Rule rule : {Rule::link_additive, Rule::min_pairwise}) {
        for (const bool switches : {false, true}) {
            std::vector<int> leaf(16, -1);
            if (switches)
                for (int v = 0; v < 16; ++v) leaf[static_cast<std::size_t>(v)] = v / 2;  // 8 leaves
            NetState s(16, leaf);
            const ContentionModel m(t, {rule, 0.35});
            std::vector<int> wide;
            for (int v = 0; v < 12; ++v) wide.push_back(v);
            s.add(1, t.find("A,4,2"), 12, wide);  // 12 nodes (and 6 uplinks with switches)
            s.add(2, t.find("B,4,2"), 4, {12, 13});
            NodeCosts costs(m, s);
            for (int rep = 0; rep < 2; ++rep) {  // the second time from the kept loads
                const auto c = choose_placement(m, s, std::vector<int>(16, 2), {"B", 4, {2}}, &costs);
                BOOST_REQUIRE(c.found);
                double loss = 0.0;
                for (const auto& [jid, j] : s.jobs()) {
                    bool shares = false;
                    for (int v : j.nodes)
                        shares = shares || std::find(c.nodes.begin(), c.nodes.end(), v) != c.nodes.end();
                    const auto ups = s.uplinks_of(c.nodes);
                    for (int u : j.uplinks)
                        shares = shares || std::find(ups.begin(), ups.end(), u) != ups.end();
                    if (shares)
                        loss += j.gpus * std::max(0.0, m.ratio(s, jid) -
                                                           m.ratio_with_newcomer(s, jid, c.type, c.nodes));
                }
                BOOST_TEST(c.others_loss == loss, boost::test_tools::tolerance(1e-12));
                // forced onto the wide job's nodes: it loses something
                std::vector<int> only(16, 0);
                only[3] = only[4] = 2;
                const auto on = choose_placement(m, s, only, {"B", 4, {2}}, &costs);
                BOOST_REQUIRE(on.found);
                BOOST_TEST(on.joined >= 1);
                BOOST_TEST(
                    on.others_loss == 12 * (m.ratio(s, 1) - m.ratio_with_newcomer(s, 1, on.type, on.nodes)),
                    boost::test_tools::tolerance(1e-12));
                BOOST_TEST(on.others_loss > 0.0);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(placement_weighs_the_harm_done_to_running_jobs) {
    // C is hurt by nobody but hurts A badly; A runs on 0,1 and B on 2,3. C should join B.
    auto t = PairTable::from_csv(",x\n\"A,2,2\",1\n\"B,2,2\",1\n\"C,2,2\",1\n",
                                 ",\"A,2,2\",\"B,2,2\",\"C,2,2\"\n"
                                 "\"A,2,2\",1,1,0.4\n"
                                 "\"B,2,2\",1,1,0.95\n"
                                 "\"C,2,2\",1,1,1\n");
    BOOST_REQUIRE(t.ok());
    NetState s(4);
    s.add(1, t->find("A,2,2"), 2, {0, 1});
    s.add(2, t->find("B,2,2"), 2, {2, 3});
    const ContentionModel add(*t, {Rule::link_additive, 0.35});
    const auto c = choose_placement(add, s, {7, 7, 7, 7}, {"C", 2, {2}});
    BOOST_REQUIRE(c.found);
    BOOST_TEST((c.nodes == std::vector<int>{2, 3}));
    BOOST_TEST(c.joined == 1);
    BOOST_TEST(c.others_loss > 0.0);
}

BOOST_AUTO_TEST_CASE(estimator_learns_a_pair_from_reported_speeds) {
    PairTable prior;
    NetPairEstimator est(prior);
    BOOST_TEST(!est.observe_shared("X,4,2", {"Y,4,2"}, 50.0));  // nothing alone to compare with
    est.observe_alone("X,4,2", 100.0);
    est.observe_alone("X,4,2", 100.0);
    for (int i = 0; i < 20; ++i) BOOST_TEST(est.observe_shared("X,4,2", {"Y,4,2"}, 60.0));
    const PairTable& t = est.table();
    BOOST_TEST(*t.measured_ratio(t.find("X,4,2"), t.find("Y,4,2")) == 0.6,
               boost::test_tools::tolerance(1e-6));
    BOOST_TEST(est.observations("X,4,2", "Y,4,2") == 20u);
    // it keeps tracking a change
    for (int i = 0; i < 60; ++i) est.observe_shared("X,4,2", {"Y,4,2"}, 90.0);
    BOOST_TEST(*t.measured_ratio(t.find("X,4,2"), t.find("Y,4,2")) > 0.85);
    // out-of-range observations are ignored
    BOOST_TEST(!est.observe_shared("X,4,2", {"Y,4,2"}, 1000.0));
    // two sharers: the total is split; both pairs get a (smaller) estimate
    for (int i = 0; i < 30; ++i) est.observe_shared("X,4,2", {"Z,4,2", "W,4,2"}, 50.0);
    const double xz = t.stretch(t.find("X,4,2"), t.find("Z,4,2"));
    const double xw = t.stretch(t.find("X,4,2"), t.find("W,4,2"));
    BOOST_TEST(xz + xw == 1.0, boost::test_tools::tolerance(0.15));
}

BOOST_AUTO_TEST_CASE(deepshare_table_loads_and_the_rank1_fit_is_useful) {
    const std::string dir = std::string(EXPLSCHED_DATA_DIR) + "/network/";
    if (!std::filesystem::exists(dir + "shared_thp_ratio.csv")) {
        BOOST_TEST_MESSAGE("shared data not present: " << dir);
        return;
    }
    auto t = PairTable::load_files(dir + "isolated_thp.csv", dir + "shared_thp_ratio.csv");
    BOOST_REQUIRE_MESSAGE(t.ok(), (t.ok() ? std::string() : t.error().message));
    BOOST_TEST(t->size() == 36u);
    BOOST_TEST(t->measured_pairs() == 36u * 36u);
    BOOST_TEST(*t->isolated(t->find("MobileNetV3,2,2")) == 677.6);
    // the fit explains the table better than one constant ratio for every pair
    double mean = 0.0;
    for (std::size_t r = 0; r < t->size(); ++r)
        for (std::size_t c = 0; c < t->size(); ++c) mean += *t->measured_ratio(int(r), int(c));
    mean /= double(t->size() * t->size());
    double var = 0.0;
    for (std::size_t r = 0; r < t->size(); ++r)
        for (std::size_t c = 0; c < t->size(); ++c) {
            const double d = *t->measured_ratio(int(r), int(c)) - mean;
            var += d * d;
        }
    const double sd = std::sqrt(var / double(t->size() * t->size()));
    BOOST_TEST_MESSAGE("rank-1 fit rms " << t->fit_rms_error() << " vs constant " << sd);
    BOOST_TEST(t->fit_rms_error() < sd);
}

// A cache carried from round to round (NodeCosts::rebind; slurmctld keeps one) gives the answers a
// fresh round gives: over rounds whose running jobs change a little and are rebuilt each time, with
// both rules, and after the table itself changes (the cache is dropped, not trusted).
BOOST_AUTO_TEST_CASE(a_cache_carried_between_rounds_gives_what_a_fresh_round_gives) {
    PairTable t;
    const char* models[] = {"A", "B", "C", "D"};
    for (const char* m : models)
        for (int n : {2, 4}) t.intern(shape_key(m, 8, n));
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> ratio(0.4, 1.0);
    for (std::size_t r = 0; r < t.size(); ++r) {
        t.set_isolated(int(r), 60.0 + double(r));
        for (std::size_t c = 0; c < t.size(); ++c)
            if (rng() % 3) t.set_ratio(int(r), int(c), ratio(rng));
    }
    t.fit_factors();
    std::vector<RoundNode> nodes;
    for (int v = 0; v < 24; ++v) nodes.push_back({"n" + std::to_string(v), 8, true, v / 6});
    for (Rule rule : {Rule::link_additive, Rule::min_pairwise}) {
        RoundCache carried, carried8;
        // a model the table lacks until the first pass's round 32; in the second, it has it, and
        // round 32 sets the same ratios again but refits the table after round 25's change
        const char* late = "E";
        const bool first = rule == Rule::link_additive;
        std::vector<RoundRunning> running;
        std::uint32_t next = 1;
        int kept = 0, answers = 0, passed8 = 0;
        for (int round = 0; round < 40; ++round) {
            // a few running jobs end, a few start (on random nodes with room)
            for (int k = 0; k < 2 && !running.empty(); ++k)
                running.erase(running.begin() + static_cast<long>(rng() % running.size()));
            while (running.size() < 14) {
                const int n = rng() % 2 ? 2 : 4;
                std::vector<int> free(nodes.size(), 8);
                for (const auto& r : running)
                    for (int v : r.nodes) free[static_cast<std::size_t>(v)] -= r.gpus / int(r.nodes.size());
                std::vector<int> pick;
                for (int tries = 0; tries < 100 && int(pick.size()) < n; ++tries) {
                    const int v = int(rng() % nodes.size());
                    if (free[static_cast<std::size_t>(v)] >= 8 / n &&
                        std::find(pick.begin(), pick.end(), v) == pick.end())
                        pick.push_back(v);
                }
                if (int(pick.size()) < n) break;
                // a model the table lacks until round 32 (then learned: its jobs get a type)
                running.push_back({next++, rng() % 5 == 4 ? late : models[rng() % 4], 8, pick});
            }
            // now and then two running jobs trade nodes (ids kept, nodes changed: requeued and
            // started elsewhere); the carried state must move them
            if (round % 5 == 3 && running.size() >= 2) std::swap(running[0].nodes, running[1].nodes);
            if (round == 25) t.set_ratio(0, 1, rule == Rule::min_pairwise ? 0.43 : 0.41);  // as learning does
            if (round == 32) {  // learning meets a new model: new keys
                for (int n : {2, 4}) t.set_isolated(t.intern(shape_key(late, 8, n)), 70.0);
                t.set_ratio(t.find(shape_key(late, 8, 2)), 0, 0.45);
                t.set_ratio(1, t.find(shape_key(late, 8, 4)), 0.5);
                t.fit_factors();
            }
            const ContentionModel model(t, {rule, 0.35});
            std::vector<RoundPending> pending;
            for (int k = 0; k < 6; ++k)
                pending.push_back({1000u + std::uint32_t(k),
                                   models[rng() % 4],
                                   8,
                                   rng() % 2 ? 2 : 4,
                                   double(rng() % 10),
                                   {}});
            const auto fresh = placement_round(model, nodes, running, pending, 2.0);
            const auto warm = placement_round(model, nodes, running, pending, 2.0, &carried);
            BOOST_TEST_REQUIRE(fresh.size() == warm.size());
            for (std::size_t i = 0; i < fresh.size(); ++i) {
                BOOST_TEST(fresh[i].id == warm[i].id);
                BOOST_TEST(fresh[i].nodes == warm[i].nodes);
                BOOST_TEST(fresh[i].reason == warm[i].reason);
                BOOST_TEST(!fresh[i].passed);  // priority order passes nobody
                BOOST_TEST(fresh[i].passes == 0u);
                answers += fresh[i].pin;
            }
            // the planner's window, on nodes with half their GPUs held by single-node jobs (so
            // pending jobs compete): the same with a carried cache, and never over-books a node
            std::vector<RoundNode> half = nodes;
            for (auto& n : half) n.busy_gpus = 4;
            const auto fresh8 = placement_round(model, half, running, pending, 2.0, nullptr, 8);
            const auto warm8 = placement_round(model, half, running, pending, 2.0, &carried8, 8);
            BOOST_TEST_REQUIRE(fresh8.size() == warm8.size());
            std::vector<int> used(nodes.size(), 0);
            for (const auto& r : running)
                for (int v : r.nodes) used[static_cast<std::size_t>(v)] += r.gpus / int(r.nodes.size());
            std::vector<int> room(nodes.size());
            for (std::size_t v = 0; v < room.size(); ++v) room[v] = std::max(0, 4 - used[v]);
            std::fill(used.begin(), used.end(), 0);
            for (std::size_t i = 0; i < fresh8.size(); ++i) {
                BOOST_TEST(fresh8[i].nodes == warm8[i].nodes);
                BOOST_TEST(fresh8[i].reason == warm8[i].reason);
                for (int v : fresh8[i].nodes)
                    used[static_cast<std::size_t>(v)] += 8 / int(fresh8[i].nodes.size());
                passed8 += fresh8[i].passed;
                if (fresh8[i].passes != 0) {  // it names a higher job that was passed
                    const auto p = std::find_if(fresh8.begin(), fresh8.end(), [&](const RoundAnswer& a) {
                        return a.id == fresh8[i].passes;
                    });
                    BOOST_TEST_REQUIRE((p != fresh8.end()));
                    BOOST_TEST(p->passed);
                    BOOST_TEST((p < fresh8.begin() + long(i)));
                }
            }
            for (std::size_t v = 0; v < used.size(); ++v) BOOST_TEST(used[v] <= room[v]);
            // the cache was kept from round to round, until the table changed: a new ratio drops
            // the node costs but keeps the state (the same keys); new keys rebuild the state
            if (round == 24) kept = int(carried.costs().kept_rebinds());
            if (round == 24)
                BOOST_TEST(carried.kept_states() == 24u);  // the state was brought up to date, not rebuilt
            if (round == 25) BOOST_TEST(carried.costs().kept_rebinds() == 0u);
            if (round == 25) BOOST_TEST(carried.kept_states() == 25u);
            if (round == 31) BOOST_TEST(carried.kept_states() == 31u);
            if (round == 32) BOOST_TEST(carried.kept_states() == (first ? 0u : 32u));
            if (round == 32) BOOST_TEST(carried.costs().kept_rebinds() == 0u);
            if (round == 39) BOOST_TEST(carried.kept_states() == (first ? 7u : 39u));
        }
        BOOST_TEST(answers > 100);  // the rounds placed jobs ...
        BOOST_TEST(kept == 24);     // ... and the cache was kept across them
        BOOST_TEST(passed8 > 0);    // and the window passed some (the check above was exercised)
    }
    // anything else than the table, rule, floor, node count or uplink capacity it was bound with
    // drops it
    NodeCosts c;
    const ContentionModel m1(t, {Rule::link_additive, 0.35});
    NetState s1(24);
    BOOST_TEST(!c.rebind(m1, s1, t.fingerprint()));  // first bind: nothing to keep
    BOOST_TEST(c.rebind(m1, s1, t.fingerprint()));
    NetState s2(25);
    BOOST_TEST(!c.rebind(m1, s2, t.fingerprint()));
    const ContentionModel m2(t, {Rule::link_additive, 0.5});
    BOOST_TEST(!c.rebind(m2, s2, t.fingerprint()));
    BOOST_TEST(!c.rebind(m2, s2, t.fingerprint() + 1));
    s2.uplink_capacity = 1.0;
    BOOST_TEST(!c.rebind(m2, s2, t.fingerprint() + 1));
}

BOOST_AUTO_TEST_CASE(a_round_places_pending_jobs_in_priority_order_without_double_booking) {
    const PairTable t = small_table();
    const ContentionModel add(t, {Rule::link_additive, 0.35});
    const std::vector<RoundNode> nodes = {
        {"n1", 4, true}, {"n2", 4, true}, {"n3", 4, true}, {"n4", 4, false}};
    // B runs on n1,n2 with two GPUs each; two As (hurt by B) wait for 2 nodes x 2 GPUs.
    const std::vector<RoundRunning> running = {{7, "B", 4, {0, 1}}};
    std::vector<RoundPending> pending = {
        {10, "A", 4, 2, 5.0, {}}, {11, "A", 4, 2, 9.0, {}}, {12, "A", 3, 2, 1.0, {}}};
    const auto out = placement_round(add, nodes, running, pending);
    BOOST_REQUIRE(out.size() == 3u);
    BOOST_TEST(out[0].id == 11u);  // the higher priority first
    BOOST_TEST(out[0].pin);
    // n4 is unusable; n3 is B-free: the first A takes n3 and one of B's nodes, the second what is left
    BOOST_TEST((out[0].nodes_text == "n1,n3" || out[0].nodes_text == "n2,n3"));
    BOOST_TEST(out[1].id == 10u);
    BOOST_TEST(out[1].pin);
    std::vector<int> both = out[0].nodes;
    both.insert(both.end(), out[1].nodes.begin(), out[1].nodes.end());
    int on_n3 = 0;
    for (int v : both) on_n3 += v == 2;
    BOOST_TEST(on_n3 == 2);  // n3's two GPUs, one each; no node over-booked
    BOOST_TEST(out[2].id == 12u);
    BOOST_TEST(!out[2].pin);  // 3 GPUs over 2 nodes: not placed
    BOOST_TEST(out[0].reason.rfind("placement: nodes ", 0) == 0);
    // a CPU-only multi-node job: no pin, no reason (Slurm places it)
    const auto cpu = placement_round(add, nodes, running, {{13, "A", 0, 2, 1.0, {}}});
    BOOST_REQUIRE(cpu.size() == 1u);
    BOOST_TEST(!cpu[0].pin);
    BOOST_TEST(cpu[0].reason.empty());
}

// Model names are users' words: a user running job after job under a new name each round does not
// grow the carried cache past its bound, and the round's answers stay what a fresh round gives.
BOOST_AUTO_TEST_CASE(a_flood_of_model_names_keeps_the_round_cache_bounded_and_right) {
    const PairTable t = small_table();
    const ContentionModel add(t, {Rule::link_additive, 0.35});
    const std::vector<RoundNode> nodes = {{"n1", 4, true}, {"n2", 4, true}, {"n3", 4, true}, {"n4", 4, true}};
    RoundCache carried;
    std::size_t most = 0;
    const int rounds = static_cast<int>(RoundCache::kMaxModels) + 300;
    for (int r = 0; r < rounds; ++r) {
        // B on n1,n2; the flood's job of the round (a new name, a new id) on n2,n3
        const std::vector<RoundRunning> running = {
            {7, "B", 4, {0, 1}},
            {static_cast<std::uint32_t>(1000 + r), "flood" + std::to_string(r), 4, {1, 2}}};
        const std::vector<RoundPending> pending = {{10, "A", 4, 2, 5.0, {}}};
        const auto kept = placement_round(add, nodes, running, pending, 4.0, &carried, 8);
        const auto fresh = placement_round(add, nodes, running, pending, 4.0, nullptr, 8);
        BOOST_REQUIRE(kept.size() == 1u);
        BOOST_TEST(kept[0].nodes_text == fresh[0].nodes_text);
        BOOST_TEST(kept[0].reason == fresh[0].reason);
        most = std::max(most, carried.models_kept());
    }
    BOOST_TEST(most <= RoundCache::kMaxModels);
    BOOST_TEST(most >= RoundCache::kMaxModels - 1);  // it did fill up (and was emptied, not grown)
    BOOST_TEST(carried.kept_states() == static_cast<std::size_t>(rounds - 1));  // one state throughout
}

// Jobs of several models share a mask when their needs (CPUs, memory, allowed nodes) are the same
// and not otherwise: random rounds of mixed needs, each pin checked against what its job may use
// after the pins placed before it, and a carried cache answering what a fresh round does.
BOOST_AUTO_TEST_CASE(a_round_of_mixed_needs_pins_each_job_where_it_may_run) {
    const PairTable t = small_table();
    const ContentionModel add(t, {Rule::link_additive, 0.35});
    std::mt19937 rng(11);
    const std::vector<std::string> models = {"A", "B", "C"};  // C: not in the table
    RoundCache carried;
    carried.check_rankings(true);
    int pinned = 0, refused_somewhere = 0;
    for (int round = 0; round < 150; ++round) {
        std::vector<RoundNode> nodes(12);
        for (std::size_t v = 0; v < nodes.size(); ++v) {
            RoundNode& n = nodes[v];
            n.name = "n" + std::to_string(v + 1);
            n.gpus = 4;
            n.usable = rng() % 10 != 0;
            n.busy_gpus = static_cast<int>(rng() % 3);
            n.free_cpus = static_cast<int>(rng() % 9);
            n.mem_mb = 8000;
            n.free_mem_mb = static_cast<std::int64_t>(rng() % 3) * 4000;
        }
        std::vector<RoundRunning> running;
        for (std::uint32_t k = 0; k < 4; ++k) {
            const int a = static_cast<int>(rng() % 12), b = static_cast<int>((a + 1 + rng() % 11) % 12);
            running.push_back({100 + k, models[rng() % 3], 2, {a, b}});
        }
        std::vector<RoundPending> pending;
        for (std::uint32_t k = 0; k < 10; ++k) {
            RoundPending p;
            p.id = 10 + k;
            p.model = models[rng() % 3];
            p.gpus = 4;
            p.nodes = 2;
            p.priority = static_cast<double>(rng() % 5);
            p.cpus_per_node = static_cast<int>(rng() % 3) * 2;  // 0, 2 or 4
            p.mem_per_node_mb = rng() % 4 == 0 ? 2000 : 0;
            if (rng() % 3 == 0) {  // a partition of its own: every other node
                p.allowed.assign(12, false);
                for (std::size_t v = k % 2; v < 12; v += 2) p.allowed[v] = true;
            }
            pending.push_back(std::move(p));
        }
        const std::size_t window = std::vector<std::size_t>{1, 4, 64}[rng() % 3];
        const auto out = placement_round(add, nodes, running, pending, 4.0, &carried, window);
        const auto fresh = placement_round(add, nodes, running, pending, 4.0, nullptr, window);
        BOOST_REQUIRE(out.size() == pending.size());
        for (std::size_t i = 0; i < out.size(); ++i) {
            BOOST_TEST(out[i].nodes_text == fresh[i].nodes_text);
            BOOST_TEST(out[i].reason == fresh[i].reason);
        }
        // replay the pins in the order placed, each on what is left
        std::vector<int> gpus(12), cpus(12);
        std::vector<std::int64_t> mem(12);
        for (std::size_t v = 0; v < 12; ++v) {
            gpus[v] = nodes[v].gpus - nodes[v].busy_gpus;
            cpus[v] = nodes[v].free_cpus;
            mem[v] = nodes[v].free_mem_mb;
        }
        for (const RoundRunning& r : running)
            for (int v : r.nodes) gpus[static_cast<std::size_t>(v)] -= 1;
        std::vector<const RoundAnswer*> order;
        for (const RoundAnswer& a : out)
            if (a.pin) order.push_back(&a);
        std::sort(order.begin(), order.end(),
                  [](const RoundAnswer* x, const RoundAnswer* y) { return x->order < y->order; });
        for (const RoundAnswer* a : order) {
            const RoundPending& p = *std::find_if(pending.begin(), pending.end(),
                                                  [&](const RoundPending& q) { return q.id == a->id; });
            BOOST_REQUIRE(a->nodes.size() == 2u);
            for (int n : a->nodes) {
                const auto v = static_cast<std::size_t>(n);
                BOOST_TEST(nodes[v].usable);
                BOOST_TEST((p.allowed.empty() || p.allowed[v]), "job " << p.id << " pinned to n" << v + 1);
                BOOST_TEST(gpus[v] >= 2,
                           "job " << p.id << " on n" << v + 1 << " with " << gpus[v] << " GPUs");
                BOOST_TEST(cpus[v] >= p.cpus_per_node);
                BOOST_TEST(mem[v] >= p.mem_per_node_mb);
                gpus[v] -= 2;
                cpus[v] -= p.cpus_per_node;
                mem[v] -= p.mem_per_node_mb;
            }
            ++pinned;
        }
        for (const RoundAnswer& a : out) refused_somewhere += !a.pin;
    }
    BOOST_TEST(pinned > 300);             // the rounds placed jobs ...
    BOOST_TEST(refused_somewhere > 100);  // ... and ran out of room for some
    // rankings kept within a plan answered what a scan answers, and were used
    BOOST_TEST(carried.costs().mismatches() == 0u);
    BOOST_TEST(carried.costs().reranked() > 100u);
}

// Within a plan the node costs keep each request's ranking and re-rank only the nodes the state's
// change log names: random plans over a busy cluster (windows, backfill, undone plans between
// windows) answer, ranking by ranking, what a scan of every node answers.
BOOST_AUTO_TEST_CASE(rankings_kept_within_a_plan_answer_what_a_scan_answers) {
    const PairTable t = small_table();
    const ContentionModel add(t, {Rule::link_additive, 0.35});
    std::mt19937 rng(5);
    const std::vector<std::string> models = {"A", "B", "C"};
    NodeCosts costs;
    costs.check_rankings(true);
    std::size_t placed = 0;
    for (int round = 0; round < 60; ++round) {
        const std::size_t count = 40;
        NetState s(count);
        std::vector<int> free(count, 4);
        for (std::uint32_t id = 0; id < 30; ++id) {
            const int a = static_cast<int>(rng() % count),
                      b = static_cast<int>((a + 1 + rng() % (count - 1)) % count);
            if (free[static_cast<std::size_t>(a)] < 1 || free[static_cast<std::size_t>(b)] < 1) continue;
            --free[static_cast<std::size_t>(a)];
            --free[static_cast<std::size_t>(b)];
            s.add(id, t.find(shape_key(models[rng() % 2], 2, 2)), 2, {a, b});
        }
        std::vector<PlacementRequest> queue;
        for (int k = 0; k < 24; ++k) {
            const int n = rng() % 2 ? 2 : 4;
            queue.push_back({models[rng() % 3], 4, {n}});
        }
        PlanSettings ps;
        ps.windows = {1, 4, 16};
        ps.backfill = rng() % 2 == 0;
        const RoundPlan plan = plan_round(add, s, free, queue, ps, &costs);
        const RoundPlan fresh = plan_round(add, s, free, queue, ps);
        BOOST_REQUIRE(plan.placed.size() == fresh.placed.size());
        for (std::size_t i = 0; i < plan.placed.size(); ++i) {
            BOOST_TEST(plan.placed[i].index == fresh.placed[i].index);
            BOOST_TEST(plan.placed[i].choice.nodes == fresh.placed[i].choice.nodes);
        }
        placed += plan.placed.size();
    }
    BOOST_TEST(placed > 500u);
    BOOST_TEST(costs.mismatches() == 0u);
    BOOST_TEST(costs.reranked() > 500u);  // the kept rankings were used ...
    BOOST_TEST(costs.scanned() > 100u);   // ... and scans made them
}

BOOST_AUTO_TEST_CASE(a_windowed_round_places_the_cheaper_job_first_and_names_the_one_it_passes) {
    const PairTable t = small_table();
    const ContentionModel add(t, {Rule::link_additive, 0.35});
    // B runs on n1,n2 (two GPUs each); a single-node job holds two of n3's. Room for one 2 x 2 job.
    std::vector<RoundNode> nodes = {{"n1", 4, true}, {"n2", 4, true}, {"n3", 4, true}};
    nodes[2].busy_gpus = 2;
    const std::vector<RoundRunning> running = {{7, "B", 4, {0, 1}}};
    // J (A, hurt by B: 0.5) has the higher priority; K (B, barely hurt: 0.95) is cheaper per GPU.
    RoundPending j{20, "A", 4, 2, 9.0, {}}, k{21, "B", 4, 2, 1.0, {}};
    // window 1: priority order; J placed, K finds no room and passes nobody
    auto out = placement_round(add, nodes, running, {k, j});
    BOOST_REQUIRE(out.size() == 2u);
    BOOST_TEST(out[0].id == 20u);
    BOOST_TEST(out[0].pin);
    BOOST_TEST(out[0].passes == 0u);
    BOOST_TEST(!out[1].pin);
    BOOST_TEST(!out[1].passed);
    BOOST_TEST(out[1].reason == "placement: no 2 nodes with 2 free GPUs each now");
    // window 2: K first (less predicted loss per GPU), J passed; K names J
    out = placement_round(add, nodes, running, {k, j}, 4.0, nullptr, 2);
    BOOST_REQUIRE(out.size() == 2u);
    BOOST_TEST(out[0].id == 20u);  // answers stay in priority order
    BOOST_TEST(!out[0].pin);
    BOOST_TEST(out[0].passed);
    BOOST_TEST(out[0].reason == "placement: passed this round by JobId=21 (less predicted loss per GPU)");
    BOOST_TEST(out[1].pin);
    BOOST_TEST(out[1].order == 0u);
    BOOST_TEST(out[1].passes == 20u);
    BOOST_TEST(out[1].reason.find("; before JobId=20") != std::string::npos);
    // J overdue (passed long enough): placed before the plan, in priority order
    j.overdue = true;
    out = placement_round(add, nodes, running, {k, j}, 4.0, nullptr, 2);
    BOOST_TEST(out[0].pin);
    BOOST_TEST(!out[0].passed);
    BOOST_TEST(!out[1].pin);
    BOOST_TEST(out[1].passes == 0u);
    // a job that does not fit even alone is not passed, and a lower one placed beside it names none
    j.overdue = false;
    RoundPending big{22, "A", 8, 2, 50.0, {}};
    out = placement_round(add, nodes, running, {k, j, big}, 4.0, nullptr, 3);
    BOOST_REQUIRE(out.size() == 3u);
    BOOST_TEST(out[0].id == 22u);
    BOOST_TEST(!out[0].passed);
    BOOST_TEST(out[0].reason == "placement: no 2 nodes with 4 free GPUs each now");
    BOOST_TEST(out[2].passes == 20u);
}

BOOST_AUTO_TEST_CASE(a_round_counts_the_gpus_and_cpus_other_jobs_hold) {
    const PairTable t = small_table();
    const ContentionModel add(t, {Rule::link_additive, 0.35});
    // Four empty-looking nodes of 4 GPUs and 8 CPUs; single-node jobs hold n1's GPUs and n2's CPUs.
    std::vector<RoundNode> nodes = {{"n1", 4, true}, {"n2", 4, true}, {"n3", 4, true}, {"n4", 4, true}};
    for (auto& n : nodes) n.free_cpus = 8;
    nodes[0].busy_gpus = 4;
    nodes[1].free_cpus = 0;
    RoundPending a{10, "A", 4, 2, 1.0, {}, 1};
    auto out = placement_round(add, nodes, {}, {a});
    BOOST_REQUIRE(out.size() == 1u);
    BOOST_TEST(out[0].pin);
    BOOST_TEST(out[0].nodes_text == "n3,n4");
    // three such jobs: the second takes n3,n4's other two GPUs each, the third finds no node set
    RoundPending b = a, c = a;
    b.id = 11;
    c.id = 12;
    out = placement_round(add, nodes, {}, {a, b, c});
    BOOST_REQUIRE(out.size() == 3u);
    BOOST_TEST(out[0].pin);
    BOOST_TEST(out[1].pin);
    BOOST_TEST(out[1].nodes_text == "n3,n4");
    BOOST_TEST(!out[2].pin);
    BOOST_TEST(out[2].reason == "placement: no 2 nodes with 2 free GPUs and 1 free CPU each now");
    // CPUs: 4 per node on nodes with 5 free: one job, not two
    for (auto& n : nodes) n.free_cpus = 5;
    nodes[0].busy_gpus = 0;
    a.cpus_per_node = b.cpus_per_node = 4;
    out = placement_round(add, nodes, {}, {a, b});
    BOOST_TEST(out[0].pin);
    BOOST_TEST(out[1].pin);  // 4 nodes: the second takes the other two
    std::vector<int> used = out[0].nodes;
    used.insert(used.end(), out[1].nodes.begin(), out[1].nodes.end());
    std::sort(used.begin(), used.end());
    BOOST_TEST((used == std::vector<int>{0, 1, 2, 3}));
    // not counted (-1): as before, GPUs only
    for (auto& n : nodes) n.free_cpus = -1;
    out = placement_round(add, nodes, {}, {a, b, c});
    BOOST_TEST(out[2].pin);
    // memory (a consumable): 1000 MB per node fits only where 1000 MB are free; -1 (the whole
    // node's) only where no job holds any
    for (auto& n : nodes) {
        n.mem_mb = 4096;
        n.free_mem_mb = 596;
    }
    nodes[2].free_mem_mb = nodes[3].free_mem_mb = 4096;
    a.cpus_per_node = b.cpus_per_node = c.cpus_per_node = 0;
    a.mem_per_node_mb = b.mem_per_node_mb = 1000;
    c.mem_per_node_mb = -1;
    out = placement_round(add, nodes, {}, {a});
    BOOST_TEST(out[0].nodes_text == "n3,n4");
    out = placement_round(add, nodes, {}, {c});
    BOOST_TEST(out[0].nodes_text == "n3,n4");
    out = placement_round(add, nodes, {}, {a, c});  // after a, n3,n4 are no longer untouched
    BOOST_TEST(out[0].pin);
    BOOST_TEST(!out[1].pin);
    BOOST_TEST(out[1].reason == "placement: no 2 nodes with 2 free GPUs and all their memory free each now");
    // migration: a better set whose GPUs a single-node job holds is no better set
    const std::vector<RoundRunning> running = {{1, "A", 4, {0, 1}, 1}, {2, "B", 4, {0, 1}, 1}};
    std::vector<RoundNode> mig = {{"n1", 4, true}, {"n2", 4, true}, {"n3", 4, true}, {"n4", 4, true}};
    BOOST_TEST(choose_migration(add, mig, running, 0.6, 0.2, {}).has_value());
    mig[2].busy_gpus = 3;
    BOOST_TEST(!choose_migration(add, mig, running, 0.6, 0.2, {}).has_value());
    mig[2].busy_gpus = 0;
    mig[3].free_cpus = 0;
    BOOST_TEST(!choose_migration(add, mig, running, 0.6, 0.2, {}).has_value());
}

// The bound slurmctld splits a job array's tasks by (net_place.cpp): jobs of one shape the free
// GPUs (or CPUs) would hold now, nodes shared.
BOOST_AUTO_TEST_CASE(jobs_that_fit_counts_free_gpus_of_allowed_usable_nodes) {
    std::vector<RoundNode> nodes = {{"n1", 4, true}, {"n2", 4, true}, {"n3", 4, true}, {"n4", 4, true}};
    const std::vector<RoundRunning> running = {{1, "A", 4, {0, 1}, 1}};  // 2 GPUs on n1 and n2
    nodes[2].busy_gpus = 4;                                              // a single-node job holds n3
    std::vector<int> free = free_gpus(nodes, running);
    BOOST_TEST((free == std::vector<int>{2, 2, 0, 4}));
    RoundPending half{10, "A", 4, 2, 1.0, {true, true, true, true}};  // 2 GPUs on each of 2 nodes
    BOOST_TEST(jobs_that_fit(half, nodes, free) == 2u);               // slots 1 + 1 + 0 + 2, over 2
    RoundPending whole = half;
    whole.gpus = 8;  // 4 on each: n4 alone has them, no pair
    BOOST_TEST(jobs_that_fit(whole, nodes, free) == 0u);
    half.allowed[3] = false;  // excluded: n4's slots go
    BOOST_TEST(jobs_that_fit(half, nodes, free) == 1u);
    half.allowed[3] = true;
    nodes[3].usable = false;  // down or drained
    BOOST_TEST(jobs_that_fit(half, nodes, free) == 1u);
    nodes[3].usable = true;
    // an over-full node counts no slot, not a negative one
    nodes[0].busy_gpus = 3;
    free = free_gpus(nodes, running);
    BOOST_TEST(free[0] == -1);
    BOOST_TEST(jobs_that_fit(half, nodes, free) == 1u);  // 0 + 1 + 0 + 2, over 2
    // without GPUs: free CPUs, per node; a node whose CPUs are not counted holds one
    RoundPending cpu{11, "C", 0, 2, 1.0, {true, true, true, true}, 4};
    for (auto& n : nodes) n.free_cpus = 8;
    BOOST_TEST(jobs_that_fit(cpu, nodes, free) == 4u);  // 2 per node, 8 slots, over 2
    nodes[0].free_cpus = nodes[1].free_cpus = -1;
    BOOST_TEST(jobs_that_fit(cpu, nodes, free) == 3u);  // 1 + 1 + 2 + 2
}

BOOST_AUTO_TEST_CASE(a_round_with_leaf_switches_keeps_a_job_under_one_switch) {
    // n1,n2 under switch 0, n3,n4 under switch 1. B runs on n1 and n3, so its traffic crosses
    // both uplinks; A (hurt by B) needs two nodes. The B-free pair n2,n4 crosses both uplinks too:
    // with thin uplinks (capacity 1) that is as bad as sharing a node with B.
    const PairTable t = small_table();
    const ContentionModel add(t, {Rule::link_additive, 0.0});
    std::vector<RoundNode> nodes = {
        {"n1", 4, true, 0}, {"n2", 4, true, 0}, {"n3", 4, true, 1}, {"n4", 4, true, 1}};
    const std::vector<RoundRunning> running = {{7, "B", 4, {0, 2}}};
    const std::vector<RoundPending> pending = {{10, "A", 4, 2, 1.0, {}}};
    const auto flat = placement_round(add, nodes, running, pending, 1.0);
    BOOST_REQUIRE(flat.size() == 1u);
    BOOST_TEST(flat[0].pin);
    BOOST_TEST(flat[0].ratio == 0.5,
               boost::test_tools::tolerance(1e-9));  // shares an uplink or a node with B
    // fat uplinks: the B-free pair across switches is nearly free
    const auto fat = placement_round(add, nodes, running, pending, 100.0);
    BOOST_TEST(fat[0].nodes_text == "n2,n4");
    BOOST_TEST(fat[0].ratio > 0.95);
    // without switches the same pair is entirely free
    for (auto& n : nodes) n.leaf = -1;
    const auto none = placement_round(add, nodes, running, pending, 1.0);
    BOOST_TEST(none[0].nodes_text == "n2,n4");
    BOOST_TEST(none[0].ratio == 1.0);
}

BOOST_AUTO_TEST_CASE(migration_moves_the_worst_placed_job_when_a_clearly_better_set_is_free) {
    const PairTable t = small_table();
    const ContentionModel add(t, {Rule::link_additive, 0.0});
    const std::vector<RoundNode> nodes = {{"n1", 4, true}, {"n2", 4, true}, {"n3", 4, true}, {"n4", 4, true}};
    // A (hurt by B: 0.5) shares n1,n2 with B; n3,n4 are free.
    const std::vector<RoundRunning> running = {{1, "A", 4, {0, 1}}, {2, "B", 4, {0, 1}}};
    BOOST_TEST(!choose_migration(add, nodes, running, 0.0, 0.2, {}).has_value());  // off
    BOOST_TEST(!choose_migration(add, nodes, running, 0.4, 0.2, {}).has_value());  // 0.5 is not below 0.4
    const auto m = choose_migration(add, nodes, running, 0.6, 0.2, {});
    BOOST_REQUIRE(m.has_value());
    BOOST_TEST(m->id == 1u);
    BOOST_TEST(m->nodes_text == "n3,n4");
    BOOST_TEST(m->ratio_now == 0.5, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(m->reason == "migrate: predicted 0.50 of isolated here, 1.00 on n3,n4");
    BOOST_TEST(!choose_migration(add, nodes, running, 0.6, 0.2, {1}).has_value());  // moved recently
    // nowhere better: n3,n4 down
    std::vector<RoundNode> busy = nodes;
    busy[2].usable = busy[3].usable = false;
    BOOST_TEST(!choose_migration(add, busy, running, 0.6, 0.2, {}).has_value());
    // a margin larger than the gain
    BOOST_TEST(!choose_migration(add, nodes, running, 0.6, 0.6, {}).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
