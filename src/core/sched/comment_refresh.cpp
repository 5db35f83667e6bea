#include "core/sched/comment_refresh.hpp"

namespace explsched {

bool comment_due(const CommentMark& mark, TrialState state, Decision decision, std::size_t points,
                 std::int64_t now, std::uint32_t job_id, bool has_comment, std::uint32_t gpu,
                 ReasonCode code) {
    const std::int64_t refresh = kCommentRefresh + static_cast<std::int64_t>(job_id % kCommentRefresh);
    return mark.written == 0 || mark.state != state || mark.decision != decision || mark.points != points ||
           mark.gpu != gpu || mark.code != code || now - mark.written >= refresh || !has_comment;
}

}  // namespace explsched
