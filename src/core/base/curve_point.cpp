#include "core/base/curve_point.hpp"

#include <cmath>
#include <sstream>

namespace explsched {

std::string format_point_value(double value) {
    std::ostringstream out;
    out.precision(12);
    out << value;
    return out.str();
}

Error point_error(std::size_t index, const char* field, double value, const std::string& why) {
    return make_error("curve point " + std::to_string(index) + ": " + field + " " +
                      format_point_value(value) + ": " + why);
}

namespace {

// Optional fields (wall time, throughput): NaN means "not reported".
Status check_optional(std::size_t index, const char* field, double value) {
    if (std::isnan(value)) return {};
    if (!std::isfinite(value)) return point_error(index, field, value, "not finite");
    if (value < 0.0) return point_error(index, field, value, "negative");
    if (value > kMaxAbsValue) return point_error(index, field, value, "absurdly large");
    return {};
}

}  // namespace

Status check_point_step(std::size_t index, double step) {
    if (!std::isfinite(step)) return point_error(index, "step", step, "not finite");
    if (step < 0.0) return point_error(index, "step", step, "negative");
    if (step > kMaxAbsValue) return point_error(index, "step", step, "absurdly large");
    return {};
}

Status check_point_values(std::size_t index, const CurvePoint& p) {
    if (auto s = check_optional(index, "wall_time", p.wall_time); !s) return s.error();
    if (auto s = check_optional(index, "throughput", p.throughput); !s) return s.error();
    if (std::isfinite(p.metric) && std::fabs(p.metric) > kMaxAbsValue)
        return point_error(index, "metric", p.metric, "absurdly large");
    return {};
}

Status check_point(std::size_t index, const CurvePoint& point) {
    if (auto s = check_point_step(index, point.step); !s) return s;
    return check_point_values(index, point);
}

}  // namespace explsched
