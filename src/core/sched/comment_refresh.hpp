// When a host rewrites a trial's SystemComment. slurmctld saves the text in its state, and
// formatting 10,000 lines a round would cost more than the ranking, so a line is rewritten when
// what it says changed (state, decision, the rule, a new point), when there is none, and otherwise only by a
// periodic refresh spread over the jobs by id, so that no round rewrites every line.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/sched/decision.hpp"

namespace explsched {

// What a trial's line said when it was last written, and when (seconds on the host's clock).
struct CommentMark {
    std::int64_t written = 0;  // 0: never
    TrialState state = TrialState::unknown;
    Decision decision = Decision::wait;
    std::size_t points = 0;
    std::uint32_t gpu = 0;  // the GPU valuation it said (host-defined key: type and how, e.g.)
    // the rule it named (code=): preempt/explsched decides on it (asha_behind, too_few_points,
    // leads_sweep), so a new rule is written the round it is decided, not at the next refresh
    ReasonCode code = ReasonCode::nonexploratory;
};

// A line is refreshed after kCommentRefresh + (job id mod kCommentRefresh) seconds at most.
inline constexpr std::int64_t kCommentRefresh = 30;

// Whether the line of job `job_id` must be rewritten at `now`; `has_comment`: the job has one;
// `gpu`: the key of the GPU valuation it would say now (CommentMark::gpu); `code`: the rule.
bool comment_due(const CommentMark& mark, TrialState state, Decision decision, std::size_t points,
                 std::int64_t now, std::uint32_t job_id, bool has_comment, std::uint32_t gpu = 0,
                 ReasonCode code = ReasonCode::nonexploratory);

}  // namespace explsched
