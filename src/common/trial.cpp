#include "trial.hpp"

#include <cmath>
#include <sstream>

namespace explsched {

Result<Direction> parse_direction(std::string_view text) {
    if (text == "max" || text == "maximize" || text == "maximise") return Direction::maximize;
    if (text == "min" || text == "minimize" || text == "minimise") return Direction::minimize;
    return make_error("direction: '" + std::string(text) + "' is neither 'min' nor 'max'");
}

const char* to_string(Direction direction) { return direction == Direction::maximize ? "max" : "min"; }

std::string to_string(const TrialKey& key) {
    std::string text = std::to_string(key.job_id);
    if (key.array_task != TrialKey::kNoArrayTask) text += "_" + std::to_string(key.array_task);
    return text;
}

namespace {

std::string format_value(double value) {
    std::ostringstream out;
    out.precision(12);
    out << value;
    return out.str();
}

Error point_error(std::size_t index, const char* field, double value, const char* why) {
    return make_error("curve point " + std::to_string(index) + ": " + field + " " + format_value(value) +
                      ": " + why);
}

// Optional fields (wall time, throughput): NaN means "not reported".
Status check_optional(std::size_t index, const char* field, double value) {
    if (std::isnan(value)) return {};
    if (!std::isfinite(value)) return point_error(index, field, value, "not finite");
    if (value < 0.0) return point_error(index, field, value, "negative");
    if (value > kMaxAbsValue) return point_error(index, field, value, "absurdly large");
    return {};
}

}  // namespace

Result<CleanCurve> clean_curve(PointSpan points) {
    CleanCurve curve;
    curve.steps.reserve(points.size);
    curve.metrics.reserve(points.size);
    double previous_step = -1.0;
    for (std::size_t i = 0; i < points.size; ++i) {
        const CurvePoint& p = points[i];
        if (!std::isfinite(p.step)) return point_error(i, "step", p.step, "not finite");
        if (p.step < 0.0) return point_error(i, "step", p.step, "negative");
        if (p.step > kMaxAbsValue) return point_error(i, "step", p.step, "absurdly large");
        if (p.step < previous_step) {
            return point_error(i, "step", p.step,
                               ("decreases (previous step " + format_value(previous_step) + ")").c_str());
        }
        if (auto s = check_optional(i, "wall_time", p.wall_time); !s) return s.error();
        if (auto s = check_optional(i, "throughput", p.throughput); !s) return s.error();
        if (std::isfinite(p.metric) && std::fabs(p.metric) > kMaxAbsValue) {
            return point_error(i, "metric", p.metric, "absurdly large");
        }
        if (curve.diverged) {
            previous_step = p.step;
            continue;  // after divergence nothing is fitted; later points still get checked
        }
        if (!std::isfinite(p.metric)) {
            // NaN/inf loss: training diverged. Not an input error; policy decides.
            curve.diverged = true;
            curve.diverged_at_step = p.step;
            previous_step = p.step;
            continue;
        }
        if (p.step == previous_step && !curve.steps.empty() && curve.steps.back() == p.step) {
            if (curve.metrics.back() != p.metric) {
                return point_error(i, "metric", p.metric,
                                   ("differs from the value " + format_value(curve.metrics.back()) +
                                    " already reported for step " + format_value(p.step))
                                       .c_str());
            }
            continue;  // an exact repeat (a resent report) is merged
        }
        curve.steps.push_back(p.step);
        curve.metrics.push_back(p.metric);
        previous_step = p.step;
    }
    return curve;
}

Status validate_points(PointSpan points) {
    auto curve = clean_curve(points);
    if (!curve) return curve.error();
    return {};
}

}  // namespace explsched
