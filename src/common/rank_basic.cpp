#include "rank_basic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace explsched {

BasicRank basic_rank(const JobFacts& job, const Settings& settings) {
    BasicRank r;
    const double max_age = std::max(1.0, static_cast<double>(settings.max_age));
    r.age_factor = std::clamp(job.eligible_seconds / max_age, 0.0, 1.0);
    r.partition_factor = std::isfinite(job.partition_norm) ? std::clamp(job.partition_norm, 0.0, 1.0) : 0.0;
    r.weighted = settings.weight_age * r.age_factor + settings.weight_partition * r.partition_factor;
    return r;
}

uint32_t to_slurm_priority(double weighted, int64_t nice) {
    constexpr double kMax = static_cast<double>(std::numeric_limits<uint32_t>::max() - 1);
    if (!std::isfinite(weighted)) weighted = 0;
    const double p = std::round(weighted) + 1.0 - static_cast<double>(nice);
    return static_cast<uint32_t>(std::clamp(p, 1.0, kMax));
}

}  // namespace explsched
