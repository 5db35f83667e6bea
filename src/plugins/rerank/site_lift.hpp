// site_factor mode's lift of a job the placement planner places before a higher-priority one
// (doc/placement.md, "The planner in slurmctld"). priority/multifactor computes the priority there,
// as the sum of its factors and the site factor, so the amount that raises the job just above the
// one it passes is added to its site factor, and kept there while the job keeps passing someone.
// Pure arithmetic on Slurm's unsigned values (the site factor offset by NICE_OFFSET, as Slurm
// stores it); no Slurm header.
#pragma once

#include <algorithm>
#include <cstdint>

namespace explsched::rerank {

// The priority just above `passed` (saturating below UINT32_MAX, which Slurm does not use): where
// a job placed before the one of priority `passed` is raised to, in either mode.
constexpr std::uint32_t just_above(std::uint32_t passed) {
    return passed >= UINT32_MAX - 1 ? UINT32_MAX - 1 : passed + 1;
}

// The lift of a job whose priority is `priority` (with its lift `lift` in it) after a round in which
// it passes a job of priority `passed`: enough to bring it to passed + 1, never more than that, and
// never less than it had (while it passes someone, what it was given stays: no priority going up
// and down each round). A job already at or above passed + 1 gets nothing more. Saturates.
constexpr std::uint32_t next_site_lift(std::uint32_t lift, std::uint32_t priority, std::uint32_t passed) {
    const std::uint32_t target = just_above(passed);
    if (priority >= target) return lift;
    return static_cast<std::uint32_t>(
        std::min<std::uint64_t>(std::uint64_t{lift} + (target - priority), UINT32_MAX));
}

// A site factor with a lift added (saturating: Slurm's field is 32 bits).
constexpr std::uint32_t lifted_site_factor(std::uint32_t site, std::uint32_t lift) {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{site} + lift, UINT32_MAX));
}

// A value with the lift in it taken off again (a site factor, or a priority for the planner's
// order): never below `floor` (1 for a priority: 0 means held).
constexpr std::uint32_t unlifted(std::uint32_t value, std::uint32_t lift, std::uint32_t floor = 0) {
    return value > lift && value - lift > floor ? value - lift : floor;
}

}  // namespace explsched::rerank
