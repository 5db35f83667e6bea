#define BOOST_TEST_MODULE test_kernel_sched_ksched_shm
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "kernel_sched/ksched_shm.hpp"

using namespace explsched::ksched;

namespace {

// A channel on the heap is enough for the ring (it only needs the cells and counters).
std::unique_ptr<Channel> fresh_channel() {
    auto ch = std::make_unique<Channel>();
    channel_init(*ch);
    return ch;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_sched_ksched_shm)

BOOST_AUTO_TEST_CASE(ring_fills_drains_and_wraps) {
    auto ch = fresh_channel();
    std::uint64_t head = 0;
    for (int round = 0; round < 3; ++round) {
        for (std::uint32_t i = 0; i < kRingSize; ++i) {
            std::uint64_t pos = 0;
            Record* r = ring_claim(*ch, pos);
            BOOST_REQUIRE(r != nullptr);
            r->body.arg = pos;
            ring_publish(*r, pos);
        }
        std::uint64_t pos = 0;
        BOOST_TEST(ring_claim(*ch, pos) == nullptr);  // full: the producer is told, never blocks
        RecordBody body{};
        for (std::uint32_t i = 0; i < kRingSize; ++i) {
            const std::uint64_t expected = head;
            BOOST_REQUIRE(ring_take(*ch, head, body));
            BOOST_TEST(body.arg == expected);
        }
        BOOST_TEST(!ring_take(*ch, head, body));
    }
}

BOOST_AUTO_TEST_CASE(a_scribbled_channel_never_blocks_the_producer) {
    // The process wrote garbage over its own tail and cells: claims give up after a bounded
    // number of tries instead of spinning forever.
    auto ch = fresh_channel();
    ch->header.tail.store(5);
    for (Record& r : ch->ring) r.cell.store(0xFFFFFFFFFFFFull);  // "ahead": makes a claimer reload the tail
    std::uint64_t pos = 0;
    BOOST_TEST(ring_claim(*ch, pos) == nullptr);
    for (Record& r : ch->ring) r.cell.store(0);  // "behind": full
    BOOST_TEST(ring_claim(*ch, pos) == nullptr);
    // The consumer's position is its own: garbage cells are read as what they are.
    std::uint64_t head = 0;
    RecordBody body{};
    ch->ring[0].cell.store(1);
    BOOST_TEST(ring_take(*ch, head, body));
    BOOST_TEST(head == 1u);
    BOOST_TEST(!ring_take(*ch, head, body));
}

BOOST_AUTO_TEST_CASE(ring_takes_many_producers_and_loses_nothing) {
    auto ch = fresh_channel();
    constexpr int kThreads = 4;
    constexpr std::uint64_t kEach = 50000;
    std::atomic<bool> done{false};
    std::vector<std::uint64_t> seen(kThreads, 0);
    std::uint64_t sum = 0;
    std::thread consumer([&] {
        std::uint64_t got = 0;
        std::uint64_t head = 0;
        RecordBody body{};
        while (got < kThreads * kEach) {
            if (!ring_take(*ch, head, body)) {
                std::this_thread::yield();
                continue;
            }
            const std::uint64_t thread = body.arg >> 32;
            const std::uint64_t value = body.arg & 0xffffffffu;
            // Each producer's records arrive in its own order.
            BOOST_CHECK_EQUAL(value, seen[thread]);
            seen[thread] = value + 1;
            sum += value;
            ++got;
        }
        done = true;
    });
    std::vector<std::thread> producers;
    for (std::uint64_t t = 0; t < kThreads; ++t) {
        producers.emplace_back([&, t] {
            for (std::uint64_t i = 0; i < kEach;) {
                std::uint64_t pos = 0;
                Record* r = ring_claim(*ch, pos);
                if (r == nullptr) {
                    std::this_thread::yield();
                    continue;
                }
                r->body.arg = (t << 32) | i;
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

BOOST_AUTO_TEST_CASE(heartbeat_plausibility) {
    const std::uint64_t now = 10'000'000'000ull;
    BOOST_TEST(heartbeat_alive(now, now));
    BOOST_TEST(heartbeat_alive(now - kDeadAfterNs, now));
    BOOST_TEST(!heartbeat_alive(now - kDeadAfterNs - 1, now));  // stale
    BOOST_TEST(heartbeat_alive(now + kFutureSlackNs, now));
    BOOST_TEST(!heartbeat_alive(now + kFutureSlackNs + 1, now));  // in the future: implausible
    BOOST_TEST(!heartbeat_alive(~0ull, now));
}

BOOST_AUTO_TEST_CASE(fields_are_truncated_and_terminated) {
    char buf[8];
    copy_field(buf, sizeof buf, "abcdefghijk");
    BOOST_TEST(std::string(buf) == "abcdefg");
    copy_field(buf, sizeof buf, nullptr);
    BOOST_TEST(std::string(buf).empty());
    const char unterminated[4] = {'w', 'x', 'y', 'z'};
    BOOST_TEST(read_field(unterminated, sizeof unterminated) == "wxyz");
    BOOST_TEST(status_path_for("/run/x/gpu0/kerneld.sock") == "/run/x/gpu0/kerneld.status");
}

BOOST_AUTO_TEST_SUITE_END()
