#include "sim/net_sim.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/sched/net_placement.hpp"

namespace explsched::sim {

Result<std::vector<NetJob>> read_net_trace(const std::string& path) {
    std::ifstream in(path);
    if (!in) return make_error("cannot open " + path);
    const auto doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return make_error(path + ": not a JSON object");
    std::vector<NetJob> jobs;
    for (const auto& [k, v] : doc.items()) {
        NetJob j;
        char* end = nullptr;
        const unsigned long id = std::strtoul(k.c_str(), &end, 10);
        if (end == k.c_str() || *end || !v.is_object() || !v.contains("model") || !v.contains("gpu_demand") ||
            !v.contains("total_samples_to_train") || !v["model"].is_string() ||
            !v["gpu_demand"].is_number_integer() || !v["total_samples_to_train"].is_number())
            return make_error(path + ": job '" + k + "': want {model, gpu_demand, total_samples_to_train}");
        j.id = static_cast<std::uint32_t>(id);
        j.model = v["model"].get<std::string>();
        j.gpus = v["gpu_demand"].get<int>();
        j.samples = v["total_samples_to_train"].get<double>();
        if (j.gpus <= 0 || !(j.samples > 0.0)) return make_error(path + ": job '" + k + "': bad demand");
        jobs.push_back(std::move(j));
    }
    std::sort(jobs.begin(), jobs.end(), [](const NetJob& a, const NetJob& b) { return a.id < b.id; });
    return jobs;
}

Result<NetPolicy> parse_net_policy(const std::string& s) {
    if (s == "fifo") return NetPolicy::fifo;
    if (s == "las") return NetPolicy::las;
    if (s == "srtf") return NetPolicy::srtf;
    return make_error("net policy '" + s + "': want fifo, las or srtf");
}

const char* net_policy_name(NetPolicy p) {
    switch (p) {
        case NetPolicy::fifo:
            return "fifo";
        case NetPolicy::las:
            return "las";
        case NetPolicy::srtf:
            return "srtf";
    }
    return "?";
}

std::vector<int> net_shapes(int gpus, int nodes, int gpus_per_node) {
    std::vector<int> out;
    for (int n = std::min(gpus, nodes); n >= 2; --n)
        if (gpus % n == 0 && gpus / n <= gpus_per_node && (n & (n - 1)) == 0) out.push_back(n);
    return out;
}

namespace {

struct Live {
    const NetJob* job = nullptr;
    double remaining = 0.0;
    double attained = 0.0;  // GPU-seconds run (LAS)
    double best_iso = 0.0;  // fastest shape's isolated samples/s (SRTF's remaining time)
    std::size_t order = 0;  // arrival order after the seed's shuffle
    double arrival = 0.0;
    bool done = false;
};

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const double pos = p * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// Sort key: smaller runs first; ties by arrival order.
double priority_key(const Live& l, NetPolicy p) {
    switch (p) {
        case NetPolicy::fifo:
            return static_cast<double>(l.order);
        case NetPolicy::las:
            return l.attained;
        case NetPolicy::srtf:
            return l.remaining / l.best_iso;
    }
    return 0.0;
}

}  // namespace

Result<NetSimResult> run_net_sim(const std::vector<NetJob>& jobs, const net::PairTable& table,
                                 const NetSimSettings& s) {
    const net::ContentionModel truth(table, s.truth);
    const net::ContentionModel predict(s.predict_table ? *s.predict_table : table, s.predict);
    std::vector<Live> live(jobs.size());
    std::vector<std::size_t> perm(jobs.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937_64 rng(s.seed);
    if (s.seed != 0) std::shuffle(perm.begin(), perm.end(), rng);
    for (std::size_t k = 0; k < perm.size(); ++k) {
        Live& l = live[perm[k]];
        l.job = &jobs[perm[k]];
        l.remaining = l.job->samples;
        l.order = k;
        l.arrival = s.arrival_gap_s * static_cast<double>(k);
        for (int n : net_shapes(l.job->gpus, s.nodes, s.gpus_per_node))
            if (const auto v = table.isolated(table.find(net::shape_key(l.job->model, l.job->gpus, n))))
                l.best_iso = std::max(l.best_iso, *v);
        if (!(l.best_iso > 0.0))
            return make_error("job " + std::to_string(l.job->id) + " (" + l.job->model + ", " +
                              std::to_string(l.job->gpus) + " GPUs): no isolated throughput for any shape");
    }
    NetSimResult res;
    res.jct.reserve(jobs.size());
    net::NetState state(static_cast<std::size_t>(s.nodes));
    double t = 0.0, busy = 0.0, lost = 0.0, ratio_weighted = 0.0, decision_total = 0.0;
    std::size_t finished = 0;
    std::vector<Live*> order;
    while (finished < live.size()) {
        order.clear();
        double next_arrival = INFINITY;
        for (Live& l : live) {
            if (l.done) continue;
            if (l.arrival <= t)
                order.push_back(&l);
            else
                next_arrival = std::min(next_arrival, l.arrival);
        }
        if (order.empty()) {
            t = std::ceil(next_arrival / s.round_s) * s.round_s;
            continue;
        }
        std::stable_sort(order.begin(), order.end(), [&](const Live* a, const Live* b) {
            const double ka = priority_key(*a, s.policy), kb = priority_key(*b, s.policy);
            return ka != kb ? ka < kb : a->order < b->order;
        });
        // place
        const auto t0 = std::chrono::steady_clock::now();
        state.clear();
        std::vector<int> free(static_cast<std::size_t>(s.nodes), s.gpus_per_node);
        std::vector<net::PlacementRequest> queue;
        queue.reserve(order.size());
        for (const Live* l : order)
            queue.push_back(
                {l->job->model, l->job->gpus, net_shapes(l->job->gpus, s.nodes, s.gpus_per_node)});
        PlanSettings ps;
        ps.aware = s.aware;
        ps.backfill = s.backfill;
        ps.min_gain = s.min_gain;
        ps.windows = s.aware ? s.windows : std::vector<std::size_t>{1};
        const RoundPlan plan = plan_round(predict, state, free, queue, ps);
        std::vector<std::pair<Live*, int>> placed;  // job, type
        for (const Planned& p : plan.placed) {
            Live* l = order[p.index];
            state.add(l->job->id, p.choice.type, l->job->gpus, p.choice.nodes);
            placed.emplace_back(l, p.choice.type);
        }
        const double us =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        decision_total += us;
        res.decision_us_max = std::max(res.decision_us_max, us);
        ++res.rounds;
        if (placed.empty()) return make_error("no pending job fits the cluster");
        // run one round
        for (auto& [l, type] : placed) {
            const double r = truth.ratio(state, l->job->id);
            const double rate = *table.isolated(type) * r;
            const double g = static_cast<double>(l->job->gpus);
            double ran = s.round_s;
            if (l->remaining <= rate * s.round_s) {
                ran = l->remaining / rate;
                l->done = true;
                ++finished;
                res.jct.push_back(t + ran - l->arrival);
                res.makespan = std::max(res.makespan, t + ran);
            } else {
                l->remaining -= rate * s.round_s;
            }
            l->attained += g * ran;
            busy += g * ran;
            lost += g * ran * (1.0 - r);
            ratio_weighted += g * ran * r;
        }
        t += s.round_s;
    }
    res.avg_jct = std::accumulate(res.jct.begin(), res.jct.end(), 0.0) / static_cast<double>(res.jct.size());
    res.p95_jct = percentile(res.jct, 0.95);
    res.lost_fraction = busy > 0.0 ? lost / busy : 0.0;
    res.mean_ratio = busy > 0.0 ? ratio_weighted / busy : 1.0;
    res.decision_us_mean = res.rounds ? decision_total / res.rounds : 0.0;
    return res;
}

}  // namespace explsched::sim
