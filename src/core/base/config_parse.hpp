// The mechanics of table-driven configuration, shared by every settings table: "key=value" items
// split from a PriorityParameters line (separators), from plugstack.conf arguments, or from a
// file's lines (one per line, '#' comments, errors naming "<origin>:<line>"), and the value
// parsers every table needs. Pure functions: they never log, and a failed parse leaves the
// caller's settings untouched. What the keys mean is the table's (core/sched/settings.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/result.hpp"
#include "core/base/strings.hpp"

namespace explsched {

struct KeyValue {
    std::string_view key;
    std::string_view value;
};

// "key=value", both trimmed; "setting '<item>': expected key=value" without '='.
Result<KeyValue> split_key_value(std::string_view item);

// Value parsers; the caller adds the key to the message.
// yes/true/1/on or no/false/0/off.
Result<bool> parse_bool_value(std::string_view v);
// Seconds, with an optional unit suffix s, m, h or d.
Result<uint64_t> parse_duration_value(std::string_view v);

// Applies `apply(settings, item)` (-> Result<Settings>) to every non-blank item of `text` split on
// `separators`, in order; the first error is the answer.
template <typename Settings, typename Apply>
Result<Settings> apply_items(std::string_view text, std::string_view separators, const Settings& base,
                             Apply apply) {
    Settings out = base;
    for (std::string_view item : split(text, separators)) {
        if (trim(item).empty()) continue;
        auto next = apply(out, item);
        if (!next) return next.error();
        out = std::move(next).value();
    }
    return out;
}

// The same over argv-style items (each one item, blank or not).
template <typename Settings, typename Apply>
Result<Settings> apply_args(const std::vector<std::string>& args, const Settings& base, Apply apply) {
    Settings out = base;
    for (const std::string& arg : args) {
        auto next = apply(out, arg);
        if (!next) return next.error();
        out = std::move(next).value();
    }
    return out;
}

// The same over a file's lines: blank lines and '#' comments ignored; an error is prefixed with
// "<origin>:<line number>: ".
template <typename Settings, typename Apply>
Result<Settings> apply_lines(std::string_view text, std::string_view origin, const Settings& base,
                             Apply apply) {
    Settings out = base;
    std::size_t line_no = 0;
    for (std::string_view line : split(text, "\n")) {
        ++line_no;
        if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        if (trim(line).empty()) continue;
        auto next = apply(out, line);
        if (!next)
            return make_error(std::string(origin) + ":" + std::to_string(line_no) + ": " +
                              next.error().message);
        out = std::move(next).value();
    }
    return out;
}

}  // namespace explsched
