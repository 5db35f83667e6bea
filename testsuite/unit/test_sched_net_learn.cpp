#define BOOST_TEST_MODULE test_sched_net_learn
// NetLearner: the pair table learned from running multi-node jobs' reported speeds.
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
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

// A prior that knows Bully and Victim (harmless to each other) and one measured pair.
PairTable prior_table(double bully_on_victim = 1.0) {
    const std::string iso = "model,thp\n\"Bully,4,2\",100\n\"Victim,4,2\",80\n\"Other,4,2\",50\n";
    const std::string rat =
        ",\"Bully,4,2\",\"Victim,4,2\",\"Other,4,2\"\n"
        "\"Bully,4,2\",1.0,1.0,\n"
        "\"Victim,4,2\"," +
        std::to_string(bully_on_victim) + ",1.0,0.9\n\"Other,4,2\",,0.8,\n";
    auto t = PairTable::from_csv(iso, rat);
    BOOST_REQUIRE(t);
    return std::move(t).value();
}

// A learner that learned Victim alone (10), Victim beside Bully (4: 0.4), Victim beside a type the
// prior lacks (New), and beside Bully and New at once.
NetLearner taught(const PairTable& prior, LearnSettings s = {}) {
    NetLearner l(prior, s);
    Curves c;
    for (int round = 0; round < 4; ++round) {
        c.report(1, 10.0);
        l.round({{1, "Victim", 4, {2, 3}}}, c.lookup());
    }
    for (int round = 0; round < 5; ++round) {
        c.report(1, 4.0);
        l.round({{1, "Victim", 4, {2, 3}}, {2, "Bully", 4, {2, 3}}}, c.lookup());
    }
    for (int round = 0; round < 4; ++round) {
        c.report(1, 7.0);
        l.round({{1, "Victim", 4, {2, 3}}, {3, "New", 4, {3, 4}}}, c.lookup());
    }
    for (int round = 0; round < 4; ++round) {
        c.report(1, 3.0);
        l.round({{1, "Victim", 4, {2, 3}}, {2, "Bully", 4, {2, 5}}, {3, "New", 4, {3, 4}}}, c.lookup());
    }
    return l;
}

// Every stretch (measured or fitted) of two tables with the same keys agrees.
void same_predictions(const PairTable& a, const PairTable& b) {
    BOOST_REQUIRE(a.size() == b.size());
    BOOST_TEST(a.measured_pairs() == b.measured_pairs());
    for (std::size_t r = 0; r < a.size(); ++r) {
        BOOST_TEST(a.key(static_cast<int>(r)) == b.key(static_cast<int>(r)));
        for (std::size_t c = 0; c < a.size(); ++c)
            BOOST_TEST(a.stretch(static_cast<int>(r), static_cast<int>(c)) ==
                           b.stretch(static_cast<int>(r), static_cast<int>(c)),
                       boost::test_tools::tolerance(1e-9));
    }
    BOOST_TEST(a.stretch(PairTable::unknown, PairTable::unknown) ==
                   b.stretch(PairTable::unknown, PairTable::unknown),
               boost::test_tools::tolerance(1e-9));
}

// The learner's state with `edit` applied to its JSON, restored into a fresh learner: the error.
std::string refused(const std::function<void(nlohmann::json&)>& edit, LearnSettings s = {}) {
    const PairTable prior = prior_table();
    nlohmann::json doc = nlohmann::json::parse(taught(prior, s).to_json());
    edit(doc);
    NetLearner fresh(prior, s);
    auto r = fresh.restore(doc.dump());
    if (r) return "(accepted)";
    // refused: nothing of it was taken
    BOOST_TEST(fresh.observations() == 0u);
    BOOST_TEST(fresh.table().size() == prior.size());
    BOOST_TEST(fresh.table().fingerprint() == prior.fingerprint());
    return r.error().message;
}

