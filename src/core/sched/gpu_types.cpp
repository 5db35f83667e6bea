#include "core/sched/gpu_types.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/strings.hpp"
#include "core/sched/gpu_count.hpp"

namespace explsched {

namespace {

bool type_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
}

char lower_char(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool same_lower(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower_char(a[i]) != lower_char(b[i])) return false;
    return true;
}

}  // namespace

GpuTypeId GpuTypeNames::intern(std::string_view name) {
    if (const GpuTypeId known = find(name); known != kNoGpuType) return known;
    if (name.empty() || name.size() > 32 || names_.size() > kMaxTypes) return kNoGpuType;
    for (char c : name)
        if (!type_char(c)) return kNoGpuType;
    std::string lowered(name);
    for (char& c : lowered) c = lower_char(c);
    names_.push_back(std::move(lowered));
    return static_cast<GpuTypeId>(names_.size() - 1);
}

GpuTypeId GpuTypeNames::find(std::string_view name) const {
    if (name.empty()) return kNoGpuType;
    for (std::size_t i = 1; i < names_.size(); ++i)
        if (same_lower(names_[i], name)) return static_cast<GpuTypeId>(i);
    return kNoGpuType;
}

const std::string& GpuTypeNames::name(GpuTypeId id) const {
    return id < names_.size() ? names_[id] : names_[0];
}

void GpuTypeNames::catch_up(const GpuTypeNames& other) {
    for (std::size_t i = names_.size(); i < other.names_.size(); ++i) names_.push_back(other.names_[i]);
}

GpuTypeMask node_gpu_types(std::string_view gres, GpuTypeNames& names) {
    GpuTypeMask mask = 0;
    // One item at a time: node_gpus() reports only the first type of a list.
    for (std::string_view item : split(gres, ",")) {
        const GpuCount c = node_gpus(trim(item));
        if (c.count > 0 && !c.type.empty()) mask |= gpu_type_bit(names.intern(c.type));
    }
    return mask;
}

GpuTypeId tres_gpu_type(std::string_view tres, GpuTypeNames& names) {
    const GpuCount c = tres_gpus(tres);
    return c.type.empty() ? kNoGpuType : names.intern(c.type);
}

namespace {

// The fastest of `offered` for `model` per the table; 0 when the table ranks none of them.
GpuTypeId fastest_offered(GpuTypeMask offered, const std::string& model, std::uint32_t gpus,
                          const ThroughputTable& table, const GpuTypeNames& names) {
    if (model.empty() || table.empty()) return kNoGpuType;
    GpuTypeId best = kNoGpuType;
    double best_speed = 0.0;
    const int scale = static_cast<int>(std::max<std::uint32_t>(gpus, 1));
    for (std::size_t id = 1; id <= names.count() && id <= GpuTypeNames::kMaxTypes; ++id) {
        if ((offered & (GpuTypeMask{1} << id)) == 0) continue;
        const double speed = table.throughput(model, names.name(static_cast<GpuTypeId>(id)), scale);
        if (std::isfinite(speed) && speed > best_speed) {
            best_speed = speed;
            best = static_cast<GpuTypeId>(id);
        }
    }
    return best;
}

bool single_type(GpuTypeMask mask) { return mask != 0 && (mask & (mask - 1)) == 0; }

GpuTypeId only_type(GpuTypeMask mask) {
    GpuTypeId id = 0;
    while (mask > 1) {
        mask >>= 1;
        ++id;
    }
    return id;
}

}  // namespace

GpuTypeChoice choose_gpu_types(const JobGpuFacts& f, const std::string& model, std::uint32_t gpus,
                               const ThroughputTable& table, const GpuTypeNames& names) {
    GpuTypeChoice c;
    if (f.running) {
        c.valued_on = f.allocated != kNoGpuType ? f.allocated : f.requested;
        // Its speed comes from its newest points: this run's once it has one.
        const bool point_from_this_run = f.last_point_time >= 0.0 && f.last_point_time >= f.start_time;
        if (!point_from_this_run && f.previous != c.valued_on) c.measured_on = f.previous;
        return c;
    }
    if (f.requested != kNoGpuType) {
        c.valued_on = f.requested;
    } else if (single_type(f.offered)) {
        c.valued_on = only_type(f.offered);
    } else {
        c.valued_on = fastest_offered(f.offered, model, gpus, table, names);
    }
    if (f.previous != c.valued_on) c.measured_on = f.previous;
    return c;
}

