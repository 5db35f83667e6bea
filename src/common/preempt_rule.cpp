#include "preempt_rule.hpp"

namespace explsched {

PreemptAnswer may_preempt(const PreemptFacts& preemptor, const PreemptFacts& preemptee,
                           const Settings& settings) {
    (void)preemptor;
    (void)settings;
    if (preemptee.partition_preempt_off) return {false, "preemptee's partition has PreemptMode=OFF"};
    if (!preemptee.exploratory && !settings.preempt_non_explore)
        return {false, "preemptee is not exploratory (preempt_non_explore=no)"};
    // Utility-based preemption needs the trials' curves; until a preemptor's curve shows it is
    // worth more than the preemptee's, nothing is preempted.
    return {false, "no utility evidence that the preemptor is worth more"};
}

uint32_t preemptee_order(const PreemptFacts& job) {
    // Lowest partition tier first, then lowest priority: Slurm's own order within our rule.
    return (static_cast<uint32_t>(job.partition_tier) << 16) | ((job.priority >> 16) & 0xffffu);
}

}  // namespace explsched