std::string temp_dir() {
    char tmpl[] = "/tmp/test_net_learn.XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    BOOST_REQUIRE(d != nullptr);
    return d;
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

BOOST_AUTO_TEST_CASE(the_learned_state_round_trips_with_the_same_predictions_and_next_update) {
    const PairTable prior = prior_table();
    NetLearner a = taught(prior);
    BOOST_REQUIRE(a.table().size() == prior.size() + 1);  // New
    BOOST_REQUIRE(a.observations() > 10u);
    const std::string text = a.to_json();
    NetLearner b(prior);
    auto r = b.restore(text);
    BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    BOOST_TEST(!r->other_prior);
    BOOST_TEST(r->types == 1u);
    BOOST_TEST(r->pairs == 2u);  // Victim beside Bully, beside New
    BOOST_TEST(r->observations == a.observations());
    BOOST_TEST(b.observations() == a.observations());
    same_predictions(a.table(), b.table());
    BOOST_TEST(learned(b, "Victim,4,2", "Bully,4,2") == learned(a, "Victim,4,2", "Bully,4,2"),
               boost::test_tools::tolerance(1e-12));
    // saved again: the same state
    nlohmann::json ja = nlohmann::json::parse(text), jb = nlohmann::json::parse(b.to_json());
    BOOST_TEST(ja["types"] == jb["types"]);
    BOOST_TEST(ja["alone"] == jb["alone"]);
    BOOST_TEST(ja["pairs"].size() == jb["pairs"].size());
    for (std::size_t i = 0; i < ja["pairs"].size(); ++i) {
        BOOST_TEST(ja["pairs"][i]["observations"] == jb["pairs"][i]["observations"]);
        BOOST_TEST(ja["pairs"][i]["ratio"].get<double>() == jb["pairs"][i]["ratio"].get<double>(),
                   boost::test_tools::tolerance(1e-12));
    }
    // the next update: a new Victim job (never alone: compared with the type's restored mean)
    // beside Bully moves the pair by the same weight in both (the counts came back too)
    Curves c;
    std::vector<std::string> la, lb;
    for (int round = 0; round < 3; ++round) {
        c.report(9, 2.0);
        const std::vector<RoundRunning> run{{9, "Victim", 4, {6, 7}}, {8, "Bully", 4, {6, 7}}};
        la = a.round(run, c.lookup());
        lb = b.round(run, c.lookup());
        BOOST_TEST(la == lb);
    }
    BOOST_REQUIRE(!la.empty());
    BOOST_TEST(la.back().find("0.20 of alone") != std::string::npos);
    BOOST_TEST(a.observations() == b.observations());
    same_predictions(a.table(), b.table());
}

// The fingerprint kept since the last refit follows every change made after it: a copy changed
// and not refitted hashes like a table built with that change (a stale one would keep a learned
// state or a placement round's caches on a table they were not made on).
BOOST_AUTO_TEST_CASE(the_kept_fingerprint_follows_every_change) {
    const PairTable half = prior_table(0.5);
    PairTable t = prior_table(1.0);
    const std::uint64_t before = t.fingerprint();
    t.set_ratio(t.find("Victim,4,2"), t.find("Bully,4,2"), 0.5);  // not refitted
    BOOST_TEST(t.fingerprint() != before);
    BOOST_TEST(t.fingerprint() == half.fingerprint());
    t.fit_factors();
    BOOST_TEST(t.fingerprint() == half.fingerprint());
    t.set_isolated(t.find("Other,4,2"), 51.0);
    const std::uint64_t faster = t.fingerprint();
    BOOST_TEST(faster != half.fingerprint());
    t.intern("New,8,2");
    BOOST_TEST(t.fingerprint() != faster);
    t.set_isolated(t.find("Other,4,2"), 50.0);
    BOOST_TEST(t.fingerprint() != half.fingerprint());  // a type more than `half`
}

BOOST_AUTO_TEST_CASE(a_state_saved_against_another_prior_is_not_used) {
    const std::string text = taught(prior_table(1.0)).to_json();
    const PairTable other = prior_table(0.5);  // the admin changed net_table
    BOOST_TEST(other.fingerprint() != prior_table(1.0).fingerprint());
    BOOST_TEST(prior_table(1.0).fingerprint() == prior_table(1.0).fingerprint());
    NetLearner l(other);
    auto r = l.restore(text);
    BOOST_REQUIRE(r);
    BOOST_TEST(r->other_prior);
    BOOST_TEST(l.observations() == 0u);
    BOOST_TEST(l.table().fingerprint() == other.fingerprint());
    // and an empty prior (no net_table) is another prior too
    NetLearner none(PairTable{});
    auto n = none.restore(text);
    BOOST_REQUIRE(n);
    BOOST_TEST(n->other_prior);
    // a learner that learned already refuses to be overwritten
    NetLearner busy = taught(prior_table(1.0));
    auto b = busy.restore(text);
    BOOST_REQUIRE(!b);
    BOOST_TEST(b.error().message.find("learned already") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_damaged_state_is_refused_naming_the_problem) {
    const PairTable prior = prior_table();
    const std::string text = taught(prior).to_json();
    const auto refuse_text = [&](const std::string& t) {
        NetLearner l(prior);
        auto r = l.restore(t);
        BOOST_TEST(l.observations() == 0u);
        return r ? std::string("(accepted)") : r.error().message;
    };
    BOOST_TEST(refuse_text(text.substr(0, text.size() / 2)).find("not valid JSON") != std::string::npos);
    BOOST_TEST(refuse_text("\x7f\x45\x4c\x46 garbage").find("not valid JSON") != std::string::npos);
    BOOST_TEST(refuse_text("[1, 2]").find("not a JSON object") != std::string::npos);
    BOOST_TEST(refuse_text(std::string(5u << 20, ' ')).find("more than 4 MiB") != std::string::npos);
    BOOST_TEST(refuse_text(std::string(100000, '[')).find("nested deeper") != std::string::npos);
    std::string nan_text = text;
    const auto at = nan_text.find("\"ratio\": ");
    BOOST_REQUIRE(at != std::string::npos);
    nan_text.insert(at + 9, "NaN, \"x\": ");
    BOOST_TEST(refuse_text(nan_text).find("not valid JSON") != std::string::npos);

    using json = nlohmann::json;
    BOOST_TEST(refused([](json& d) { d["format"] = "something-else"; }).find("format") != std::string::npos);
    BOOST_TEST(refused([](json& d) { d["version"] = 2; }).find("version 1") != std::string::npos);
    BOOST_TEST(refused([](json& d) { d["pairs"][0]["ratio"] = 1.5; }).find("pairs[0]") != std::string::npos);
    BOOST_TEST(refused([](json& d) { d["pairs"][0]["ratio"] = 1.5; }).find("not in (0, 1]") !=
               std::string::npos);
    BOOST_TEST(refused([](json& d) { d["pairs"][1]["ratio"] = 0.0; }).find("not in (0, 1]") !=
               std::string::npos);
    BOOST_TEST(refused([](json& d) {
                   d["pairs"][0]["ratio"] = std::numeric_limits<double>::infinity();
               }).find("'ratio' is a null") != std::string::npos);  // JSON has no infinity
    BOOST_TEST(refused([](json& d) { d["pairs"][0]["ratio"] = "0.5"; }).find("'ratio' is a string") !=
               std::string::npos);
    BOOST_TEST(refused([](json& d) { d["pairs"][0]["observations"] = -3; }).find("not a count") !=
               std::string::npos);
    BOOST_TEST(refused([](json& d) {
                   d["pairs"][0]["observations"] = 0;
               }).find("observations out of range") != std::string::npos);
    BOOST_TEST(refused([](json& d) {
                   d["pairs"][0]["observations"] = std::uint64_t{1} << 50;
               }).find("not a count") != std::string::npos);
    BOOST_TEST(refused([](json& d) { d["pairs"][0]["col"] = "Ghost,4,2"; }).find("not a type of the table") !=
               std::string::npos);
    BOOST_TEST(refused([](json& d) { d["pairs"].push_back(d["pairs"][0]); }).find("twice") !=
               std::string::npos);
    BOOST_TEST(refused([](json& d) { d["types"].push_back("Victim,4,2"); }).find("twice") !=
               std::string::npos);
    BOOST_TEST(refused([](json& d) { d["types"].push_back(std::string(2000, 'k')); }).find("2000 bytes") !=
               std::string::npos);
    BOOST_TEST(refused([](json& d) {
                   d["alone"][0]["steps_per_s"] = -1.0;
               }).find("not finite and positive") != std::string::npos);
    BOOST_TEST(refused([](json& d) { d.erase("pairs"); }).find("no 'pairs'") != std::string::npos);
    BOOST_TEST(refused([](json& d) { d["prior"] = 7; }).find("'prior' is a number") != std::string::npos);
    // too many types: beyond max_types (8 here: the prior's 3, New, and 5 more)
    LearnSettings small;
    small.estimator.max_types = 8;
    BOOST_TEST(refused(
                   [](json& d) {
                       for (int i = 0; i < 5; ++i) d["types"].push_back("T" + std::to_string(i) + ",4,2");
                   },
                   small)
                   .find("more than max_types 8") != std::string::npos);
    BOOST_TEST(refused(
                   [](json& d) {
                       for (int i = 0; i < 9; ++i)
                           d["alone"].push_back(
                               {{"key", "A" + std::to_string(i)}, {"steps_per_s", 1.0}, {"observations", 1}});
                   },
                   small)
                   .find("more than 8") != std::string::npos);
    // one within bounds is accepted (the checks above are not refusing everything)
    BOOST_TEST(refused([](json& d) { d["types"].push_back("T,4,2"); }) == "(accepted)");
}

BOOST_AUTO_TEST_CASE(the_state_file_is_written_atomically_private_and_read_back_bounded) {
    const PairTable prior = prior_table();
    const NetLearner a = taught(prior);
    const std::string dir = temp_dir();
    const std::string path = dir + "/explsched_net_learned.json";
    NetLearner none(prior);
    auto missing = load_state(none, path);
    BOOST_REQUIRE(missing);
    BOOST_TEST(!missing->has_value());
    BOOST_REQUIRE(save_state(a, path));
    struct stat st {};
    BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 0777) == 0600u);
    BOOST_TEST(::access((path + ".tmp").c_str(), F_OK) != 0);
    NetLearner b(prior);
    auto r = load_state(b, path);
    BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    BOOST_REQUIRE(r->has_value());
    BOOST_TEST((*r)->observations == a.observations());
    same_predictions(a.table(), b.table());
    // over the size cap: refused before reading
    {
        std::ofstream big(path, std::ios::trunc);
        big << std::string((4u << 20) + 1, ' ');
    }
    NetLearner c(prior);
    auto over = load_state(c, path);
    BOOST_REQUIRE(!over);
    BOOST_TEST(over.error().message.find("more than 4 MiB") != std::string::npos);
    // a symlink is not followed
    BOOST_REQUIRE(::unlink(path.c_str()) == 0);
    BOOST_REQUIRE(::symlink("/etc/passwd", path.c_str()) == 0);
    auto link = load_state(c, path);
    BOOST_REQUIRE(!link);
    BOOST_TEST(link.error().message.find("cannot open") != std::string::npos);
    // a directory that cannot be written: an error, not a throw
    BOOST_TEST(!save_state(a, dir + "/no/such/dir/state.json"));
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
}

BOOST_AUTO_TEST_SUITE_END()
