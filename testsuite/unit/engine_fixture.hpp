// What the engine's tests build their rounds from: accuracy curves that can be followed by hand,
// a running or pending job of a sweep, and a cluster of some GPUs at some time.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/sched/engine.hpp"

namespace enginetest {

using namespace explsched;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An accuracy curve rising towards `ceiling`, one point per 100 steps, 10 s per 100 steps.
inline std::vector<CurvePoint> rising(int n, double ceiling, double speed = 0.6) {
    std::vector<CurvePoint> pts;
    for (int i = 1; i <= n; ++i) {
        const double step = 100.0 * i;
        pts.push_back({step, ceiling - speed * std::pow(step / 100.0, -0.5), 10.0 * i, kNaN});
    }
    return pts;
}

// A maximised trial of sweep `group` with 6,000 steps to run, submitted at 0 (started at 1 when
// running).
inline JobView view(std::uint32_t id, const std::string& group, const std::vector<CurvePoint>& pts,
                    JobState state = JobState::running) {
    JobView v;
    v.key = TrialKey{id, TrialKey::kNoArrayTask};
    v.group = group;
    v.direction = Direction::maximize;
    v.max_steps = 6000;
    v.state = state;
    v.submit_time = 0;
    v.start_time = state == JobState::running ? 1 : 0;
    v.points = pts;
    return v;
}

// `total` GPUs at time `now`, `busy` of them in use (negative: the running views' sum).
inline ClusterView cluster(double now, std::uint32_t total, std::int64_t busy = -1) {
    ClusterView c;
    c.now = now;
    c.total_gpus = total;
    c.busy_gpus = busy;
    return c;
}

}  // namespace enginetest
