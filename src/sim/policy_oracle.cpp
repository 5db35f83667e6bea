// oracle: knows every trial's whole curve in advance. For each sweep it runs only the trial whose
// curve reaches the sweep's best quality (the cheapest one on a tie), stops it as soon as it has
// reported that best value, and cancels every other trial on arrival; placement is fifo. So it
// collects the most profit any policy can (every sweep's best) with the fewest GPU-hours that
// profit can cost: no exploration, no restart, no training past the best report.
#include <vector>

#include "sim/sim_policy.hpp"
#include "sim/workload.hpp"

namespace explsched::sim {

namespace {

class OraclePolicy final : public Policy {
public:
    explicit OraclePolicy(const Workload& workload) {
        chosen_.assign(workload.trials.size(), false);
        stop_after_.assign(workload.trials.size(), 0);
        for (const SimSweep& sweep : workload.sweeps) chosen_[sweep.best_trial] = true;
        for (std::size_t i = 0; i < workload.trials.size(); ++i)
            stop_after_[i] = workload.trials[i].best_index + 1;
    }
    std::string_view name() const override { return "oracle"; }

    Status schedule(const RoundInput& input, RoundPlan& plan) override {
        FreeGpus free(*input.cluster);
        for (ObservedTrial* t : input.running) {
            if (t->points.size() >= stop_after_[t->index]) {
                plan.stop.push_back(t->id);
                free.give(t->gpu_type, t->gpus);
            }
        }
        std::vector<ObservedTrial*> order;
        for (ObservedTrial* t : input.pending) {
            if (chosen_[t->index]) {
                order.push_back(t);
            } else {
                plan.stop.push_back(t->id);
            }
        }
        start_in_order(order, free, plan);
        return {};
    }

private:
    std::vector<bool> chosen_;
    std::vector<std::size_t> stop_after_;
};

}  // namespace

std::unique_ptr<Policy> make_oracle_policy(const PolicyContext&, const Workload& workload) {
    return std::make_unique<OraclePolicy>(workload);
}

}  // namespace explsched::sim
