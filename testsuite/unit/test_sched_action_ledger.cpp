#define BOOST_TEST_MODULE test_sched_action_ledger
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "core/sched/action_ledger.hpp"
#include "temp_dir.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(action_ledger)

BOOST_AUTO_TEST_CASE(an_instance_is_acted_on_once_and_a_reused_id_is_another_job) {
    ActionLedger l;
    BOOST_TEST(l.record({42, 1000}, {LedgerAction::held, 5, 1001, 0}));
    BOOST_TEST(!l.record({42, 1000}, {LedgerAction::cancelled, 6, 1001, 0}));
    BOOST_TEST(l.acted({42, 1000}, 1001, 0));
    // requeued since (new submit time, more restarts): the same job
    BOOST_TEST(l.acted({42, 2000}, 1001, 1));
    // a reused id: fresh submission (no restarts), or another owner
    BOOST_TEST(!l.acted({42, 2000}, 1001, 0));
    BOOST_TEST(!l.acted({42, 1000}, 1002, 0));
    BOOST_TEST(!l.acted({43, 1000}, 1001, 0));
}

BOOST_AUTO_TEST_CASE(restore_job_undoes_a_record_and_an_update_of_that_job_only) {
    ActionLedger l;
    l.record({42, 1000}, {LedgerAction::paused, 5, 1001, 0});
    l.update({42, 1000}, 1001, 0, LedgerAction::resumed, 6);
    l.record({43, 1000}, {LedgerAction::held, 5, 1002, 0});
    l.pin({42, 1000}, 1001, 0, 4);
    const ActionLedger before = l;
    // an act that failed: job 42 paused again (replaces the resumed entry), job 44 new, 43 updated
    BOOST_TEST(l.record({42, 1000}, {LedgerAction::paused, 7, 1001, 0}));
    BOOST_TEST(l.record({44, 3000}, {LedgerAction::paused, 7, 1003, 0}));
    BOOST_TEST(l.update({43, 1000}, 1002, 0, LedgerAction::cancelled, 7));
    BOOST_TEST(l.acted({42, 1000}, 1001, 0));
    l.restore_job(before, 42);
    l.restore_job(before, 44);
    BOOST_TEST(!l.acted({42, 1000}, 1001, 0));
    BOOST_TEST(l.pauses({42, 1000}, 1001, 0) == 1u);
    BOOST_REQUIRE(l.latest({42, 1000}, 1001, 0) != nullptr);
    BOOST_TEST(l.latest({42, 1000}, 1001, 0)->when == 6);
    BOOST_TEST(l.latest({44, 3000}, 1003, 0) == nullptr);
    // job 43's act went through: its update stays; the pin was never touched
    BOOST_REQUIRE(l.latest({43, 1000}, 1002, 0) != nullptr);
    BOOST_TEST((l.latest({43, 1000}, 1002, 0)->action == LedgerAction::cancelled));
    BOOST_TEST(l.pinned({42, 1000}, 1001, 0) != nullptr);
    BOOST_TEST(l.size() == 3u);
}

BOOST_AUTO_TEST_CASE(saved_atomically_and_loaded_back) {
    TempDir dir;
    const std::string path = (dir.path / "explsched_actions").string();
    auto empty = ActionLedger::load(path);
    BOOST_REQUIRE(empty);
    BOOST_TEST(empty->size() == 0u);
    ActionLedger l;
    l.record({7, 100}, {LedgerAction::requeued_held, 9, 1001, 2});
    l.record({8, 200}, {LedgerAction::cancelled, 10, 1002, 0});
    BOOST_REQUIRE(l.save(path));
    BOOST_TEST(!std::filesystem::exists(path + ".new"));
    auto back = ActionLedger::load(path);
    BOOST_REQUIRE(back);
    BOOST_TEST(back->size() == 2u);
    BOOST_TEST(back->acted({7, 100}, 1001, 2));
    BOOST_TEST(back->serialize() == l.serialize());
    BOOST_TEST(((std::filesystem::status(path).permissions() & std::filesystem::perms::others_read) ==
                std::filesystem::perms::none));
    l.retain([](const JobInstance& j, const LedgerEntry&) { return j.job_id == 8; });
    BOOST_REQUIRE(l.save(path));
    BOOST_TEST(ActionLedger::load(path)->size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_damaged_file_is_an_error_naming_the_line) {
    TempDir dir;
    const std::string path = (dir.path / "explsched_actions").string();
    std::ofstream(path) << "explsched-actions 1\n7 100 held 9 1001 0\n8 200 vanished 9 1001 0\n";
    auto r = ActionLedger::load(path);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().message.find(":3:") != std::string::npos);
    std::ofstream(path) << "something else\n";
    BOOST_TEST(!ActionLedger::load(path));
}

BOOST_AUTO_TEST_CASE(pins_are_kept_apart_from_hopeless_actions_and_survive_a_save) {
    TempDir dir;
    const std::string path = (dir.path / "explsched_actions").string();
    ActionLedger l;
    l.pin({7, 100}, 1001, 0, 50);
    BOOST_TEST(!l.acted({7, 100}, 1001, 0));  // a pin is not a hopeless action
    BOOST_REQUIRE(l.pinned({7, 100}, 1001, 0) != nullptr);
    BOOST_TEST(l.pinned({7, 100}, 1002, 0) == nullptr);  // another owner: a reused id
    BOOST_TEST(l.pinned({7, 160}, 1001, 1) != nullptr);  // requeued since: still the same job
    BOOST_TEST(l.pinned({7, 160}, 1001, 0) == nullptr);  // a new job with the old id
    // the same instance may also be acted on
    BOOST_TEST(l.record({7, 100}, {LedgerAction::held, 60, 1001, 0}));
    BOOST_TEST(l.acted({7, 100}, 1001, 0));
    BOOST_REQUIRE(l.save(path));
    auto back = ActionLedger::load(path);
    BOOST_REQUIRE(back);
    BOOST_TEST(back->pins().size() == 1u);
    BOOST_TEST(back->entries().size() == 1u);
    BOOST_TEST(back->pinned({7, 100}, 1001, 0)->when == 50);
    BOOST_TEST(back->serialize() == l.serialize());
    BOOST_TEST(back->unpin({7, 160}));  // forgets the pin of an earlier instance too
    BOOST_TEST(back->pinned({7, 100}, 1001, 0) == nullptr);
    BOOST_TEST(back->acted({7, 100}, 1001, 0));
    // retain drops pins of jobs slurmctld no longer knows
    l.retain([](const JobInstance& j, const LedgerEntry&) { return j.job_id != 7; });
    BOOST_TEST(l.size() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
