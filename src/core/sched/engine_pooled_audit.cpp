// The forecast audit pooled across the sweeps of one application (doc/algorithm.md §4): a new
// sweep, or a small one, has too few checked forecasts of its own to widen its intervals, but
// its application's earlier sweeps (the same owner's trials of the same --explore-model) have
// shown how such curves beat their forecasts. A sweep reads the pooled audit until it has
// calibration_min_audits of its own.
#include <string>

#include "core/sched/engine_impl.hpp"
#include "core/sched/policy.hpp"

namespace explsched {
namespace engine_detail {

namespace {
// Applications kept at once; past this the pool starts afresh (each entry costs at most
// kAuditWindow doubles, and the number of models a site trains is small).
constexpr std::size_t kMaxPooledApplications = 4096;
}  // namespace

void PooledAudit::add(double ratio, const EngineSettings& s) {
    if (ratios.size() < kAuditWindow) {
        ratios.push_back(ratio);
    } else {
        ratios[audits % kAuditWindow] = ratio;
    }
    ++audits;
    widen = audit_widening(ratios, s);
    held = audits_held(ratios, s.audited_min_checks, s.interval_level);
}

std::string application_key(const JobView& job) {
    if (job.job_type.empty()) return {};
    return std::to_string(job.owner) + "/" + job.job_type + "/" + to_string(job.direction);
}

}  // namespace engine_detail

void Engine::Impl::pool_audit(const GroupStats& gs, double ratio) {
    if (gs.application.empty()) return;
    if (applications.size() >= engine_detail::kMaxPooledApplications &&
        applications.find(gs.application) == applications.end()) {
        applications.clear();
    }
    applications[gs.application].add(ratio, settings);
}

bool Engine::Impl::forecasts_held(const GroupStats& gs) const {
    const EngineSettings& s = settings;
    if (s.calibration_min_audits == 0 || !(s.audited_min_progress < s.hopeless_min_progress)) return false;
    if (gs.audit_ratios.size() >= s.audited_min_checks || gs.application.empty()) return gs.held;
    const auto it = applications.find(gs.application);
    return it != applications.end() && it->second.held;
}

double Engine::Impl::group_widen(const GroupStats& gs) const {
    if (settings.calibration_min_audits == 0 || gs.audit_ratios.size() >= settings.calibration_min_audits ||
        gs.application.empty()) {
        return gs.widen;
    }
    const auto it = applications.find(gs.application);
    return it == applications.end() ? gs.widen : it->second.widen;
}

}  // namespace explsched
