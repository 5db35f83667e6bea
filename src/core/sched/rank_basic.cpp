#include "core/sched/rank_basic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace explsched {

uint32_t to_slurm_priority(double weighted, int64_t nice) {
    constexpr double kMax = static_cast<double>(std::numeric_limits<uint32_t>::max() - 1);
    if (!std::isfinite(weighted)) weighted = 0;
    const double p = std::round(weighted) + 1.0 - static_cast<double>(nice);
    return static_cast<uint32_t>(std::clamp(p, 1.0, kMax));
}

}  // namespace explsched
