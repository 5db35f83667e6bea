#define BOOST_TEST_MODULE daemon_job_owners
#include <boost/test/unit_test.hpp>

#include <map>
#include <thread>

#include "core/base/log.hpp"
#include "daemon/job_owners.hpp"

using namespace explsched;
using namespace explsched::daemon;

namespace {

class NullLog final : public Logger {
public:
    bool enabled(LogLevel) const override { return false; }
    void write(LogLevel, std::string_view) override {}
};

// slurmctld as a table; counts the RPCs.
class FakeOwners : public JobOwners {
public:
    FakeOwners(Logger& log, OwnerCacheOptions o) : JobOwners("/nonexistent/slurm.conf", log, o) {}
    std::map<uint32_t, Answer> jobs;
    bool down = false;
    int rpcs = 0;

protected:
    Answer ask_slurmctld(uint32_t job_id) override {
        ++rpcs;
        if (down) return {Kind::unavailable, 0, 0, false, false, "slurmctld down"};
        auto it = jobs.find(job_id);
        if (it == jobs.end()) return {Kind::unknown_job, 0, 0, false, false, "unknown"};
        return it->second;
    }
};

OwnerCacheOptions opts(int owner_s, int unknown_s, std::size_t cap = 100) {
    OwnerCacheOptions o;
    o.owner_ttl = std::chrono::seconds(owner_s);
    o.unknown_ttl = std::chrono::seconds(unknown_s);
    o.capacity = cap;
    return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(daemon_job_owners)

BOOST_AUTO_TEST_CASE(owners_and_unknown_jobs_are_cached_with_the_submit_time) {
    NullLog log;
    FakeOwners o(log, opts(60, 60));
    o.jobs[42] = {JobOwners::Kind::owner, 1001, 1700000000, true, false, {}};
    auto a = o.lookup(42);
    BOOST_TEST((a.kind == JobOwners::Kind::owner));
    BOOST_TEST(a.uid == 1001u);
    BOOST_TEST(a.submit_time == 1700000000);
    BOOST_TEST(!a.cached);
    for (int i = 0; i < 100; ++i) BOOST_TEST(o.lookup(42).cached);
    for (int i = 0; i < 100; ++i) BOOST_TEST((o.lookup(7).kind == JobOwners::Kind::unknown_job));
    BOOST_TEST(o.rpcs == 2);
    // fresh: the id may have been reused by another user since; the cache is bypassed and updated.
    o.jobs[42] = {JobOwners::Kind::owner, 1002, 1700000999, true, false, {}};
    auto b = o.lookup(42, true);
    BOOST_TEST(b.uid == 1002u);
    BOOST_TEST(b.submit_time == 1700000999);
    BOOST_TEST(o.lookup(42).uid == 1002u);
    BOOST_TEST(o.rpcs == 3);
}

BOOST_AUTO_TEST_CASE(an_expired_entry_is_asked_again) {
    NullLog log;
    FakeOwners o(log, opts(1, 1));
    o.jobs[1] = {JobOwners::Kind::owner, 5, 10, true, false, {}};
    o.lookup(1);
    o.lookup(2);
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    o.lookup(1);
    o.lookup(2);
    BOOST_TEST(o.rpcs == 4);
}

BOOST_AUTO_TEST_CASE(the_cache_is_bounded) {
    NullLog log;
    FakeOwners o(log, opts(600, 600, 64));
    for (uint32_t j = 1; j <= 10000; ++j) o.lookup(j);
    BOOST_TEST(o.cached_entries() <= 64u);
}

BOOST_AUTO_TEST_CASE(slurmctld_down_means_retry_and_is_not_asked_by_every_report) {
    NullLog log;
    FakeOwners o(log, opts(60, 5));
    o.down = true;
    for (uint32_t j = 1; j <= 50; ++j) {
        auto a = o.lookup(j);
        BOOST_TEST((a.kind == JobOwners::Kind::unavailable));
        BOOST_TEST(!a.error.empty());
    }
    BOOST_TEST(o.rpcs == 1);
}

BOOST_AUTO_TEST_SUITE_END()
