// One reported observation of a training curve, shared by the report wire format (report/) and
// the curve models (curves/): the vocabulary type both speak, and the checks of a single point's
// values. Ordering rules across points (steps non-decreasing, repeats agree) are curves/trial.hpp's.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace explsched {

// One report from a training job. `wall_time` is seconds of the trial's own run time (or any
// monotone clock); `throughput` is steps per second if the job measured it, NaN otherwise.
struct CurvePoint {
    double step = 0.0;
    double metric = 0.0;
    double wall_time = std::numeric_limits<double>::quiet_NaN();
    double throughput = std::numeric_limits<double>::quiet_NaN();
};

// Non-owning view of a trial's points (valid for the duration of the call that receives it): the
// hosts keep the points; copying 12,000 curves every round would dominate re-prioritisation.
struct PointSpan {
    const CurvePoint* data = nullptr;
    std::size_t size = 0;

    PointSpan() = default;
    PointSpan(const CurvePoint* first, std::size_t count) : data(first), size(count) {}
    PointSpan(const std::vector<CurvePoint>& points)  // NOLINT(google-explicit-constructor)
        : data(points.data()), size(points.size()) {}
    const CurvePoint* begin() const { return data; }
    const CurvePoint* end() const { return data + size; }
    const CurvePoint& operator[](std::size_t i) const { return data[i]; }
    bool empty() const { return size == 0; }
};

// Largest |step| or |metric| we accept; anything bigger is a unit error or garbage.
inline constexpr double kMaxAbsValue = 1e15;

// "curve point <index>: <field> <value>: <why>".
Error point_error(std::size_t index, const char* field, double value, const std::string& why);
// The step of point `index`: finite, non-negative, at most kMaxAbsValue.
Status check_point_step(std::size_t index, double step);
// The rest of point `index`: wall time and throughput finite (or NaN: not reported), non-negative
// and at most kMaxAbsValue; a finite metric at most kMaxAbsValue in magnitude (a non-finite metric
// is divergence, which is not a value error).
Status check_point_values(std::size_t index, const CurvePoint& point);
// Both, for a point on its own.
Status check_point(std::size_t index, const CurvePoint& point);
// A number as the checks print it (12 significant digits).
std::string format_point_value(double value);

}  // namespace explsched
