// `explsched-sim net ...`: the network-contention scenario (DeepShare's workloads and tables), each
// policy with and without contention-aware placement, and `--bench N`, the placement's decision
// cost with N running multi-node jobs. doc/placement.md explains the columns.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/base/strings.hpp"
#include "core/sched/net_placement.hpp"
#include "core/sched/net_round.hpp"
#include "sim/net_main.hpp"
#include "sim/net_sim.hpp"

namespace explsched::sim {

namespace {

const char* usage =
    "usage: explsched-sim net [options]\n"
    "  --data DIR          DeepShare's tables and traces (default ../shared/data/network)\n"
    "  --trace FILE        a trace (repeatable; default DIR/trace-real-0.json and trace-simulate-0.json)\n"
    "  --policies LIST     fifo,las,srtf (default las,srtf,fifo)\n"
    "  --seeds LIST        arrival-order seeds (default 1,2,3; 0 = the trace's order)\n"
    "  --truth RULE        the simulated cluster's contention: min (DeepShare's, default) or link\n"
    "  --predict RULE      what aware placement believes: link (default) or min\n"
    "  --nodes N --gpus-per-node G --round S   cluster and round (default 4, 8, 300)\n"
    "  --backfill          place later jobs when the head does not fit (DeepShare stops)\n"
    "  --arrival-gap S     seconds between arrivals (default 0: all queued at the start)\n"
    "  --windows LIST      aware: plan each round with each window W (pick the least-loss job\n"
    "                      among the policy's next W), run the plan with the most predicted useful\n"
    "                      GPUs (default 64: one plan)\n"
    "  --window W          the same as --windows W (one plan)\n"
    "  --min-gain F        aware: hold a job whose net useful GPUs < F x its GPUs (default 0)\n"
    "  --shape-only        ablation: aware placement sees every pair ratio as 1 (shape choice only)\n"
    "  --bench N           decision cost with N running multi-node jobs, then exit\n";

struct NetOptions {
    std::string data = "../shared/data/network";
    std::vector<std::string> traces;
    std::vector<NetPolicy> policies = {NetPolicy::las, NetPolicy::srtf, NetPolicy::fifo};
    std::vector<std::uint64_t> seeds = {1, 2, 3};
    NetSimSettings sim = [] {
        NetSimSettings d;
        // One greedy plan over the policy's next 64 jobs: within 3.1 points of the best of four
        // plans (windows 1, 4, 16, 64) on every figure of DeepShare's traces, at a third of the
        // cost (doc/placement.md).
        d.windows = {64};
        return d;
    }();
    int bench = 0;
    bool shape_only = false;  // ablation: aware placement knows shapes' speeds, no contention
};

Result<NetOptions> parse(int argc, char** argv) {
    NetOptions o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> Result<std::string> {
            if (i + 1 >= argc) return make_error(a + ": needs a value");
            return std::string(argv[++i]);
        };
        auto number = [&](double& out) -> Status {
            auto v = value();
            if (!v) return v.error();
            char* end = nullptr;
            out = std::strtod(v->c_str(), &end);
            if (end == v->c_str() || *end) return make_error(a + ": '" + *v + "' is not a number");
            return {};
        };
        double d = 0.0;
        Status st;
        if (a == "--data") {
            auto v = value();
            if (!v) return v.error();
            o.data = *v;
        } else if (a == "--trace") {
            auto v = value();
            if (!v) return v.error();
            o.traces.push_back(*v);
        } else if (a == "--policies") {
            auto v = value();
            if (!v) return v.error();
            o.policies.clear();
            for (const auto& p : split(*v, ",")) {
                auto pol = parse_net_policy(std::string(trim(p)));
                if (!pol) return pol.error();
                o.policies.push_back(*pol);
            }
        } else if (a == "--seeds") {
            auto v = value();
            if (!v) return v.error();
            o.seeds.clear();
            for (const auto& p : split(*v, ","))
                o.seeds.push_back(std::strtoull(std::string(p).c_str(), nullptr, 10));
        } else if (a == "--truth" || a == "--predict") {
            auto v = value();
            if (!v) return v.error();
            auto r = net::parse_rule(*v);
            if (!r) return r.error();
            (a == "--truth" ? o.sim.truth : o.sim.predict).rule = *r;
        } else if (a == "--nodes") {
            if (!(st = number(d))) return st.error();
            o.sim.nodes = static_cast<int>(d);
        } else if (a == "--gpus-per-node") {
            if (!(st = number(d))) return st.error();
            o.sim.gpus_per_node = static_cast<int>(d);
        } else if (a == "--round") {
            if (!(st = number(d))) return st.error();
            o.sim.round_s = d;
        } else if (a == "--arrival-gap") {
            if (!(st = number(d))) return st.error();
            o.sim.arrival_gap_s = d;
        } else if (a == "--window") {
            if (!(st = number(d))) return st.error();
            if (!(d >= 1.0)) return make_error("--window: want a window size >= 1");
            o.sim.windows = {static_cast<std::size_t>(d)};
        } else if (a == "--windows") {
            auto v = value();
            if (!v) return v.error();
            o.sim.windows.clear();
            for (const auto& p : split(*v, ",")) {
                char* end = nullptr;
                const std::string w(trim(p));
                const unsigned long long n = std::strtoull(w.c_str(), &end, 10);
                if (w.empty() || *end || n == 0 || n > 100000)
                    return make_error("--windows: '" + *v +
                                      "': want window sizes from 1 to 100000, comma-separated");
                o.sim.windows.push_back(static_cast<std::size_t>(n));
            }
            std::sort(o.sim.windows.begin(), o.sim.windows.end());
            o.sim.windows.erase(std::unique(o.sim.windows.begin(), o.sim.windows.end()), o.sim.windows.end());
        } else if (a == "--min-gain") {
            if (!(st = number(d))) return st.error();
            o.sim.min_gain = d;
        } else if (a == "--shape-only") {
            o.shape_only = true;
        } else if (a == "--backfill") {
            o.sim.backfill = true;
        } else if (a == "--bench") {
            if (!(st = number(d))) return st.error();
            o.bench = static_cast<int>(d);
        } else if (a == "--help" || a == "-h") {
            std::printf("%s", usage);
            std::exit(0);
        } else {
            return make_error("unknown option '" + a + "'");
        }
    }
    if (o.sim.nodes < 2 || o.sim.gpus_per_node < 1 || !(o.sim.round_s > 0.0))
        return make_error("--nodes must be >= 2, --gpus-per-node >= 1, --round > 0");
    if (o.traces.empty()) o.traces = {o.data + "/trace-real-0.json", o.data + "/trace-simulate-0.json"};
    return o;
}

// N running multi-node jobs of the table's types on enough 8-GPU nodes, then the time to place
// pending jobs one after another (each placement updates the state, as a round does).
int bench(const net::PairTable& table, int running, const std::vector<std::size_t>& windows) {
    const int nodes = std::max(4, running * 3 / 4 + 16);
    std::mt19937_64 rng(7);
    std::vector<std::string> models = {"MobileNetV3", "GraphSage", "FSDP", "Transformer-XL", "DLRM", "MoE"};
    const int demands[] = {2, 4, 8};
    net::NetState state(static_cast<std::size_t>(nodes));
    std::vector<int> free(static_cast<std::size_t>(nodes), 8);
    const net::ContentionModel model(table, {net::Rule::link_additive, 0.35});
    std::uint32_t id = 0;
    auto request = [&]() {
        const int g = demands[rng() % 3];
        return net::PlacementRequest{models[rng() % models.size()], g, net_shapes(g, nodes, 8)};
    };
    auto place = [&](const net::PlacementRequest& req, bool aware, net::NodeCosts& costs) {
        const auto c = aware ? net::choose_placement(model, state, free, req, &costs)
                             : net::first_fit_placement(model, state, free, req, &costs);
        if (!c.found) return false;
        for (int v : c.nodes)
            free[static_cast<std::size_t>(v)] -= req.gpus / static_cast<int>(c.nodes.size());
        state.add(id++, c.type, req.gpus, c.nodes);
        return true;
    };
    // fill with random first-fit-on-random-nodes jobs: shuffle node order by rotating free list
    while (static_cast<int>(state.size()) < running) {
        auto req = request();
        std::vector<int> shuffled(free.size());
        std::iota(shuffled.begin(), shuffled.end(), 0);
        std::shuffle(shuffled.begin(), shuffled.end(), rng);
        const int n = req.node_counts.front();
        std::vector<int> chosen;
        for (int v : shuffled)
            if (free[static_cast<std::size_t>(v)] >= req.gpus / n && static_cast<int>(chosen.size()) < n)
                chosen.push_back(v);
        if (static_cast<int>(chosen.size()) < n) break;
        for (int v : chosen) free[static_cast<std::size_t>(v)] -= req.gpus / n;
        state.add(id++, table.find(net::shape_key(req.model, req.gpus, n)), req.gpus, chosen);
    }
    // add some free room so pending jobs fit
    for (int k = 0; k < nodes / 8; ++k) free[static_cast<std::size_t>(k)] = 8;
    std::printf("bench: %zu running multi-node jobs on %d nodes of 8 GPUs (%zu node-job entries)\n",
                state.size(), nodes, [&] {
                    std::size_t e = 0;
                    for (int v = 0; v < nodes; ++v) e += state.on_node(v).size();
                    return e;
                }());
    // slurmctld's round (placement_round, what the plugin calls with its copies of the nodes and
    // jobs) on the same cluster: each node's configured GPUs are its free ones plus the running
    // jobs' (so the same GPUs are free), 64 CPUs of which each pending job needs one per node (the
    // CPU check runs too), a pending job's -N its request's first shape; a round with nothing
    // cached builds its state from these lists into a fresh cache, as slurmctld's first round
    // after a restart does, so that is in its cost (freeing the cache, at slurmctld's exit, not).
    const std::size_t slurm_window = windows.empty() ? 1 : windows.back();
    // `spread`: each pending job asks for its request's most nodes (-N 4 for 8 GPUs: 2 per node),
    // else for its fewest (-N 2); Slurm's -N is the user's, so both are timed.
    auto slurm_round = [&](const std::vector<net::PlacementRequest>& reqs, net::RoundCache* carry,
                           bool spread, const net::ContentionModel* with = nullptr) {
        std::vector<net::RoundNode> rn(static_cast<std::size_t>(nodes));
        for (int v = 0; v < nodes; ++v) {
            auto& n = rn[static_cast<std::size_t>(v)];
            n.name = "n" + std::to_string(v);
            n.gpus = free[static_cast<std::size_t>(v)];
            n.free_cpus = 64;
        }
        std::vector<net::RoundRunning> rr;
        for (const auto& [jid, j] : state.jobs()) {
            net::RoundRunning r;
            r.id = jid;
            // the table's key is "MODEL,GPUS,NODES"; the round asks for the model
            r.model = j.type >= 0 ? table.key(j.type).substr(0, table.key(j.type).find(',')) : "?";
            r.gpus = j.gpus;
            r.nodes.assign(j.nodes.begin(), j.nodes.end());
            r.cpus_per_node = 1;
            for (int v : j.nodes)
                rn[static_cast<std::size_t>(v)].gpus += j.gpus / static_cast<int>(j.nodes.size());
            rr.push_back(std::move(r));
        }
        std::vector<net::RoundPending> rp;
        for (std::size_t k = 0; k < reqs.size(); ++k)
            rp.push_back({static_cast<std::uint32_t>(0x01000000u + k),
                          reqs[k].model,
                          reqs[k].gpus,
                          spread ? reqs[k].node_counts.front() : reqs[k].node_counts.back(),
                          static_cast<double>(reqs.size() - k),
                          {},
                          1});
        const auto t0 = std::chrono::steady_clock::now();
        const auto out =
            net::placement_round(with ? *with : model, rn, rr, std::move(rp), 4.0, carry, slurm_window);
        const double us =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        std::size_t pinned = 0;
        for (const auto& a : out) pinned += a.pin;
        return std::make_pair(us, pinned);
    };
    // The same request lists for both, rounds interleaved (first fit, aware, first fit, ...) so
    // that both see the same machine; median and p90 over 31 rounds, and aware / first fit.
    for (int batch : {1, 16, 32, 64}) {
        std::vector<std::vector<net::PlacementRequest>> lists(31);
        for (auto& l : lists)
            for (int k = 0; k < batch; ++k) l.push_back(request());
        std::vector<double> us[2];
        int placed[2] = {0, 0};
        const auto saved_free = free;
        const std::uint32_t saved_id = id;
        for (const auto& reqs : lists) {
            for (int aware = 0; aware < 2; ++aware) {
                const auto t0 = std::chrono::steady_clock::now();
                net::NodeCosts costs(model, state);  // one round's cache, counted in its cost
                for (const auto& r : reqs) placed[aware] += place(r, aware == 1, costs);
                us[aware].push_back(
                    std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
                for (std::uint32_t j = saved_id; j < id; ++j) state.remove(j);
                free = saved_free;
                id = saved_id;
            }
        }
        double med[2];
        for (int aware = 0; aware < 2; ++aware) {
            auto& v = us[aware];
            std::sort(v.begin(), v.end());
            med[aware] = v[v.size() / 2];
            std::printf(
                "bench: round of %2d pending jobs, %-10s median %8.1f us, p90 %8.1f us (%.1f us per "
                "decision, %.1f placed)\n",
                batch, aware ? "aware:" : "first-fit:", med[aware], v[v.size() * 9 / 10], med[aware] / batch,
                double(placed[aware]) / static_cast<double>(lists.size()));
        }
        std::printf("bench: round of %2d pending jobs, aware / first-fit: %.2fx\n", batch, med[1] / med[0]);
        // The simulator's scheduler on the same lists: plan_round with the --windows given
        std::vector<double> pus;
        double evals = 0.0, planned = 0.0;
        PlanSettings ps;
        ps.windows = windows;
        std::string wtext;
        for (std::size_t w : windows) wtext += (wtext.empty() ? "" : ",") + std::to_string(w);
        for (const auto& reqs : lists) {
            const auto t0 = std::chrono::steady_clock::now();
            const RoundPlan plan = plan_round(model, state, free, reqs, ps);
            pus.push_back(
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
            evals += static_cast<double>(plan.evaluations);
            planned += static_cast<double>(plan.placed.size());
        }
        std::sort(pus.begin(), pus.end());
        std::printf(
            "bench: round of %2d pending jobs, windows %s: median %8.1f us, p90 %8.1f us (%.0f placements "
            "scored, %.1f placed), / first-fit: %.2fx\n",
            batch, wtext.c_str(), pus[pus.size() / 2], pus[pus.size() * 9 / 10],
            evals / static_cast<double>(lists.size()), planned / static_cast<double>(lists.size()),
            pus[pus.size() / 2] / med[0]);
        for (const bool spread : {false, true}) {
            std::vector<double> sus;
            double pinned = 0.0;
            for (const auto& reqs : lists) {
                net::RoundCache fresh;  // nothing cached, as slurmctld's after a restart
                const auto [took, n] = slurm_round(reqs, &fresh, spread);
                sus.push_back(took);
                pinned += static_cast<double>(n);
            }
            std::sort(sus.begin(), sus.end());
            std::printf(
                "bench: round of %2d pending jobs, slurmctld's round (window %zu, %s): median %8.1f us, p90 "
                "%8.1f us (%.1f pinned)\n",
                batch, slurm_window, spread ? "most nodes" : "fewest nodes", sus[sus.size() / 2],
                sus[sus.size() * 9 / 10], pinned / static_cast<double>(lists.size()));
        }
    }
    // Steady state, as slurmctld runs it round after round: the node costs carried from the last
    // round (NodeCosts::rebind), and between two rounds 1 % of the running jobs end and as many
    // start elsewhere (random nodes with room), so the nodes they touch are costed again.
    std::printf(
        "bench: steady state: node costs carried between rounds, %d running jobs replaced "
        "between two rounds\n",
        std::max(1, running / 100));
    std::vector<std::uint32_t> live;
    for (const auto& [jid, j] : state.jobs()) live.push_back(jid);
    std::sort(live.begin(), live.end());
    auto churn = [&] {
        for (int k = 0; k < std::max(1, running / 100) && !live.empty(); ++k) {
            const std::size_t at = rng() % live.size();
            const net::NetState::Job* j = state.job(live[at]);
            for (int v : j->nodes)
                free[static_cast<std::size_t>(v)] += j->gpus / static_cast<int>(j->nodes.size());
            state.remove(live[at]);
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
        }
        while (live.size() < static_cast<std::size_t>(running)) {
            auto req = request();
            const int n = req.node_counts.front();
            std::vector<int> shuffled(free.size()), chosen;
            std::iota(shuffled.begin(), shuffled.end(), 0);
            std::shuffle(shuffled.begin(), shuffled.end(), rng);
            for (int v : shuffled)
                if (free[static_cast<std::size_t>(v)] >= req.gpus / n && static_cast<int>(chosen.size()) < n)
                    chosen.push_back(v);
            if (static_cast<int>(chosen.size()) < n) break;
            for (int v : chosen) free[static_cast<std::size_t>(v)] -= req.gpus / n;
            state.add(id, table.find(net::shape_key(req.model, req.gpus, n)), req.gpus, chosen);
            live.push_back(id++);
        }
    };
    net::NodeCosts carried, carried_plan;
    net::RoundCache carried_slurm, carried_spread, carried_learned;
    // placement_learn=yes: a table whose ratios change between rounds (the same keys), as learning
    // changes them; its rounds keep the running jobs' state and make the node costs again
    net::PairTable learned = table;
    const net::ContentionModel learned_model(learned, {net::Rule::link_additive, 0.35});
    for (int batch : {1, 16, 32, 64}) {
        std::vector<double> us, pus, sus, sps, cold, relearned;
        double placed = 0.0;
        for (int round = 0; round < 31; ++round) {
            std::vector<net::PlacementRequest> reqs;
            for (int k = 0; k < batch; ++k) reqs.push_back(request());
            churn();
            const auto saved_free = free;
            const std::uint32_t saved_id = id;
            auto t0 = std::chrono::steady_clock::now();
            carried.rebind(model, state, table.stretch_fingerprint());
            for (const auto& r : reqs) placed += place(r, true, carried);
            us.push_back(
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
            for (std::uint32_t j = saved_id; j < id; ++j) state.remove(j);
            free = saved_free;
            id = saved_id;
            PlanSettings ps;
            ps.windows = windows;
            t0 = std::chrono::steady_clock::now();
            const RoundPlan plan = plan_round(model, state, free, reqs, ps, &carried_plan);
            pus.push_back(
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
            (void)plan;
            sus.push_back(slurm_round(reqs, &carried_slurm, false).first);
            sps.push_back(slurm_round(reqs, &carried_spread, true).first);
            // the same round with nothing cached (slurmctld's cache after a restart) on this
            // churned cluster
            net::RoundCache fresh;
            cold.push_back(slurm_round(reqs, &fresh, true).first);
            learned.set_ratio(0, 1, round % 2 ? 0.5 : 0.6);
            learned.fit_factors();
            relearned.push_back(slurm_round(reqs, &carried_learned, true, &learned_model).first);
        }
        std::sort(cold.begin(), cold.end());
        std::sort(relearned.begin(), relearned.end());
        std::sort(us.begin(), us.end());
        std::sort(pus.begin(), pus.end());
        std::sort(sus.begin(), sus.end());
        std::sort(sps.begin(), sps.end());
        std::printf(
            "bench: steady state, round of %2d pending jobs, aware: median %8.1f us, p90 %8.1f us (%.1f "
            "placed); windows: median %8.1f us, p90 %8.1f us\n",
            batch, us[us.size() / 2], us[us.size() * 9 / 10], placed / 31.0, pus[pus.size() / 2],
            pus[pus.size() * 9 / 10]);
        std::printf(
            "bench: steady state, round of %2d pending jobs, slurmctld's round: fewest nodes median %8.1f "
            "us, "
            "p90 %8.1f us; most nodes median %8.1f us, p90 %8.1f us\n",
            batch, sus[sus.size() / 2], sus[sus.size() * 9 / 10], sps[sps.size() / 2],
            sps[sps.size() * 9 / 10]);
        std::printf(
            "bench: churned cluster, round of %2d pending jobs, slurmctld's round with nothing cached, most "
            "nodes: median %8.1f us, p90 %8.1f us\n",
            batch, cold[cold.size() / 2], cold[cold.size() * 9 / 10]);
        std::printf(
            "bench: churned cluster, round of %2d pending jobs, slurmctld's round after the table learned "
            "(running jobs' state kept, node costs made again), most nodes: median %8.1f us, p90 %8.1f us\n",
            batch, relearned[relearned.size() / 2], relearned[relearned.size() * 9 / 10]);
    }
    return 0;
}

}  // namespace

int net_main(int argc, char** argv) {
    auto opts = parse(argc, argv);
    if (!opts) {
        std::fprintf(stderr, "explsched-sim net: %s\n%s", opts.error().message.c_str(), usage);
        return 2;
    }
    auto table =
        net::PairTable::load_files(opts->data + "/isolated_thp.csv", opts->data + "/shared_thp_ratio.csv");
    if (!table) {
        std::fprintf(stderr, "explsched-sim net: %s\n", table.error().message.c_str());
        return 1;
    }
    if (opts->bench > 0) return bench(*table, opts->bench, opts->sim.windows);
    net::PairTable blind_table;
    if (opts->shape_only) {
        for (std::size_t r = 0; r < table->size(); ++r) {
            const int t = blind_table.intern(table->key(static_cast<int>(r)));
            if (const auto v = table->isolated(static_cast<int>(r))) blind_table.set_isolated(t, *v);
        }
        for (std::size_t r = 0; r < table->size(); ++r)
            for (std::size_t c = 0; c < table->size(); ++c) blind_table.set_ratio(int(r), int(c), 1.0);
        blind_table.fit_factors();
        opts->sim.predict_table = &blind_table;
    }
    std::printf("truth %s, aware placement predicts with %s; %d nodes x %d GPUs, rounds of %.0f s, seeds",
                net::rule_name(opts->sim.truth.rule), net::rule_name(opts->sim.predict.rule), opts->sim.nodes,
                opts->sim.gpus_per_node, opts->sim.round_s);
    for (auto s : opts->seeds) std::printf(" %llu", static_cast<unsigned long long>(s));
    std::printf("\n%-22s %-5s %10s %10s %10s %10s %7s %7s %7s %7s %9s\n", "trace", "pol", "avgJCT", "avgJCT+",
                "p95JCT", "p95JCT+", "avg%", "p95%", "lost", "lost+", "dec_us+");
    for (const auto& path : opts->traces) {
        auto jobs = read_net_trace(path);
        if (!jobs) {
            std::fprintf(stderr, "explsched-sim net: %s\n", jobs.error().message.c_str());
            return 1;
        }
        const std::string name = path.substr(path.find_last_of('/') + 1);
        for (NetPolicy p : opts->policies) {
            double m[2][4] = {};  // [aware][avg, p95, lost, decision]
            for (int aware = 0; aware < 2; ++aware) {
                for (auto seed : opts->seeds) {
                    NetSimSettings s = opts->sim;
                    s.policy = p;
                    s.aware = aware == 1;
                    s.seed = seed;
                    auto r = run_net_sim(*jobs, *table, s);
                    if (!r) {
                        std::fprintf(stderr, "explsched-sim net: %s: %s\n", path.c_str(),
                                     r.error().message.c_str());
                        return 1;
                    }
                    m[aware][0] += r->avg_jct;
                    m[aware][1] += r->p95_jct;
                    m[aware][2] += r->lost_fraction;
                    m[aware][3] += r->decision_us_mean;
                }
                for (double& v : m[aware]) v /= static_cast<double>(opts->seeds.size());
            }
            std::printf("%-22s %-5s %10.0f %10.0f %10.0f %10.0f %6.1f%% %6.1f%% %6.1f%% %6.1f%% %9.1f\n",
                        name.c_str(), net_policy_name(p), m[0][0], m[1][0], m[0][1], m[1][1],
                        100.0 * (1.0 - m[1][0] / m[0][0]), 100.0 * (1.0 - m[1][1] / m[0][1]), 100.0 * m[0][2],
                        100.0 * m[1][2], m[1][3]);
        }
    }
    std::printf(
        "(+ = contention-aware placement; avg%%/p95%% = JCT reduction; lost = busy GPU-time lost to "
        "contention; dec_us = placement time per round)\n");
    return 0;
}

}  // namespace explsched::sim
