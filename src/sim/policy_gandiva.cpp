// gandiva (Xiao et al., OSDI'18), its time-slicing part: when trials wait, running trials that
// have had a full time slice are suspended (checkpointed and requeued) in favour of the trials
// that waited longest, so an oversubscribed cluster is shared round-robin. Gandiva's cheap
// suspend/resume is modelled by the simulator's restart cost like any preemption, and the slice
// is long enough (settings.slice_s) that the cost stays small. Packing and migration are not
// modelled. Trials are never stopped early.
#include <algorithm>

#include "sim/sim_policy.hpp"

namespace explsched::sim {

namespace {

class GandivaPolicy final : public Policy {
public:
    explicit GandivaPolicy(const PolicySettings& settings) : settings_(settings) {}
    std::string_view name() const override { return "gandiva"; }

    Status schedule(const RoundInput& input, RoundPlan& plan) override {
        FreeGpus free(*input.cluster);
        // Running trials whose slice is up, longest-running first.
        std::vector<ObservedTrial*> expired;
        for (ObservedTrial* t : input.running) {
            if (input.now - t->started_at >= settings_.slice_s) expired.push_back(t);
        }
        std::stable_sort(expired.begin(), expired.end(), [](const ObservedTrial* a, const ObservedTrial* b) {
            return a->started_at < b->started_at;
        });
        std::size_t next_victim = 0;
        for (ObservedTrial* t : input.pending) {  // longest waiting first
            std::string type = free.fitting_type(t->gpus);
            if (type.empty()) {
                // Suspend expired trials until this one fits (only if enough can be freed).
                std::uint32_t can_free = free.total();
                for (std::size_t v = next_victim; v < expired.size(); ++v) can_free += expired[v]->gpus;
                if (can_free < t->gpus) continue;
                while (type.empty() && next_victim < expired.size()) {
                    ObservedTrial* victim = expired[next_victim++];
                    plan.preempt.push_back(victim->id);
                    free.give(victim->gpu_type, victim->gpus);
                    type = free.fitting_type(t->gpus);
                }
                if (type.empty()) continue;
            }
            free.take(type, t->gpus);
            plan.start.push_back({t->id, type});
        }
        return {};
    }

private:
    PolicySettings settings_;
};

}  // namespace

std::unique_ptr<Policy> make_gandiva_policy(const PolicyContext& context) {
    return std::make_unique<GandivaPolicy>(context.settings);
}

}  // namespace explsched::sim
