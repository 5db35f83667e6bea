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

namespace {

// Ids for the jobs a plan adds to the state for a while (clear of any trace's ids).
constexpr std::uint32_t kPlanIdBase = 0xF0000000u;

struct Memo {
    net::PlacementChoice choice;
    std::vector<int> reach;  // its nodes and the nodes of the jobs it would join, sorted
    bool stale = false;      // a pick landed in its reach since it was scored
};

Memo score_candidate(const net::ContentionModel& model, const net::NetState& state,
                     const std::vector<int>& fr, const net::PlacementRequest& req, bool aware,
                     net::NodeCosts& costs) {
    Memo m;
    m.choice = aware ? net::choose_placement(model, state, fr, req, &costs)
                     : net::first_fit_placement(model, state, fr, req, &costs);
    if (!m.choice.found) return m;
    m.reach = m.choice.nodes;
    for (int v : m.choice.nodes)
        for (const auto& e : state.on_node(v))
            if (const auto* j = state.job(e.id))
                m.reach.insert(m.reach.end(), j->nodes.begin(), j->nodes.end());
    std::sort(m.reach.begin(), m.reach.end());
    m.reach.erase(std::unique(m.reach.begin(), m.reach.end()), m.reach.end());
    return m;
}

bool meets(const std::vector<int>& sorted, const std::vector<int>& nodes) {
    for (int v : nodes)
        if (std::binary_search(sorted.begin(), sorted.end(), v)) return true;
    return false;
}

}  // namespace

RoundPlan plan_round(const net::ContentionModel& model, net::NetState& state, const std::vector<int>& free,
                     const std::vector<net::PlacementRequest>& queue, const PlanSettings& ps,
                     net::NodeCosts* carry) {
    // Jobs asking the same (model, GPUs, node counts) get the same placement on the same state:
    // scores are kept per kind of request.
    std::vector<std::size_t> kind(queue.size());
    std::size_t kinds = 0;
    {
        std::unordered_map<std::string, std::size_t> by_key;
        for (std::size_t k = 0; k < queue.size(); ++k) {
            std::string key = queue[k].model + '\n' + std::to_string(queue[k].gpus);
            for (int n : queue[k].node_counts) key += ',' + std::to_string(n);
            kind[k] = by_key.emplace(std::move(key), by_key.size()).first->second;
        }
        kinds = by_key.size();
    }
    std::vector<std::optional<Memo>> first(kinds);  // scores before any pick, shared by the plans
    RoundPlan best;
    bool have = false;
    std::size_t evaluations = 0;
    std::optional<net::NodeCosts> own;
    if (carry)
        carry->rebind(model, state, model.table().fingerprint());
    else
        own.emplace(model, state);
    net::NodeCosts& costs = carry ? *carry : *own;
    // A window past the queue's end plans what the queue's length does: each distinct plan once.
    std::vector<std::size_t> windows;
    for (std::size_t w : ps.aware && !ps.windows.empty() ? ps.windows : std::vector<std::size_t>{1})
        windows.push_back(std::clamp<std::size_t>(w, 1, std::max<std::size_t>(1, queue.size())));
    std::sort(windows.begin(), windows.end());
    windows.erase(std::unique(windows.begin(), windows.end()), windows.end());
    for (std::size_t window : windows) {
        RoundPlan plan;
        plan.window = window;
        std::vector<int> fr = free;
        std::vector<std::optional<Memo>> memo = first;
        std::vector<bool> taken(queue.size(), false);
        std::size_t picks = 0;
        for (std::size_t head = 0; head < queue.size();) {
            // The least cost per GPU in the window. A stale score is taken as a bound (more jobs
            // placed only add contention): the least is scored again until it is fresh, so
            // candidates far from the top are not scored again at every pick (lazy greedy).
            std::size_t pick = queue.size();
            std::size_t seen = 0;
            for (;;) {
                pick = queue.size();
                seen = 0;
                double best_cost = 0.0;
                for (std::size_t k = head; k < queue.size() && seen < window; ++k) {
                    if (taken[k]) continue;
                    ++seen;
                    auto& m = memo[kind[k]];
                    if (!m) {
                        m = score_candidate(model, state, fr, queue[k], ps.aware, costs);
                        ++evaluations;
                        if (picks == 0) first[kind[k]] = m;
                    }
                    const net::PlacementChoice& c = m->choice;
                    if (!c.found) continue;
                    const double per_gpu = c.cost / static_cast<double>(queue[k].gpus);
                    if (pick == queue.size() || per_gpu < best_cost - 1e-9) {
                        pick = k;
                        best_cost = per_gpu;
                    }
                }
                if (pick == queue.size() || !memo[kind[pick]]->stale) break;
                memo[kind[pick]] = score_candidate(model, state, fr, queue[pick], ps.aware, costs);
                ++evaluations;
            }
            if (pick == queue.size()) {
                if (!ps.backfill || seen == 0) break;
                taken[head] = true;  // backfill: skip the blocked window head and go on
            } else {
                taken[pick] = true;
                net::PlacementChoice c = memo[kind[pick]]->choice;
                const double g = static_cast<double>(queue[pick].gpus);
                // Hold a job whose placement would cost the running jobs more than it gains.
                const bool worth =
                    !ps.aware || g * c.ratio * c.shape_speed - c.others_loss >= ps.min_gain * g;
                if (worth) {
                    const int per = queue[pick].gpus / static_cast<int>(c.nodes.size());
                    for (int v : c.nodes) fr[static_cast<std::size_t>(v)] -= per;
                    state.add(kPlanIdBase + static_cast<std::uint32_t>(plan.placed.size()), c.type,
                              queue[pick].gpus, c.nodes);
                    ++picks;
                    // candidates whose nodes, or whose joined jobs' nodes, it shares: score again
                    for (auto& m : memo)
                        if (m && m->choice.found && meets(m->reach, c.nodes)) m->stale = true;
                    plan.placed.push_back({pick, std::move(c)});
                }
            }
            while (head < queue.size() && taken[head]) ++head;
        }
        for (std::size_t i = 0; i < plan.placed.size(); ++i) {
            const auto id = kPlanIdBase + static_cast<std::uint32_t>(i);
            const net::PlacementChoice& c = plan.placed[i].choice;
            plan.useful += static_cast<double>(queue[plan.placed[i].index].gpus) * model.ratio(state, id) *
                           c.shape_speed;
        }
        for (std::size_t i = 0; i < plan.placed.size(); ++i)
            state.remove(kPlanIdBase + static_cast<std::uint32_t>(i));
        if (!have || plan.useful > best.useful + 1e-9) {
            best = std::move(plan);
            have = true;
        }
    }
    best.evaluations = evaluations;
    return best;
}

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
