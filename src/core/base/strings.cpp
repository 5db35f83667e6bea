#include "core/base/strings.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace explsched {

std::string_view trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t\r\n");
    return text.substr(first, last - first + 1);
}

std::vector<std::string_view> split(std::string_view text, std::string_view separators) {
    std::vector<std::string_view> out;
    size_t start = 0;
    for (;;) {
        const auto pos = text.find_first_of(separators, start);
        if (pos == std::string_view::npos) {
            out.push_back(text.substr(start));
            return out;
        }
        out.push_back(text.substr(start, pos - start));
        start = pos + 1;
    }
}

std::optional<uint64_t> parse_uint64(std::string_view text) {
    uint64_t value = 0;
    if (text.empty()) return std::nullopt;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
    return value;
}

std::optional<int64_t> parse_int64(std::string_view text) {
    int64_t value = 0;
    if (text.empty()) return std::nullopt;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
    return value;
}

std::optional<double> parse_finite_double(std::string_view text) {
    // from_chars for double is not in GCC 10's libstdc++; strtod on a bounded copy is portable.
    if (text.empty() || text.size() > 64) return std::nullopt;
    const std::string copy(text);
    char* end = nullptr;
    const double value = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size()) return std::nullopt;
    if (!std::isfinite(value)) return std::nullopt;
    // strtod accepts hex floats and leading spaces; a config value should be a plain decimal.
    if (copy.find_first_of("xXpP \t") != std::string::npos) return std::nullopt;
    return value;
}

std::string printable_excerpt(std::string_view text, std::size_t max) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    const std::string_view head = text.substr(0, max);
    out.reserve(head.size() + 24);
    for (const char ch : head) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += ch;
        } else {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
        }
    }
    if (head.size() < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
    return out;
}

}  // namespace explsched
