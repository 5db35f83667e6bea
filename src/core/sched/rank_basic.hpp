// The last step of every rank: a weighted sum of priority terms becomes a Slurm priority.
#pragma once

#include <cstdint>

namespace explsched {

// Adds 1 (0 is reserved for held jobs), subtracts nice, and clamps into [1, 2^32 - 2]
// (UINT32_MAX is never used: Slurm reserves it). A non-finite sum counts as 0.
uint32_t to_slurm_priority(double weighted, int64_t nice);

}  // namespace explsched
