// A trial's curve kept within a memory budget. A client may report millions of steps for one job;
// the host (priority/explsched) keeps every trial's curve in slurmctld's memory and the engine
// fits it, so both must stay bounded however much is reported. Past `max_points` the older part of
// the curve is binned: runs of consecutive reports merge into one point at their mean step and
// mean metric, every bin standing for the same number of reports (doubled whenever the budget is
// reached again), while the newest kDenseTail reports stay as reported (the measured speed and
// the latest trend are read there). The last point is never merged away. Learning curves are smooth at the
// scale the fit reads, so the fit is unchanged in quality (testsuite/bench/bench_prediction prints full
// against bounded).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/base/curve_point.hpp"

namespace explsched {

// The default budget: well above the few hundred points a real run reports (one per epoch or
// per evaluation); 36 bytes a point, so at most 72 kB per trial in slurmctld.
inline constexpr std::size_t kDefaultMaxCurvePoints = 2000;
// The smallest budget accepted: the dense tail must hold the engine's speed window and a fit.
inline constexpr std::size_t kMinCurvePoints = 64;
// Newest points never binned (at most a quarter of the budget).
inline constexpr std::size_t kDenseTail = 64;

class BoundedCurve {
public:
    explicit BoundedCurve(std::size_t max_points = kDefaultMaxCurvePoints);

    // Appends a point (in report order); bins the older part when the budget is exceeded.
    void push_back(const CurvePoint& point);
    // Changes the budget (binning now if the curve is over it); clamped to kMinCurvePoints.
    void set_max_points(std::size_t max_points);

    const std::vector<CurvePoint>& points() const { return points_; }
    std::size_t size() const { return points_.size(); }
    bool empty() const { return points_.empty(); }
    std::size_t max_points() const { return max_points_; }
    // Reports ever appended (>= size()).
    std::uint64_t reported() const { return reported_; }

private:
    std::size_t dense_tail() const;
    void fold_oldest_raw();
    void double_stride();

    std::size_t max_points_;
    std::uint64_t reported_ = 0;
    std::uint32_t stride_ = 1;  // reports per full bin
    std::size_t bins_ = 0;      // points_[0, bins_) are bins, the rest raw reports
    std::vector<CurvePoint> points_;
    std::vector<std::uint32_t> weight_;  // reports each point stands for
};

}  // namespace explsched
