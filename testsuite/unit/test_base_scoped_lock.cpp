#define BOOST_TEST_MODULE test_base_scoped_lock
#include <boost/test/unit_test.hpp>

#include <new>
#include <stdexcept>

#include "core/base/scoped_lock.hpp"

namespace {

// A C-style lock API, as slurmctld's: the levels by value, a global that tells what is held.
struct FakeLevels {
    int job = 0;
    int node = 0;
};
int g_job_held = 0;
int g_node_held = 0;
int g_releases = 0;
void fake_lock(FakeLevels l) {
    g_job_held += l.job;
    g_node_held += l.node;
}
void fake_unlock(FakeLevels l) {
    g_job_held -= l.job;
    g_node_held -= l.node;
    ++g_releases;
}
// As assoc_mgr_lock: through a pointer.
int g_assoc_held = 0;
void fake_assoc_lock(int* levels) { g_assoc_held += *levels; }
void fake_assoc_unlock(int* levels) { g_assoc_held -= *levels; }

using FakeLocks = explsched::ScopedCLock<FakeLevels, fake_lock, fake_unlock>;
using FakeAssocLocks = explsched::ScopedCLock<int*, fake_assoc_lock, fake_assoc_unlock>;

void reset() { g_job_held = g_node_held = g_releases = g_assoc_held = 0; }

// The shape of a re-ranking round: locks taken, then something in the locked section throws.
void round_that_throws(bool alloc) {
    FakeLocks locks({1, 1});
    BOOST_TEST(g_job_held == 1);
    BOOST_TEST(g_node_held == 1);
    if (alloc) throw std::bad_alloc();
    throw std::runtime_error("evaluate failed");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(base_scoped_lock)

BOOST_AUTO_TEST_CASE(held_for_the_scope_and_released_at_its_end) {
    reset();
    {
        FakeLocks locks({1, 0});
        BOOST_TEST(locks.held());
        BOOST_TEST(g_job_held == 1);
    }
    BOOST_TEST(g_job_held == 0);
    BOOST_TEST(g_releases == 1);
}

BOOST_AUTO_TEST_CASE(a_throw_inside_the_locked_section_releases_the_locks) {
    reset();
    BOOST_CHECK_THROW(round_that_throws(true), std::bad_alloc);
    BOOST_TEST(g_job_held == 0);
    BOOST_TEST(g_node_held == 0);
    BOOST_CHECK_THROW(round_that_throws(false), std::runtime_error);
    BOOST_TEST(g_job_held == 0);
    BOOST_TEST(g_releases == 2);
}

BOOST_AUTO_TEST_CASE(an_early_unlock_releases_once) {
    reset();
    {
        FakeLocks locks({1, 1});
        locks.unlock();
        BOOST_TEST(!locks.held());
        BOOST_TEST(g_job_held == 0);
        locks.unlock();
    }
    BOOST_TEST(g_releases == 1);
    BOOST_TEST(g_job_held == 0);
}

BOOST_AUTO_TEST_CASE(a_pointer_argument_as_the_association_manager_takes) {
    reset();
    int levels = 2;
    try {
        FakeAssocLocks locks(&levels);
        BOOST_TEST(g_assoc_held == 2);
        throw std::bad_alloc();
    } catch (const std::bad_alloc&) {
    }
    BOOST_TEST(g_assoc_held == 0);
}

BOOST_AUTO_TEST_SUITE_END()
