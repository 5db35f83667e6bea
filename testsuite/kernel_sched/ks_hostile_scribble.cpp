// Test program for the hostile-user tests: a client that does not use the intercept but speaks
// kerneld's protocol itself, takes its channel and scribbles garbage over it for --ms
// milliseconds: ring cells (both "takeable" ones, so the daemon reads garbage records at its
// per-tick bound, and random ones), record bodies, the header's tail/func_count, and the whole
// function table (ready entries with absurd values and unterminated names), while another thread
// spams the socket's one-byte wake-up as fast as the socket takes it. Its hello reports absurd
// device limits.
// One round in eight writes random cells; the others write cells the daemon takes next.
//   ks_hostile_scribble SOCKET JOB [--ms N] [--enforce]
// Prints what it did: "scribbled R rounds, W wake-ups sent (E refused by a full socket)".
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include "kernel_sched/ksched_shm.hpp"
#include "kernel_sched/ksched_socket.hpp"

namespace es = explsched::ksched;

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: ks_hostile_scribble SOCKET JOB [--ms N] [--enforce]\n");
        return 2;
    }
    const std::string path = argv[1];
    long ms = 2000;
    bool enforce = false;
    for (int i = 3; i < argc; ++i) {
        if (std::strcmp(argv[i], "--ms") == 0 && i + 1 < argc)
            ms = std::strtol(argv[++i], nullptr, 10);
        else if (std::strcmp(argv[i], "--enforce") == 0)
            enforce = true;
    }
    es::HelloMsg hello{};
    es::init_header(hello.h, es::MsgType::hello);
    hello.mode = enforce ? es::ClientMode::enforce : es::ClientMode::observe;
    hello.sm_count = 0xFFFFFFFFu;  // absurd limits too
    hello.max_threads_per_sm = 1;
    hello.max_regs_per_sm = 0xFFFFFFFFu;
    hello.max_smem_per_sm = 1;
    hello.max_blocks_per_sm = 0xFFFFFFFFu;
    es::copy_field(hello.job, sizeof hello.job, argv[2]);
    explsched::Fd sock;
    es::ClientAttach got;
    std::string error;
    if (!es::client_begin(path, hello, sock, error) ||
        !es::client_finish(sock.get(), es::monotonic_ns() + 1000000000ULL, got, error)) {
        std::fprintf(stderr, "ks_hostile_scribble: cannot attach: %s\n", error.c_str());
        return 1;
    }
    auto* ch = got.channel.as<es::Channel>();

    std::atomic<bool> stop{false};
    std::atomic<unsigned long long> sent{0}, full{0};
    std::thread spam([&] {
        const char bell = 1;
        while (!stop.load(std::memory_order_relaxed)) {
            if (send(sock.get(), &bell, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
                sent.fetch_add(1, std::memory_order_relaxed);
            else
                full.fetch_add(1, std::memory_order_relaxed);
        }
    });

    std::mt19937_64 rng(12345);
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    unsigned long long rounds = 0;
    // The daemon's head, as far as we can tell: it marks a taken cell with position + ring size.
    std::uint64_t next = 0;
    while (std::chrono::steady_clock::now() < end) {
        while (ch->ring[next & (es::kRingSize - 1)].cell.load(std::memory_order_acquire) ==
               next + es::kRingSize)
            ++next;
        const bool random_cells = rounds % 8 == 7;
        for (std::uint32_t k = 0; k < es::kRingSize; ++k) {
            const std::uint64_t pos = next + k;
            es::Record& r = ch->ring[pos & (es::kRingSize - 1)];
            std::uint64_t words[7];
            for (auto& w : words) w = rng();
            std::memcpy(static_cast<void*>(&r.body), words, sizeof r.body);
            if (!random_cells) {
                // Takeable: the daemon reads a garbage record here (at most its per-tick bound).
                r.body.type = static_cast<es::RecordType>(1 + rng() % 4);
                if ((k & 1) != 0) {  // every other one passes validation: garbage the scheduler acts on
                    r.body.entry = static_cast<es::Entry>(rng() % static_cast<unsigned>(es::Entry::count));
                    r.body.func_index = static_cast<std::uint32_t>(rng() % es::kMaxFuncs);
                    r.body.grid_x = static_cast<std::uint32_t>(1 + rng() % 100000);
                    r.body.grid_y = r.body.grid_z = 1;
                    r.body.block_x = static_cast<std::uint16_t>(1 + rng() % 1024);
                    r.body.block_y = 1;
                    r.body.block_z = 1;
                }
                r.cell.store(pos + 1, std::memory_order_release);
            } else {
                r.cell.store(rng(), std::memory_order_release);
            }
        }
        ch->header.magic = rng();
        ch->header.ring_size = static_cast<std::uint32_t>(rng());
        ch->header.max_funcs = static_cast<std::uint32_t>(rng());
        ch->header.tail.store(rng(), std::memory_order_relaxed);
        ch->header.dropped.store(rng(), std::memory_order_relaxed);
        ch->header.func_count.store(static_cast<std::uint32_t>(rng()), std::memory_order_relaxed);
        ch->header.waiters.store(static_cast<std::uint32_t>(rng()), std::memory_order_relaxed);
        for (std::uint32_t f = 0; f < es::kMaxFuncs; ++f) {
            es::FuncInfo& fi = ch->funcs[f];
            fi.regs = static_cast<std::uint32_t>(rng());
            fi.static_smem = static_cast<std::uint32_t>(rng());
            fi.max_threads = static_cast<std::uint32_t>(rng());
            std::memset(fi.name, static_cast<int>(rng() & 0xFF), sizeof fi.name);
            fi.ready.store(1, std::memory_order_release);
        }
        ++rounds;
    }
    stop.store(true);
    spam.join();
    std::printf("scribbled %llu rounds, %llu wake-ups sent (%llu refused by a full socket)\n", rounds,
                sent.load(), full.load());
    return 0;
}
