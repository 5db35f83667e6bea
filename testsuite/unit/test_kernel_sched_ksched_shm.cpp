#define BOOST_TEST_MODULE test_kernel_sched_ksched_shm
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "kernel_sched/ksched_shm.hpp"

using namespace explsched::ksched;

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/explsched-shm-test.XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

// A slot on the heap is enough for the ring (it only needs the cells and counters).
std::unique_ptr<ClientSlot> fresh_slot() {
    auto s = std::make_unique<ClientSlot>();
    ring_reset(*s);
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_sched_ksched_shm)

BOOST_AUTO_TEST_CASE(ring_fills_drains_and_wraps) {
    auto slot = fresh_slot();
    for (int round = 0; round < 3; ++round) {
        for (std::uint32_t i = 0; i < kRingSize; ++i) {
            std::uint64_t pos = 0;
            Record* r = ring_claim(*slot, pos);
            BOOST_REQUIRE(r != nullptr);
            r->arg = pos;
            ring_publish(*r, pos);
        }
        std::uint64_t pos = 0;
        BOOST_TEST(ring_claim(*slot, pos) == nullptr);  // full: the producer is told, never blocks
        for (std::uint32_t i = 0; i < kRingSize; ++i) {
            Record* r = ring_peek(*slot, pos);
            BOOST_REQUIRE(r != nullptr);
            BOOST_TEST(r->arg == pos);
            ring_release(*slot, *r, pos);
        }
        BOOST_TEST(ring_peek(*slot, pos) == nullptr);
    }
}

BOOST_AUTO_TEST_CASE(ring_takes_many_producers_and_loses_nothing) {
    auto slot = fresh_slot();
    constexpr int kThreads = 4;
    constexpr std::uint64_t kEach = 50000;
    std::atomic<bool> done{false};
    std::vector<std::uint64_t> seen(kThreads, 0);
    std::uint64_t sum = 0;
    std::thread consumer([&] {
        std::uint64_t got = 0;
        while (got < kThreads * kEach) {
            std::uint64_t pos = 0;
            Record* r = ring_peek(*slot, pos);
            if (r == nullptr) {
                std::this_thread::yield();
                continue;
            }
            const std::uint64_t thread = r->arg >> 32;
            const std::uint64_t value = r->arg & 0xffffffffu;
            // Each producer's records arrive in its own order.
            BOOST_CHECK_EQUAL(value, seen[thread]);
            seen[thread] = value + 1;
            sum += value;
            ring_release(*slot, *r, pos);
            ++got;
        }
        done = true;
    });
    std::vector<std::thread> producers;
    for (std::uint64_t t = 0; t < kThreads; ++t) {
        producers.emplace_back([&, t] {
            for (std::uint64_t i = 0; i < kEach;) {
                std::uint64_t pos = 0;
                Record* r = ring_claim(*slot, pos);
                if (r == nullptr) {
                    std::this_thread::yield();
                    continue;
                }
                r->arg = (t << 32) | i;
                ring_publish(*r, pos);
                ++i;
            }
        });
    }
    for (auto& p : producers) p.join();
    consumer.join();
    BOOST_TEST(done.load());
    BOOST_TEST(sum == kThreads * (kEach * (kEach - 1) / 2));
}

BOOST_AUTO_TEST_CASE(segment_create_attach_and_refusals) {
    TempDir dir;
    const std::string path = dir.path + "/gpu0.shm";
    SegmentMap daemon;
    std::string error;
    BOOST_REQUIRE(daemon.create(path, 3, error));
    SegmentMap early;
    BOOST_TEST(!early.attach(path, true, error));  // not published yet
    BOOST_TEST(error.find("not initialised") != std::string::npos);
    daemon.publish_ready();
    SegmentMap client;
    BOOST_REQUIRE_MESSAGE(client.attach(path, true, error), error);
    BOOST_TEST(client->header.gpu_index == 3u);
    BOOST_TEST(client->header.daemon_pid == getpid());
    // Both mappings are the same memory.
    daemon->slots[5].pid = 4242;
    BOOST_TEST(client->slots[5].pid == 4242);

    BOOST_TEST(!client.attach(dir.path + "/missing.shm", false, error));
    BOOST_TEST(error.find("cannot open " + dir.path + "/missing.shm") == 0u);
    const std::string small = dir.path + "/small.shm";
    const int fd = open(small.c_str(), O_CREAT | O_WRONLY, 0644);
    BOOST_REQUIRE(fd >= 0);
    BOOST_REQUIRE(ftruncate(fd, 4096) == 0);
    close(fd);
    BOOST_TEST(!client.attach(small, false, error));
    BOOST_TEST(error.find("size 4096 is not") != std::string::npos);
    BOOST_TEST(client.get() != nullptr);  // a failed attach keeps the old mapping
}

BOOST_AUTO_TEST_CASE(a_new_daemon_never_resets_an_old_mapping) {
    TempDir dir;
    const std::string path = dir.path + "/gpu0.shm";
    std::string error;
    SegmentMap first;
    BOOST_REQUIRE(first.create(path, 0, error));
    first.publish_ready();
    SegmentMap client;
    BOOST_REQUIRE(client.attach(path, true, error));
    client->slots[0].pid = 7;
    SegmentMap second;
    BOOST_REQUIRE(second.create(path, 0, error));  // renamed over the old file
    BOOST_TEST(client->slots[0].pid == 7);         // the orphaned mapping is untouched
    BOOST_TEST(second->slots[0].pid == 0);
}

BOOST_AUTO_TEST_CASE(fields_are_truncated_and_terminated) {
    char buf[4];
    copy_field(buf, sizeof buf, "abcdef");
    BOOST_TEST(std::string(buf) == "abc");
    copy_field(buf, sizeof buf, nullptr);
    BOOST_TEST(std::string(buf).empty());
    BOOST_TEST(std::string(entry_name(Entry::launch_kernel_ex_ptsz)) == "cuLaunchKernelEx_ptsz");
    BOOST_TEST(endpoint_path("/run/x", 2) == "/run/x/gpu2/kerneld.shm");
}

BOOST_AUTO_TEST_SUITE_END()
