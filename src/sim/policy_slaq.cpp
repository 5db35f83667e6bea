// slaq (Zhang et al., SoCC'17): quality-driven scheduling. Each round every trial's loss
// (metric) reduction over the next slaq_horizon_s of run time is predicted from its own curve,
// with the engine's curve predictor (curve_ensemble.hpp, the same extrapolator explsched uses),
// and normalised by the reduction the trial has achieved so far, so jobs with different metrics
// compare. GPUs go to the largest predicted normalised reduction per GPU; trials too young to
// predict come first (their loss falls fastest). Running trials outside the chosen set are
// preempted once they ran settings.min_run_s. Predictions are refreshed every rerank period. SLAQ knows
// nothing of sweeps and never stops a trial early.
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/curves/curve_ensemble.hpp"
#include "core/sched/utility.hpp"
#include "sim/sim_policy.hpp"

namespace explsched::sim {

namespace {

class SlaqPolicy final : public Policy {
public:
    explicit SlaqPolicy(const PolicyContext& context) : context_(context) {}
    std::string_view name() const override { return "slaq"; }

    Status schedule(const RoundInput& input, RoundPlan& plan) override {
        struct Ranked {
            ObservedTrial* trial;
            double score;
        };
        std::vector<Ranked> all;
        const bool rerank =
            last_rerank_ < 0.0 || input.now - last_rerank_ >= context_.settings.rerank_period_s;
        if (rerank) last_rerank_ = input.now;
        for (ObservedTrial* t : input.running) all.push_back({t, cached_score(*t, rerank)});
        for (ObservedTrial* t : input.pending) all.push_back({t, cached_score(*t, rerank)});
        std::stable_sort(all.begin(), all.end(), [](const Ranked& a, const Ranked& b) {
            if (a.score != b.score) return a.score > b.score;
            if (a.trial->queued_at != b.trial->queued_at) return a.trial->queued_at < b.trial->queued_at;
            return a.trial->id < b.trial->id;
        });
        // Running trials in their grace period keep their GPUs whatever their score.
        std::vector<ObservedTrial*> in_grace;
        for (ObservedTrial* t : input.running) {
            if (input.now - t->started_at < context_.settings.min_run_s) in_grace.push_back(t);
        }
        std::vector<ObservedTrial*> ranked;
        ranked.reserve(all.size());
        for (const Ranked& e : all) ranked.push_back(e.trial);
        plan_by_rank(input, ranked, in_grace, plan);
        return {};
    }

    void on_end(const ObservedTrial& trial) override {
        if (trial.status == TrialStatus::finished || trial.status == TrialStatus::stopped) {
            predictors_.erase(trial.id);
            scores_.erase(trial.id);
        }
    }

private:
    // Scores are refreshed every rerank period (as explsched's assessments are); a trial not yet
    // scored is scored at once.
    double cached_score(const ObservedTrial& t, bool rerank) {
        auto it = scores_.find(t.id);
        if (rerank || it == scores_.end()) it = scores_.insert_or_assign(t.id, score(t)).first;
        return it->second;
    }

    // Predicted normalised metric reduction per GPU over the horizon; +inf for a trial with too
    // few points to predict, 0 for a diverged one.
    double score(const ObservedTrial& t) {
        const EngineSettings defaults;
        if (t.points.size() < defaults.min_points_to_fit) return std::numeric_limits<double>::infinity();
        auto it = predictors_.find(t.id);
        if (it == predictors_.end()) {
            it = predictors_.emplace(t.id, Entry{CurvePredictor(t.direction, defaults), 0}).first;
        }
        Entry& e = it->second;
        if (e.seen != t.points.size()) {
            e.seen = t.points.size();
            auto curve = clean_curve(PointSpan(t.points));
            if (!curve) return 0.0;
            e.diverged = curve->diverged;
            if (!e.predictor.extend(*curve)) e.predictor.assign(*curve);
        }
        const CurvePredictor& p = e.predictor;
        if (e.diverged || !p.fitted() || p.size() == 0) return 0.0;
        const double speed = observed_speed(PointSpan(t.points));
        if (!(speed > 0.0)) return 0.0;
        const double s0 = p.last_step();
        const double s1 = std::min(t.max_step, s0 + speed * context_.settings.slaq_horizon_s);
        const double sign = t.direction == Direction::maximize ? 1.0 : -1.0;
        const double gain = sign * (p.predict_value(s1) - p.predict_value(s0));
        const double so_far = std::fabs(p.best_metric() - p.first_metric());
        if (!std::isfinite(gain) || gain <= 0.0) return 0.0;
        return gain / std::max(so_far, 1e-12) / static_cast<double>(std::max<std::uint32_t>(t.gpus, 1));
    }

    struct Entry {
        CurvePredictor predictor;
        std::size_t seen = 0;
        bool diverged = false;
    };
    PolicyContext context_;
    std::unordered_map<std::uint32_t, Entry> predictors_;
    std::unordered_map<std::uint32_t, double> scores_;
    double last_rerank_ = -1.0;
};

}  // namespace

std::unique_ptr<Policy> make_slaq_policy(const PolicyContext& context) {
    return std::make_unique<SlaqPolicy>(context);
}

}  // namespace explsched::sim
