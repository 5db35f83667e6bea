// How co-running kernels slow each other down on one GPU: a fluid model of SM and DRAM
// bandwidth sharing used by the contention simulator.
//   - SMs: when the kernels' summed SM demand exceeds the device, the block scheduler spreads
//     them in proportion to demand, so every kernel runs at N / sum(sms) of its exclusive speed.
//   - Bandwidth: at that speed kernel i needs bw_i * rate; if the sum exceeds the device's
//     bandwidth it is shared max-min fairly, and a kernel that gets less than it needs slows in
//     proportion (a compute-bound kernel that needs little keeps its share).
//   - Kernels of different jobs also contend in L2 and on the memory controllers beyond what the
//     two sums capture: `colocation_penalty` slows every kernel by that fraction while kernels
//     of two or more jobs run together.
#pragma once

#include <cstdint>
#include <vector>

namespace explsched {

struct ContentionParams {
    std::uint32_t sm_count = 80;
    double bandwidth = 1.0;           // device bandwidth in the units of RunningKernel::bw
    double colocation_penalty = 0.0;  // fractional slowdown while two or more jobs co-run
};

struct RunningKernel {
    double sms = 0.0;
    double bw = 0.0;  // demand at exclusive speed
    std::uint32_t job = 0;
};

// Progress rate of each kernel (1.0 = its exclusive speed), written to `rates`.
void progress_rates(const ContentionParams& params, const std::vector<RunningKernel>& kernels,
                    std::vector<double>& rates);

}  // namespace explsched
