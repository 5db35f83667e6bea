// Every trial's reported curve as a host keeps it in memory between rounds (priority/explsched),
// keyed by job INSTANCE: (job id, submit time). Slurm reuses job ids (wrap-around at MaxJobId, a
// cluster started with a clean state), so a curve reported for an earlier job with the same id
// must never be read as the new job's. Each curve is bounded (curves/curve_budget.hpp).
//
// Reports written before the store knew instances carry submit time 0 ("legacy"). They are read
// as a job's only while no report for that id names a real instance, and only those accepted at
// or after the job's submit time (a report cannot be about a job submitted after it arrived):
// an old job's legacy curve is never handed to a new job with its id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/base/curve_point.hpp"
#include "core/curves/curve_budget.hpp"

namespace explsched {

class TrialCurves {
public:
    explicit TrialCurves(std::size_t max_points = kDefaultMaxCurvePoints) : max_points_(max_points) {}

    // Appends a stored report's point to its instance's curve; `point.wall_time` must be the
    // server's acceptance time (what the legacy rule compares with submit times).
    // `uid` is the reporter's (explschedd accepts an instance's reports from its owner, root or
    // SlurmUser only); an instance remembers its first reporter.
    void add(std::uint32_t job_id, std::int64_t job_submit, std::uint32_t uid, const CurvePoint& point);
    // The curve of the job instance (job_id, submit); empty if none. Valid until the next add,
    // adopt_earlier, retain, clear or set_max_points.
    PointSpan curve(std::uint32_t job_id, std::int64_t submit) const;
    // A requeued job: Slurm gave it a new submit time, and its reports since carry it (after
    // explschedd's owner cache expires: until then they may carry the earlier one). Its earlier
    // instances' curves (same id, earlier non-zero submit time) and its own become one curve, in
    // the order the points were accepted; a run that restarted from an earlier checkpoint
    // replaces the points the run before reported from that step on. Called every round.
    // Only for a job whose restart count says it was requeued, and only instances first reported
    // by the job's owner (or root): another user's job that had the id before is never adopted.
    void adopt_earlier(std::uint32_t job_id, std::int64_t submit, std::uint32_t owner);
    // Keeps only the instances live(job_id, submit) answers true for (legacy ones are asked with
    // submit 0).
    template <typename Live>
    void retain(Live live) {
        for (auto it = by_id_.begin(); it != by_id_.end();) {
            auto& v = it->second;
            for (std::size_t i = v.size(); i-- > 0;)
                if (!live(it->first, v[i].submit)) v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
            it = v.empty() ? by_id_.erase(it) : std::next(it);
        }
    }
    void set_max_points(std::size_t max_points);
    void clear() { by_id_.clear(); }

    std::size_t instances() const;
    std::size_t points() const;

private:
    struct Instance {
        std::int64_t submit = 0;
        BoundedCurve curve;
        std::uint32_t uid = 0;  // the first reporter
    };
    std::size_t max_points_;
    std::unordered_map<std::uint32_t, std::vector<Instance>> by_id_;
};

}  // namespace explsched
