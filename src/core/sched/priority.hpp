// Slurm priority: a monotone map of a trial's utility against the GPU price, plus the age and
// partition terms every Slurm site knows, minus nice. Each term is a factor in [0, 1] times its
// weight; the sum goes to to_slurm_priority, which keeps it in [1, 2^32 - 2].
#pragma once

#include <cstdint>

#include "core/sched/engine_settings.hpp"

namespace explsched {

// Value factor of a priced trial: 0.5 when utility equals the price, rising (falling) by 0.5 for
// every factor U/L above (below) it, on a log scale, clamped to [0, 1]. Monotone increasing in
// utility and decreasing in price. `ratio` is U/L (> 1).
double value_factor(double utility, double price, double ratio);

// min(1, waited / max_age): the age term, and the anti-starvation floor of the value term.
double age_factor(double waited_s, double max_age_s);

// A pending job that has waited its full max_age ranks at least like a job that pays the price:
// value' = max(value, 0.5 x age). Hopeless trials are exempt (their value stays 0).
double starvation_floor(double value, double age);

// The last step of every rank: a weighted sum of priority terms becomes a Slurm priority. Adds 1
// (0 is reserved for held jobs), subtracts nice, and clamps into [1, 2^32 - 2] (UINT32_MAX is
// never used: Slurm reserves it). A non-finite sum counts as 0.
std::uint32_t to_slurm_priority(double weighted, std::int64_t nice);

std::uint32_t compose_priority(double value, double age, double partition, std::int32_t nice,
                               const EngineSettings& settings);

}  // namespace explsched
