// asha (Li et al., MLSys'20), the early-stopping form used by Ray Tune's ASHAScheduler: fifo
// placement, plus successive-halving kills within each sweep. Milestones ("rungs") sit at
// max_step / η^k for k = rungs..1; when a trial first reports at or past a rung, its best metric
// so far is recorded for its sweep at that rung, and it continues only if that value is at least
// the (1 - 1/η) quantile of everything recorded there (so the first trial to arrive always goes
// on, and later ones must be in the top 1/η). Stopped trials end for good.
#include <algorithm>
#include <cmath>
#include <map>

#include "sim/metrics.hpp"
#include "sim/sim_policy.hpp"

namespace explsched::sim {

namespace {

class AshaPolicy final : public Policy {
public:
    explicit AshaPolicy(const PolicySettings& settings) : settings_(settings) {}
    std::string_view name() const override { return "asha"; }

    Status schedule(const RoundInput& input, RoundPlan& plan) override {
        FreeGpus free(*input.cluster);
        for (ObservedTrial* t : input.running) {
            if (check_rungs(*t, plan)) {
                plan.stop.push_back(t->id);
                free.give(t->gpu_type, t->gpus);
            }
        }
        start_in_order(input.pending, free, plan);
        return {};
    }

    void on_end(const ObservedTrial& trial) override {
        if (trial.status != TrialStatus::running && trial.status != TrialStatus::pending)
            passed_.erase(trial.id);
    }

private:
    // True if the trial should stop at a rung it just reached.
    bool check_rungs(const ObservedTrial& t, RoundPlan& plan) {
        if (t.points.empty()) return false;
        std::size_t& passed = passed_[t.id];
        const double eta = settings_.asha_reduction;
        const double sign = t.direction == Direction::maximize ? 1.0 : -1.0;
        while (passed < settings_.asha_rungs) {
            // rung 0 is the lowest milestone.
            const double rung_step =
                t.max_step / std::pow(eta, static_cast<double>(settings_.asha_rungs - passed));
            if (t.points.back().step < rung_step) return false;
            double best = -INFINITY;
            for (const CurvePoint& p : t.points) {
                // A diverged run (NaN) counts as the worst possible value.
                best = std::max(best, std::isfinite(p.metric) ? sign * p.metric : -INFINITY);
                if (p.step >= rung_step) break;  // the report that reached the rung counts
            }
            if (!std::isfinite(best)) best = -1e300;
            auto& recorded = rungs_[{t.sweep, passed}];
            recorded.push_back(best);
            std::vector<double> values = recorded;
            const double cutoff = quantile(values, 1.0 - 1.0 / eta);
            ++passed;
            if (best < cutoff) {
                if (settings_.record) {
                    plan.notes.emplace_back(t.id, "asha: rung " + std::to_string(passed) + " at step " +
                                                      std::to_string(static_cast<long long>(rung_step)) +
                                                      ": below the top 1/" +
                                                      std::to_string(eta).substr(0, 4) + " of " +
                                                      std::to_string(recorded.size()));
                }
                return true;
            }
        }
        return false;
    }

    PolicySettings settings_;
    std::map<std::uint32_t, std::size_t> passed_;  // rungs each trial has passed
    std::map<std::pair<std::uint32_t, std::size_t>, std::vector<double>> rungs_;  // (sweep, rung)
};

}  // namespace

std::unique_ptr<Policy> make_asha_policy(const PolicyContext& context) {
    return std::make_unique<AshaPolicy>(context.settings);
}

}  // namespace explsched::sim
