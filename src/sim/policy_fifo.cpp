// fifo: what Slurm does out of the box (priority/basic with backfill and no time limits): pending
// jobs in submission order, each started as soon as its GPUs are free (later jobs that fit may go
// ahead of one that does not), nothing preempted, every trial trained to its full length.
#include "sim/sim_policy.hpp"

namespace explsched::sim {

namespace {

class FifoPolicy final : public Policy {
public:
    std::string_view name() const override { return "fifo"; }

    Status schedule(const RoundInput& input, RoundPlan& plan) override {
        FreeGpus free(*input.cluster);
        start_in_order(input.pending, free, plan);
        return {};
    }
};

}  // namespace

std::unique_ptr<Policy> make_fifo_policy(const PolicyContext&) { return std::make_unique<FifoPolicy>(); }

}  // namespace explsched::sim
