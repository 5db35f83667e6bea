#include "core/base/config_parse.hpp"

#include <limits>

namespace explsched {

Result<KeyValue> split_key_value(std::string_view key_value) {
    const std::string_view item = trim(key_value);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
        return make_error("setting '" + std::string(item) + "': expected key=value");
    return KeyValue{trim(item.substr(0, eq)), trim(item.substr(eq + 1))};
}

Result<bool> parse_bool_value(std::string_view v) {
    if (v == "yes" || v == "true" || v == "1" || v == "on") return true;
    if (v == "no" || v == "false" || v == "0" || v == "off") return false;
    return make_error("'" + std::string(v) + "' is not a boolean (yes/no)");
}

// Seconds, with an optional unit suffix s, m, h or d.
Result<uint64_t> parse_duration_value(std::string_view v) {
    struct Unit {
        char suffix;
        uint64_t seconds;
    };
    static constexpr Unit kUnits[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
    uint64_t scale = 1;
    std::string_view digits = v;
    for (const Unit& u : kUnits) {
        if (!v.empty() && v.back() == u.suffix) {
            scale = u.seconds;
            digits.remove_suffix(1);
            break;
        }
    }
    auto n = parse_uint64(digits);
    if (!n) return make_error("'" + std::string(v) + "' is not a duration (e.g. 90, 90s, 15m, 2h, 1d)");
    if (*n > std::numeric_limits<uint64_t>::max() / scale)
        return make_error("'" + std::string(v) + "' is too large");
    return *n * scale;
}

}  // namespace explsched
