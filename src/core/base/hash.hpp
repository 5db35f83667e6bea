// Combining hash values. Header-only (constexpr), usable everywhere including the intercept.
#pragma once

#include <cstdint>

namespace explsched {

// Mixes `value` into `seed`; the order of the values matters. The formula is the one kernel
// admission has always used for its sequence-context keys, kept bit for bit so that every key
// (and hence which keys collide) stays what it was.
constexpr std::uint64_t hash_combine(std::uint64_t seed, std::uint64_t value) noexcept {
    return (seed * 0x9E3779B97F4A7C15ULL) ^ (value + 0x632BE59BD9B4E019ULL + (seed << 6));
}

}  // namespace explsched
