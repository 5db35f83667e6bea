// The sibling prior in the engine: each sweep keeps a bounded set of its trials' curves (those
// that reached furthest into their runs, ended or running), and a trial's forecast of its final
// metric mixes in what those siblings did from where the trial is now (curves/sibling_prior.hpp).
#include <algorithm>
#include <cmath>

#include "core/sched/engine_impl.hpp"

namespace explsched {

using namespace engine_detail;

namespace engine_detail {

namespace {

// How far into its run a kept curve reached (0-1).
double reach_of(const SiblingCurve& c) {
    if (c.steps.empty() || !(c.length > 0.0)) return 0.0;
    return std::min(1.0, c.steps.back() / c.length);
}

}  // namespace

void SiblingStore::offer(const TrialKey& key, const CurvePredictor& p, double length, bool ended) {
    if (!(length > 0.0) || p.size() < 2) return;
    const double reach = std::min(1.0, p.last_step() / length);
    std::size_t slot = keys.size();
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i] == key) {
            slot = i;
            break;
        }
    }
    if (slot < keys.size()) {
        // kept already: refreshed only when it moved on noticeably (or ended, or its run changed)
        const SiblingCurve& old = curves[slot];
        const double step = 1.0 / static_cast<double>(kSiblingCurvePoints);
        if (ended == old.ended && length == old.length && reach - reach_of(old) < step) return;
    } else if (keys.size() < kMaxSiblingCurves) {
        keys.push_back(key);
        curves.emplace_back();
    } else {
        // full: it replaces the curve that reached least, if it reached further
        std::size_t least = 0;
        for (std::size_t i = 1; i < curves.size(); ++i) {
            if (reach_of(curves[i]) < reach_of(curves[least])) least = i;
        }
        if (!(reach > reach_of(curves[least]))) return;
        slot = least;
        keys[slot] = key;
    }
    SiblingCurve& kept = curves[slot];
    thin_curve(p.steps(), p.metrics(), kSiblingCurvePoints, kept.steps, kept.metrics);
    kept.length = length;
    kept.ended = ended;
    if (find_jumps) {
        curve_jumps(kept.steps, kept.metrics, p.direction(), length, kept.jumps);
    } else {
        kept.jumps.clear();
    }
}

void SiblingStore::others(const TrialKey& self, std::vector<const SiblingCurve*>& out) const {
    out.clear();
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i] != self) out.push_back(&curves[i]);
    }
}

double SiblingStore::jump_allowance(const TrialKey& self, double fraction, std::size_t own_jumps) const {
    double most = 0.0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i] != self) most = std::max(most, jump_gain_beyond(curves[i], fraction, own_jumps));
    }
    return most;
}

}  // namespace engine_detail

// The trial's forecast of its final metric with its siblings' mixed in (as far as they are like
// it: prior_forecast weighs each by how closely its recent shape and level match the trial's).
// Only a trial with a known run length (max_steps) and an extrapolated forecast; its curve is
// thinned like the siblings', so the cost is bounded by kMaxSiblingCurves x kSiblingCurvePoints.
void Engine::Impl::apply_sibling_prior(const JobView& job, TrialCache& c) {
    if (settings.sibling_prior_weight <= 0.0 || !c.final_metric.extrapolated || !(job.max_steps > 0.0) ||
        c.group >= groups.size()) {
        return;
    }
    const CurvePredictor& p = c.predictor;
    if (!(p.last_step() < job.max_steps)) return;
    groups[c.group].siblings.others(job.key, sibling_scratch);
    if (sibling_scratch.empty()) return;
    thin_curve(p.steps(), p.metrics(), kSiblingCurvePoints, thin_steps, thin_metrics);
    const Prediction own = c.final_metric;
    Prediction mixed = prior_forecast(own, thin_steps, thin_metrics, job.direction, job.max_steps,
                                      sibling_scratch, settings);
    // The siblings may move the forecast and its pessimistic bound, never its optimistic bound
    // below the trial's own: a late bloomer whose curve is unlike its siblings' so far keeps the
    // chance its own fit gives it (the stopping rules read the optimistic side).
    if (job.direction == Direction::maximize) {
        mixed.upper = std::max(mixed.upper, own.upper);
    } else {
        mixed.lower = std::min(mixed.lower, own.lower);
    }
    c.final_metric = mixed;
}

}  // namespace explsched
