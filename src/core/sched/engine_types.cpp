#include "core/sched/engine_types.hpp"

namespace explsched {

std::string explain(const Assessment& a) {
    if (!a.explanation.empty()) return a.explanation;
    std::string text = describe(a.decision, a.reason);
    if (a.reason.code == ReasonCode::invalid_report && !a.error.empty()) text += " (" + a.error + ")";
    return text;
}

}  // namespace explsched
