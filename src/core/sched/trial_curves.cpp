#include "core/sched/trial_curves.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace explsched {

void TrialCurves::add(std::uint32_t job_id, std::int64_t job_submit, std::uint32_t uid,
                      const CurvePoint& point) {
    auto& v = by_id_[job_id];
    auto it = std::find_if(v.begin(), v.end(), [&](const Instance& i) { return i.submit == job_submit; });
    if (it == v.end()) {
        v.push_back(Instance{job_submit, BoundedCurve(max_points_), uid});
        it = std::prev(v.end());
    }
    it->curve.push_back(point);
}

PointSpan TrialCurves::curve(std::uint32_t job_id, std::int64_t submit) const {
    auto found = by_id_.find(job_id);
    if (found == by_id_.end()) return {};
    const Instance* legacy = nullptr;
    for (const Instance& i : found->second) {
        if (submit != 0 && i.submit == submit) return PointSpan(i.curve.points());
        if (i.submit == 0) legacy = &i;
    }
    // Legacy rows only while no real instance of this id has reported.
    if (legacy == nullptr || found->second.size() > 1) return {};
    const auto& pts = legacy->curve.points();
    const double since = static_cast<double>(submit);
    auto first =
        std::find_if(pts.begin(), pts.end(), [&](const CurvePoint& p) { return p.wall_time >= since; });
    return PointSpan(pts.data() + (first - pts.begin()), static_cast<std::size_t>(pts.end() - first));
}

void TrialCurves::adopt_earlier(std::uint32_t job_id, std::int64_t submit, std::uint32_t owner) {
    auto found = by_id_.find(job_id);
    if (found == by_id_.end() || found->second.empty() || submit == 0) return;
    auto& v = found->second;
    // One instance: this one (adopted already), or one it may not adopt. An earlier run alone
    // is adopted at once: a requeued trial waiting to run again is valued on its curve so far.
    if (v.size() == 1 && (v[0].submit == submit || v[0].submit == 0 || v[0].submit > submit ||
                          (v[0].uid != owner && v[0].uid != 0)))
        return;
    // The adopted runs' points in the order explschedd accepted them (its clock): explschedd may
    // file a restarted run's first reports under the earlier instance (it caches a job's submit
    // time), so the instance a point sits in does not say which run sent it. A run that went back
    // to an earlier checkpoint replaces what the run before reported from that step on.
    std::vector<CurvePoint> all;
    std::vector<Instance> keep;
    for (Instance& i : v) {
        if (i.submit == submit || (i.submit != 0 && i.submit < submit && (i.uid == owner || i.uid == 0))) {
            all.insert(all.end(), i.curve.points().begin(), i.curve.points().end());
        } else {
            keep.push_back(std::move(i));
        }
    }
    // (a point without a time, which the server's clock never gives, sorts first: a strict order)
    const auto when = [](const CurvePoint& p) {
        return std::isnan(p.wall_time) ? -std::numeric_limits<double>::infinity() : p.wall_time;
    };
    std::stable_sort(all.begin(), all.end(),
                     [&](const CurvePoint& a, const CurvePoint& b) { return when(a) < when(b); });
    std::vector<CurvePoint> lineage;
    lineage.reserve(all.size());
    for (const CurvePoint& p : all) {
        while (!lineage.empty() && !(lineage.back().step < p.step)) lineage.pop_back();
        lineage.push_back(p);
    }
    BoundedCurve merged(max_points_);
    for (const CurvePoint& p : lineage) merged.push_back(p);
    keep.push_back(Instance{submit, std::move(merged), owner});
    v = std::move(keep);
}

void TrialCurves::set_max_points(std::size_t max_points) {
    max_points_ = max_points;
    for (auto& [id, v] : by_id_)
        for (Instance& i : v) i.curve.set_max_points(max_points);
}

std::size_t TrialCurves::instances() const {
    std::size_t n = 0;
    for (const auto& [id, v] : by_id_) n += v.size();
    return n;
}

std::size_t TrialCurves::points() const {
    std::size_t n = 0;
    for (const auto& [id, v] : by_id_)
        for (const Instance& i : v) n += i.curve.size();
    return n;
}

}  // namespace explsched
