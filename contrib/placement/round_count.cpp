// slurmctld's placement round (net::placement_round) on the cluster of `explsched-sim net --bench
// 1000`'s first lanes, for counting its instructions with callgrind (deterministic, unlike a clock
// on a shared machine). Not built by make: contrib/placement/round_count.sh compiles it from a
// source tree's placement files, so two versions can be counted with the same harness. It builds
// its cluster and slurmctld's copies as `bench()` in src/sim/net_main.cpp does, written again here
// on purpose: it must compile against older trees, whose simulator it cannot link. Keep the two
// alike.
//
//   round_count DATA ROUNDS [SPREAD [PENDING]]
// DATA: the directory with DeepShare's isolated_thp.csv and shared_thp_ratio.csv. SPREAD 1: each
// pending job asks for its request's most nodes (-N 4 for 8 GPUs), 0: its fewest. Environment:
// FRESH=1: each round gets a fresh RoundCache (slurmctld's first round after a restart); CHURN=1:
// 10 of the 1,000 running jobs are replaced before each round, and the rounds share one
// RoundCache (steady) unless FRESH=1. Neither: no cache (the state built and freed in the call).
// Prints the median round time and a checksum of the answers (pins, predicted ratios).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>

#include "core/sched/net_placement.hpp"
#include "core/sched/net_round.hpp"

using namespace explsched;

namespace {

std::vector<int> shapes(int gpus, int nodes, int per_node) {  // as explsched-sim's net_shapes
    std::vector<int> out;
    for (int n = std::min(gpus, nodes); n >= 2; --n)
        if (gpus % n == 0 && gpus / n <= per_node && (n & (n - 1)) == 0) out.push_back(n);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: round_count DATA ROUNDS [SPREAD [PENDING]]\n");
        return 2;
    }
    const std::string data = argv[1];
    const int rounds = std::atoi(argv[2]);
    const bool spread = argc > 3 ? std::atoi(argv[3]) != 0 : true;
    const int pending = argc > 4 ? std::atoi(argv[4]) : 64;
    const bool fresh = std::getenv("FRESH") != nullptr, churn = std::getenv("CHURN") != nullptr;
    auto table = net::PairTable::load_files(data + "/isolated_thp.csv", data + "/shared_thp_ratio.csv");
    if (!table) {
        std::fprintf(stderr, "round_count: %s\n", table.error().message.c_str());
        return 1;
    }
    // the bench's first cluster: 1,000 running jobs on random nodes, then 1/8 of the nodes emptied
    const int running = 1000, count = running * 3 / 4 + 16;
    std::mt19937_64 rng(7);
    const std::vector<std::string> models = {"MobileNetV3",    "GraphSage", "FSDP",
                                             "Transformer-XL", "DLRM",      "MoE"};
    const int demands[] = {2, 4, 8};
    const auto request = [&] {
        const int g = demands[rng() % 3];
        return net::PlacementRequest{models[rng() % models.size()], g, shapes(g, count, 8)};
    };
    net::NetState state(static_cast<std::size_t>(count));
    std::vector<int> free(static_cast<std::size_t>(count), 8);
    const net::ContentionModel model(*table, {net::Rule::link_additive, 0.35});
    std::uint32_t id = 0;
    const auto place_randomly = [&](const net::PlacementRequest& q, std::vector<int>& fr) {
        const int n = q.node_counts.front();
        std::vector<int> order(fr.size()), chosen;
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        for (int v : order)
            if (fr[static_cast<std::size_t>(v)] >= q.gpus / n && static_cast<int>(chosen.size()) < n)
                chosen.push_back(v);
        if (static_cast<int>(chosen.size()) < n) return std::vector<int>{};
        for (int v : chosen) fr[static_cast<std::size_t>(v)] -= q.gpus / n;
        return chosen;
    };
    while (static_cast<int>(state.size()) < running) {
        const auto q = request();
        const auto chosen = place_randomly(q, free);
        if (chosen.empty()) break;
        state.add(id++, table->find(net::shape_key(q.model, q.gpus, q.node_counts.front())), q.gpus, chosen);
    }
    for (int v = 0; v < count / 8; ++v) free[static_cast<std::size_t>(v)] = 8;
    // slurmctld's copies: each node's configured GPUs are its free ones plus the running jobs'
    std::vector<net::RoundNode> nodes(static_cast<std::size_t>(count));
    for (int v = 0; v < count; ++v) {
        auto& n = nodes[static_cast<std::size_t>(v)];
        n.name = "n" + std::to_string(v);
        n.gpus = free[static_cast<std::size_t>(v)];
        n.free_cpus = 64;
    }
    std::vector<net::RoundRunning> jobs;
    for (const auto& [jid, j] : state.jobs()) {
        net::RoundRunning r;
        r.id = jid;
        const std::string& key = table->key(j.type);
        r.model = j.type >= 0 ? key.substr(0, key.find(',')) : "?";
        r.gpus = j.gpus;
        r.nodes.assign(j.nodes.begin(), j.nodes.end());
        r.cpus_per_node = 1;
        for (int v : j.nodes)
            nodes[static_cast<std::size_t>(v)].gpus += j.gpus / static_cast<int>(j.nodes.size());
        jobs.push_back(std::move(r));
    }
    std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    net::RoundCache carried;
    std::vector<double> took;
    double pins = 0.0, ratios = 0.0;
    std::uint32_t next = 5000000;
    for (int round = 0; round < rounds; ++round) {
        if (churn) {
            for (int k = 0; k < 10; ++k) jobs.erase(jobs.begin() + static_cast<long>(rng() % jobs.size()));
            std::vector<int> fr(static_cast<std::size_t>(count));
            for (int v = 0; v < count; ++v)
                fr[static_cast<std::size_t>(v)] = nodes[static_cast<std::size_t>(v)].gpus;
            for (const auto& r : jobs)
                for (int v : r.nodes)
                    fr[static_cast<std::size_t>(v)] -= r.gpus / static_cast<int>(r.nodes.size());
            while (static_cast<int>(jobs.size()) < running) {
                const auto q = request();
                auto chosen = place_randomly(q, fr);
                if (chosen.empty()) break;
                jobs.push_back({next++, q.model, q.gpus, std::move(chosen), 1, 0});
            }
        }
        std::vector<net::RoundPending> queue;
        for (int k = 0; k < pending; ++k) {
            const auto q = request();
            queue.push_back({0x01000000u + static_cast<std::uint32_t>(k),
                             q.model,
                             q.gpus,
                             spread ? q.node_counts.front() : q.node_counts.back(),
                             static_cast<double>(pending - k),
                             {},
                             1});
        }
        net::RoundCache restart;
        net::RoundCache* cache = fresh ? &restart : churn ? &carried : nullptr;
        const auto t0 = std::chrono::steady_clock::now();
        const auto out = net::placement_round(model, nodes, jobs, std::move(queue), 4.0, cache, 64);
        took.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        for (const auto& a : out) {
            pins += a.pin;
            ratios += a.ratio;
        }
    }
    std::sort(took.begin(), took.end());
    std::printf("round_count: %d rounds of %d pending jobs (%s): median %.1f us; pins %.0f, ratio sum %.6f\n",
                rounds, pending, spread ? "most nodes" : "fewest nodes", took[took.size() / 2], pins, ratios);
    return 0;
}
