// The rank every job gets from the terms Slurm sites already know: age (time eligible), the
// partition's PriorityJobFactor, and nice. Non-exploratory jobs are ranked by this alone, so they
// never starve behind sweeps; exploratory jobs add the utility-versus-price term on top.
#pragma once

#include <cstdint>

#include "config.hpp"

namespace explsched {

struct JobFacts {
    double eligible_seconds = 0;  // now - the time the job became eligible (0 if not yet)
    double partition_norm = 0;    // the partition's PriorityJobFactor / the highest one, in [0, 1]
    int64_t nice = 0;             // Slurm nice (already without NICE_OFFSET); positive lowers rank
};

struct BasicRank {
    double age_factor = 0;        // [0, 1]
    double partition_factor = 0;  // [0, 1]
    double weighted = 0;          // weight_age * age + weight_partition * partition
};

BasicRank basic_rank(const JobFacts& job, const Settings& settings);

// Turns a weighted sum into a Slurm priority: adds 1 (0 is reserved for held jobs), subtracts
// nice, and clamps into [1, 2^32 - 2] (UINT32_MAX is never used: Slurm reserves it).
uint32_t to_slurm_priority(double weighted, int64_t nice);

}  // namespace explsched
