// tiresias (Gu et al., NSDI'19): discretised two-dimensional least-attained-service. A trial's
// attained service is GPUs × time it has run; trials below the threshold sit in the high queue,
// the rest in the low one; within a queue, first come first served. Each round the highest-ranked
// trials that fit get the GPUs and running trials outside that set are preempted. A trial that
// waited longer than starve_factor × its own run time is promoted to the high queue (Tiresias'
// starvation guard). Trials are never stopped early.
#include <algorithm>

#include "sim/sim_policy.hpp"

namespace explsched::sim {

namespace {

class TiresiasPolicy final : public Policy {
public:
    explicit TiresiasPolicy(const PolicySettings& settings) : settings_(settings) {}
    std::string_view name() const override { return "tiresias"; }

    Status schedule(const RoundInput& input, RoundPlan& plan) override {
        struct Entry {
            ObservedTrial* trial;
            int level;
        };
        std::vector<Entry> all;
        const auto level_of = [&](const ObservedTrial& t) {
            if (t.gpu_seconds < settings_.tiresias_threshold_gpu_s) return 0;
            if (t.status == TrialStatus::pending &&
                input.now - t.queued_at >= settings_.tiresias_starve_factor * t.run_seconds) {
                return 0;
            }
            return 1;
        };
        for (ObservedTrial* t : input.running) all.push_back({t, level_of(*t)});
        for (ObservedTrial* t : input.pending) all.push_back({t, level_of(*t)});
        std::stable_sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) {
            if (a.level != b.level) return a.level < b.level;
            if (a.trial->arrival != b.trial->arrival) return a.trial->arrival < b.trial->arrival;
            return a.trial->id < b.trial->id;
        });
        // Trials in their requeue delay cannot run this round; their GPUs are not reserved.
        std::vector<ObservedTrial*> ranked;
        ranked.reserve(all.size());
        for (const Entry& e : all) ranked.push_back(e.trial);
        plan_by_rank(input, ranked, {}, plan);
        return {};
    }

private:
    PolicySettings settings_;
};

}  // namespace

std::unique_ptr<Policy> make_tiresias_policy(const PolicyContext& context) {
    return std::make_unique<TiresiasPolicy>(context.settings);
}

}  // namespace explsched::sim
