// Small string helpers shared by the parsers: strict number parsing (the whole text must be a
// number; no locale, no leading '+', no silent truncation) and splitting without allocation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace explsched {

std::string_view trim(std::string_view text);
// Splits on any of `separators`; keeps empty items (callers decide whether they matter).
std::vector<std::string_view> split(std::string_view text, std::string_view separators);
std::optional<uint64_t> parse_uint64(std::string_view text);
std::optional<int64_t> parse_int64(std::string_view text);
// A finite double (rejects nan, inf, empty text and trailing garbage).
std::optional<double> parse_finite_double(std::string_view text);
// Untrusted text made safe to quote in an error or a log line: at most `max` bytes of it, bytes
// outside printable ASCII (and the backslash) written as \xNN, and, when cut, "..." and its length
// ("... (100000 bytes)"), so a user's 100 kB option or an escape sequence cannot flood or drive
// slurmctld's log or a terminal.
std::string printable_excerpt(std::string_view text, std::size_t max = 64);

}  // namespace explsched