const char* to_string(GpuValuation v) {
    switch (v) {
        case GpuValuation::no_model:
            return "no-model";
        case GpuValuation::no_table:
            return "no-table";
        case GpuValuation::model_not_in_table:
            return "model-not-in-table";
        case GpuValuation::type_unknown:
            return "type-unknown";
        case GpuValuation::same_type:
            return "same-type";
        case GpuValuation::no_row:
            return "no-row";
        case GpuValuation::scaled:
            return "scaled";
    }
    return "?";
}

bool gpu_valuation_from(std::string_view text, GpuValuation& out) {
    constexpr GpuValuation kAll[] = {
        GpuValuation::no_model,     GpuValuation::no_table,  GpuValuation::model_not_in_table,
        GpuValuation::type_unknown, GpuValuation::same_type, GpuValuation::no_row,
        GpuValuation::scaled};
    for (GpuValuation v : kAll)
        if (text == to_string(v)) {
            out = v;
            return true;
        }
    return false;
}

GpuValue gpu_valuation(const std::string& job_type, const std::string& gpu_type,
                       const std::string& measured_on, std::uint32_t gpus, const ThroughputTable& table) {
    GpuValue v;
    if (job_type.empty()) return v;
    if (table.empty()) {
        v.how = GpuValuation::no_table;
    } else if (!table.knows_job_type(job_type)) {
        v.how = GpuValuation::model_not_in_table;
    } else if (gpu_type.empty()) {
        v.how = GpuValuation::type_unknown;
    } else if (measured_on.empty() || same_lower(gpu_type, measured_on)) {
        v.how = GpuValuation::same_type;
    } else {
        const int scale = static_cast<int>(std::max<std::uint32_t>(gpus, 1));
        const double from = table.throughput(job_type, measured_on, scale);
        const double to = table.throughput(job_type, gpu_type, scale);
        // 0 in Gavel's table means "does not fit on that GPU": no speed to scale from.
        if (!(from > 0.0) || !std::isfinite(to)) {
            v.how = GpuValuation::no_row;
        } else {
            v.how = GpuValuation::scaled;
            v.ratio = to / from;
        }
    }
    return v;
}

std::string describe_gpu_value(std::string_view gpu_type, GpuValuation how, double ratio,
                               std::string_view measured_on, std::string_view model) {
    const std::string type = gpu_type.empty() ? "an unknown GPU type" : std::string(gpu_type);
    const std::string row = "'" + std::string(model) + "'";
    char ratio_text[32];
    std::snprintf(ratio_text, sizeof ratio_text, "%.3g", ratio);
    switch (how) {
        case GpuValuation::no_model:
            return "valued on " + type +
                   " at its measured speed (no --explore-model: not scaled by GPU type)";
        case GpuValuation::no_table:
            return "valued on " + type + " at its measured speed (--explore-model=" + row +
                   ", but the site configured no throughput_table: not scaled)";
        case GpuValuation::model_not_in_table:
            return "valued on " + type + " at its measured speed (--explore-model=" + row +
                   " is not a row of the throughput table: not scaled)";
        case GpuValuation::type_unknown:
            return "valued at its measured speed: the GPU type it runs or would run on is unknown (not "
                   "scaled)";
        case GpuValuation::same_type:
            return "valued on " + type + " at its speed measured there (throughput table row " + row +
                   ": no scaling needed)";
        case GpuValuation::no_row:
            return "valued on " + type + " at its speed measured on " + std::string(measured_on) +
                   " (the throughput table has no " + row + " figure for one of them: not scaled)";
        case GpuValuation::scaled:
            return "valued on " + type + ": speed measured on " + std::string(measured_on) + " x " +
                   ratio_text + " (throughput table: " + row + " on " + type + " = " + ratio_text + "x " +
                   std::string(measured_on) + ")";
    }
    return "valued on " + type;
}

}  // namespace explsched
