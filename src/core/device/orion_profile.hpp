// Import of per-kernel GPU profiles in the format of Orion (eth-easl/orion,
// profiling/postprocessing/profiles/): a CSV with the header
//   Name,Profile,Memory_footprint,SM_usage,Duration
// one row per kernel in issue order. Profile is 1 (compute bound), 0 (memory bound) or -1
// (unknown); SM_usage the SMs the kernel's blocks occupy (may exceed the device's SM count);
// Duration nanoseconds. Kernel names are not quoted and may contain commas (C++ template
// arguments), so the last four fields are numbers and everything before them is the name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"
#include "core/device/kernel_profile.hpp"

namespace explsched {

// Parses the CSV text. `origin` names the source in error messages ("<origin>:<line>: ...");
// `sm_count` is the SM count of the device the profile was taken on (80 for Orion's V100), used
// to cap SM demand and derive bandwidth demand.
Result<std::vector<KernelProfile>> parse_orion_profile(std::string_view text, std::string_view origin,
                                                       std::uint32_t sm_count);

// Reads and parses a file.
Result<std::vector<KernelProfile>> load_orion_profile(const std::string& path, std::uint32_t sm_count);

}  // namespace explsched
