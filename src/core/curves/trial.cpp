#include "core/curves/trial.hpp"

#include <cmath>

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

Result<CleanCurve> clean_curve(PointSpan points) {
    CleanCurve curve;
    curve.steps.reserve(points.size);
    curve.metrics.reserve(points.size);
    double previous_step = -1.0;
    for (std::size_t i = 0; i < points.size; ++i) {
        const CurvePoint& p = points[i];
        if (auto s = check_point_step(i, p.step); !s) return s.error();
        if (p.step < previous_step) {
            return point_error(i, "step", p.step,
                               "decreases (previous step " + format_point_value(previous_step) + ")");
        }
        if (auto s = check_point_values(i, p); !s) return s.error();
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
                                   ("differs from the value " + format_point_value(curve.metrics.back()) +
                                    " already reported for step " + format_point_value(p.step)));
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
