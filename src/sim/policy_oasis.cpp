// oasis (Bao et al., INFOCOM'18): online primal-dual admission with a price that rises with
// utilisation. As OASiS assumes, each job declares its run time (ObservedTrial::time_limit_s) and
// its utility is known up front: here every trial may bring at most one unit of normalised
// profit, so its value is 1 / (GPUs × declared run time) per GPU-second. The price is the core's
// PriceFunction with bounds from the core's PriceBoundsEstimator over the values seen, exactly
// the machinery explsched prices GPUs with. Pending trials, oldest first, are admitted when their
// value is at least the price at the load they would create and they fit; once admitted a trial
// runs to the end (OASiS does not preempt); a trial not admitted within oasis_patience_s is
// rejected (stopped without running).
#include <algorithm>

#include "core/sched/engine_settings.hpp"
#include "core/sched/price.hpp"
#include "sim/sim_policy.hpp"

namespace explsched::sim {

namespace {

class OasisPolicy final : public Policy {
public:
    explicit OasisPolicy(const PolicyContext& context)
        : context_(context),
          bounds_(defaults_.price_lower_quantile, defaults_.price_upper_quantile, defaults_.price_smoothing,
                  defaults_.price_min_ratio) {}
    std::string_view name() const override { return "oasis"; }

    Status schedule(const RoundInput& input, RoundPlan& plan) override {
        scratch_.clear();
        for (ObservedTrial* t : input.running) scratch_.push_back(value(*t));
        for (ObservedTrial* t : input.pending) scratch_.push_back(value(*t));
        bounds_.observe(scratch_);
        const double total = std::max<double>(input.cluster->total_gpus(), 1.0);
        double busy = total - input.cluster->free_gpus();
        FreeGpus free(*input.cluster);
        for (ObservedTrial* t : input.pending) {
            const double load_after = std::min(1.0, (busy + t->gpus) / total);
            const double price = bounds_.has_estimate() ? bounds_.price()(load_after) : 0.0;
            const std::string type = free.fitting_type(t->gpus);
            if (value(*t) >= price && !type.empty()) {
                free.take(type, t->gpus);
                busy += t->gpus;
                plan.start.push_back({t->id, type});
            } else if (input.now - t->arrival >= context_.settings.oasis_patience_s) {
                plan.stop.push_back(t->id);
                if (context_.settings.record)
                    plan.notes.emplace_back(t->id, "oasis: not admitted within patience");
            }
        }
        return {};
    }

private:
    static double value(const ObservedTrial& t) {
        return 1.0 / (std::max<double>(t.gpus, 1.0) * std::max(t.time_limit_s, 1.0));
    }

    PolicyContext context_;
    EngineSettings defaults_;
    PriceBoundsEstimator bounds_;
    std::vector<double> scratch_;
};

}  // namespace

std::unique_ptr<Policy> make_oasis_policy(const PolicyContext& context) {
    return std::make_unique<OasisPolicy>(context);
}

}  // namespace explsched::sim
