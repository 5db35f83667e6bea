#include "core/sched/priority.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace explsched {

double value_factor(double utility, double price, double ratio) {
    if (!(utility > 0.0)) return 0.0;
    if (!(price > 0.0)) return 1.0;  // free GPUs: anything useful is worth running
    const double span = std::log(std::max(ratio, 1.0 + 1e-9));
    return std::clamp(0.5 + std::log(utility / price) / (2.0 * span), 0.0, 1.0);
}

double age_factor(double waited_s, double max_age_s) {
    if (!(waited_s > 0.0) || !(max_age_s > 0.0)) return 0.0;
    return std::min(1.0, waited_s / max_age_s);
}

std::uint32_t to_slurm_priority(double weighted, std::int64_t nice) {
    constexpr double kMax = static_cast<double>(std::numeric_limits<std::uint32_t>::max() - 1);
    if (!std::isfinite(weighted)) weighted = 0;
    const double p = std::round(weighted) + 1.0 - static_cast<double>(nice);
    return static_cast<std::uint32_t>(std::clamp(p, 1.0, kMax));
}

double starvation_floor(double value, double age) { return std::max(value, 0.5 * age); }

std::uint32_t compose_priority(double value, double age, double partition, std::int32_t nice,
                               const EngineSettings& settings) {
    const double weighted = settings.weight_value * std::clamp(value, 0.0, 1.0) +
                            settings.weight_age * std::clamp(age, 0.0, 1.0) +
                            settings.weight_partition * std::clamp(partition, 0.0, 1.0);
    return to_slurm_priority(weighted, nice);
}

}  // namespace explsched
