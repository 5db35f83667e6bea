#include "core/sched/net_learn.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace explsched::net {

NetLearner::NetLearner(PairTable prior, LearnSettings settings)
    : settings_(settings), estimator_(std::move(prior), settings.estimator) {}

std::vector<std::string> NetLearner::round(const std::vector<RoundRunning>& running,
                                           const std::function<PointSpan(std::uint32_t)>& curve) {
    std::vector<std::string> lines;
    // who shares a node with whom
    std::unordered_map<int, std::vector<std::size_t>> on_node;
    for (std::size_t i = 0; i < running.size(); ++i)
        if (running[i].nodes.size() >= 2)
            for (int v : running[i].nodes) on_node[v].push_back(i);
    std::unordered_map<std::uint32_t, Tracked> next;
    for (std::size_t i = 0; i < running.size(); ++i) {
        const RoundRunning& r = running[i];
        const int n = static_cast<int>(r.nodes.size());
        if (n < 2 || r.gpus <= 0) continue;
        std::vector<std::uint32_t> company;
        std::vector<std::string> company_keys;
        for (int v : r.nodes)
            for (std::size_t j : on_node[v])
                if (j != i) company.push_back(running[j].id);
        std::sort(company.begin(), company.end());
        company.erase(std::unique(company.begin(), company.end()), company.end());
        for (std::uint32_t id : company)
            for (const RoundRunning& o : running)
                if (o.id == id)
                    company_keys.push_back(shape_key(o.model, o.gpus, static_cast<int>(o.nodes.size())));
        const PointSpan points = curve(r.id);
        const double last_step = points.size > 0 ? points.data[points.size - 1].step : -1.0;
        auto found = jobs_.find(r.id);
        Tracked t = found != jobs_.end() ? found->second : Tracked{};
        if (found == jobs_.end() || t.company != company) {
            // new, or its company changed: what it reported so far was under the old company
            t.company = company;
            t.settled_after = last_step;
            next.emplace(r.id, t);
            continue;
        }
        double sum = 0.0, newest = t.used_through;
        std::size_t count = 0;
        const double after = std::max(t.settled_after, t.used_through);
        for (std::size_t k = 0; k < points.size; ++k) {
            const CurvePoint& p = points.data[k];
            if (!(p.step > after) || !std::isfinite(p.throughput) || !(p.throughput > 0.0)) continue;
            sum += p.throughput;
            newest = std::max(newest, p.step);
            ++count;
        }
        if (count == 0) {
            next.emplace(r.id, t);
            continue;
        }
        t.used_through = newest;
        const double speed = sum / static_cast<double>(count);
        const std::string key = shape_key(r.model, r.gpus, n);
        char buf[160];
        if (company.empty()) {
            ++t.alone_n;
            t.alone += (speed - t.alone) / static_cast<double>(t.alone_n);
            auto& [mean, m] = type_alone_[key];
            ++m;
            mean += (speed - mean) / static_cast<double>(m);
            std::snprintf(buf, sizeof buf, "JobId=%u %s alone: %.4g steps/s", r.id, key.c_str(), speed);
            lines.emplace_back(buf);
            ++observations_;
        } else {
            double alone = t.alone;
            if (!(alone > 0.0))
                if (const auto it = type_alone_.find(key); it != type_alone_.end()) alone = it->second.first;
            if (alone > 0.0) {
                const double ratio = std::max(settings_.floor, speed / alone);
                if (estimator_.observe_ratio(key, company_keys, ratio)) {
                    std::string names;
                    for (const auto& k : company_keys) names += (names.empty() ? "" : " ") + k;
                    std::snprintf(buf, sizeof buf, "JobId=%u %s beside %.80s: %.2f of alone", r.id,
                                  key.c_str(), names.c_str(), speed / alone);
                    lines.emplace_back(buf);
                    ++observations_;
                }
            }
        }
        next.emplace(r.id, t);
    }
    jobs_ = std::move(next);
    return lines;
}

}  // namespace explsched::net
