#include "sim/gpu_contention_model.hpp"

#include <algorithm>
#include <numeric>

namespace explsched {

void progress_rates(const ContentionParams& params, const std::vector<RunningKernel>& kernels,
                    std::vector<double>& rates) {
    const std::size_t n = kernels.size();
    rates.assign(n, 1.0);
    if (n == 0) return;

    double sms = 0.0;
    for (const RunningKernel& k : kernels) sms += k.sms;
    const double sm_count = static_cast<double>(params.sm_count);
    const double sm_rate = sms > sm_count ? sm_count / sms : 1.0;

    // Max-min fair (water-filling) share of bandwidth among the kernels' needs.
    std::vector<double> need(n);
    for (std::size_t i = 0; i < n; ++i) need[i] = kernels[i].bw * sm_rate;
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return need[a] < need[b]; });
    double left = params.bandwidth;
    for (std::size_t pos = 0; pos < n; ++pos) {
        const std::size_t i = order[pos];
        const double share = left / static_cast<double>(n - pos);
        const double alloc = std::min(need[i], share);
        left -= alloc;
        rates[i] = need[i] > 0.0 ? sm_rate * alloc / need[i] : sm_rate;
    }

    bool shared = false;
    for (std::size_t i = 1; i < n && !shared; ++i) shared = kernels[i].job != kernels[0].job;
    if (shared && params.colocation_penalty > 0.0) {
        for (double& r : rates) r *= 1.0 - params.colocation_penalty;
    }
}

}  // namespace explsched
