#include "core/curves/curve_budget.hpp"

#include <algorithm>
#include <cmath>

namespace explsched {

namespace {

double weighted_mean(double a, double wa, double b, double wb) { return (a * wa + b * wb) / (wa + wb); }

// One point standing for both `a` (earlier) and `b`. A non-finite metric is divergence and must
// survive binning; an unknown (NaN) wall time does not pull a known one away.
CurvePoint merge(const CurvePoint& a, std::uint32_t wa, const CurvePoint& b, std::uint32_t wb) {
    const double fa = wa, fb = wb;
    CurvePoint m;
    m.step = weighted_mean(a.step, fa, b.step, fb);
    if (!std::isfinite(b.metric)) {
        m.metric = b.metric;
    } else if (!std::isfinite(a.metric)) {
        m.metric = a.metric;
    } else {
        m.metric = weighted_mean(a.metric, fa, b.metric, fb);
    }
    if (std::isnan(a.wall_time)) {
        m.wall_time = b.wall_time;
    } else if (std::isnan(b.wall_time)) {
        m.wall_time = a.wall_time;
    } else {
        m.wall_time = weighted_mean(a.wall_time, fa, b.wall_time, fb);
    }
    m.throughput = std::isnan(b.throughput) ? a.throughput : b.throughput;
    return m;
}

}  // namespace

BoundedCurve::BoundedCurve(std::size_t max_points) : max_points_(std::max(max_points, kMinCurvePoints)) {}

std::size_t BoundedCurve::dense_tail() const { return std::min(kDenseTail, max_points_ / 4); }

void BoundedCurve::push_back(const CurvePoint& point) {
    points_.push_back(point);
    weight_.push_back(1);
    ++reported_;
    if (points_.size() - bins_ > dense_tail()) fold_oldest_raw();
    if (bins_ + dense_tail() > max_points_) double_stride();
}

void BoundedCurve::set_max_points(std::size_t max_points) {
    max_points_ = std::max(max_points, kMinCurvePoints);
    while (points_.size() - bins_ > dense_tail()) fold_oldest_raw();
    while (bins_ + dense_tail() > max_points_) double_stride();
}

// The oldest raw point joins the newest bin while that bin stands for fewer than `stride_`
// reports, else it starts a new bin. Moves the dense tail down by one (at most kDenseTail points).
void BoundedCurve::fold_oldest_raw() {
    if (stride_ == 1) {  // nothing binned yet: the raw point is a bin of one
        ++bins_;
        return;
    }
    const std::size_t raw = bins_;
    if (bins_ > 0 && weight_[bins_ - 1] < stride_) {
        const std::size_t last = bins_ - 1;
        points_[last] = merge(points_[last], weight_[last], points_[raw], weight_[raw]);
        weight_[last] += weight_[raw];
        points_.erase(points_.begin() + static_cast<std::ptrdiff_t>(raw));
        weight_.erase(weight_.begin() + static_cast<std::ptrdiff_t>(raw));
    } else {
        ++bins_;
    }
}

// Every bin merges with its neighbour: bins then stand for twice as many reports, and stay
// (but for the newest, still filling) of equal weight: the older curve keeps the spread over the
// steps the reports had, which is what the fit's equal-count binning assumes. O(points), once per
// doubling of the reports.
void BoundedCurve::double_stride() {
    stride_ *= 2;
    std::size_t out = 0;
    std::size_t i = 0;
    for (; i + 1 < bins_; i += 2, ++out) {
        points_[out] = merge(points_[i], weight_[i], points_[i + 1], weight_[i + 1]);
        weight_[out] = weight_[i] + weight_[i + 1];
    }
    for (; i < points_.size(); ++i, ++out) {
        points_[out] = points_[i];
        weight_[out] = weight_[i];
    }
    bins_ = (bins_ + 1) / 2;
    points_.resize(out);
    weight_.resize(out);
}

}  // namespace explsched
