#include "core/device/orion_profile.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/base/strings.hpp"

namespace explsched {

namespace {

constexpr std::string_view kHeader = "Name,Profile,Memory_footprint,SM_usage,Duration";

std::string where(std::string_view origin, std::size_t line_no) {
    return std::string(origin) + ":" + std::to_string(line_no) + ": ";
}

}  // namespace

Result<std::vector<KernelProfile>> parse_orion_profile(std::string_view text, std::string_view origin,
                                                       std::uint32_t sm_count) {
    if (sm_count == 0) return make_error(std::string(origin) + ": SM count must be positive");
    std::vector<KernelProfile> out;
    std::size_t line_no = 0;
    bool seen_header = false;
    for (std::string_view raw : split(text, "\n")) {
        ++line_no;
        const std::string_view line = trim(raw);
        if (line.empty()) continue;
        if (!seen_header) {
            if (line != kHeader) {
                return make_error(where(origin, line_no) + "header '" + std::string(line) + "' is not '" +
                                  std::string(kHeader) + "'");
            }
            seen_header = true;
            continue;
        }
        std::vector<std::string_view> fields = split(line, ",");
        if (fields.size() < 5) {
            return make_error(where(origin, line_no) + "expected 5 fields " +
                              "(Name,Profile,Memory_footprint,SM_usage,Duration), got " +
                              std::to_string(fields.size()));
        }
        const std::size_t n = fields.size();
        KernelProfile p;
        // Re-join the leading fields: template arguments in the name contain commas.
        const std::size_t name_end =
            static_cast<std::size_t>(fields[n - 5].data() - line.data()) + fields[n - 5].size();
        p.name = std::string(trim(line.substr(0, name_end)));
        if (p.name.empty()) return make_error(where(origin, line_no) + "field 'Name' is empty");

        const std::string_view prof = trim(fields[n - 4]);
        const auto cls = parse_int64(prof);
        if (!cls || *cls < -1 || *cls > 1) {
            return make_error(where(origin, line_no) + "field 'Profile': '" + std::string(prof) +
                              "' is not one of -1, 0, 1");
        }
        p.cls = *cls == 1 ? KernelClass::compute : (*cls == 0 ? KernelClass::memory : KernelClass::unknown);

        const std::string_view mem = trim(fields[n - 3]);
        if (!parse_uint64(mem)) {
            return make_error(where(origin, line_no) + "field 'Memory_footprint': '" + std::string(mem) +
                              "' is not a non-negative integer");
        }
        const std::string_view sm = trim(fields[n - 2]);
        const auto sm_usage = parse_uint64(sm);
        if (!sm_usage) {
            return make_error(where(origin, line_no) + "field 'SM_usage': '" + std::string(sm) +
                              "' is not a non-negative integer");
        }
        const std::string_view dur = trim(fields[n - 1]);
        const auto duration = parse_uint64(dur);
        if (!duration || *duration == 0) {
            return make_error(where(origin, line_no) + "field 'Duration': '" + std::string(dur) +
                              "' is not a positive integer (nanoseconds)");
        }
        p.sm_usage = *sm_usage;
        // A kernel with zero reported SMs still occupies one while it runs.
        p.demand.sms = static_cast<double>(std::clamp<std::uint64_t>(*sm_usage, 1, sm_count));
        p.demand.cls = p.cls;
        p.demand.bw = bandwidth_demand(p.cls, p.demand.sms, sm_count);
        p.demand.duration_ns = *duration;
        out.push_back(std::move(p));
    }
    if (!seen_header) return make_error(std::string(origin) + ": empty profile (no header)");
    if (out.empty()) return make_error(std::string(origin) + ": profile has no kernel rows");
    return out;
}

Result<std::vector<KernelProfile>> load_orion_profile(const std::string& path, std::uint32_t sm_count) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error("cannot read kernel profile " + path + ": " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    return parse_orion_profile(text.str(), path, sm_count);
}

}  // namespace explsched
