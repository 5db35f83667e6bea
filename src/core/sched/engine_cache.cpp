// The engine's per-trial fit caches and its sweep (group) statistics: what a round syncs before
// it classifies anything.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>

#include "core/sched/engine_impl.hpp"
#include "core/sched/policy.hpp"
#include "core/sched/utility.hpp"

namespace explsched {

using namespace engine_detail;

namespace engine_detail {

void GroupStats::start_round(std::uint64_t r, Direction d) {
    direction = d;
    lo = ended_lo;
    hi = ended_hi;
    best = ended_best;
    second = kNaN;
    best_key = ended_best_key;
    furthest_step = ended_furthest;
    trials = 0;
    seen_round = r;
    changed = false;
    last_signature = signature;
    signature = 0;
    members.clear();
}

void GroupStats::observe(const TrialCache& c, const TrialKey& key) {
    lo = std::min(lo, c.lo);
    hi = std::max(hi, c.hi);
    furthest_step = std::max(furthest_step, c.predictor.last_step());
    const double b = c.best;
    if (std::isnan(best) || better(direction, b, best)) {
        second = best;
        best = b;
        best_key = key;
    } else if (std::isnan(second) || better(direction, b, second)) {
        second = b;
    }
}

void GroupStats::record_ended(const TrialCache& gone, const TrialKey& key) {
    ended_lo = std::min(ended_lo, gone.lo);
    ended_hi = std::max(ended_hi, gone.hi);
    ended_furthest = std::max(ended_furthest, gone.predictor.last_step());
    if (std::isnan(ended_best) || better(direction, gone.best, ended_best)) {
        ended_best = gone.best;
        ended_best_key = key;
    }
    const CurvePredictor& p = gone.predictor;
    siblings.offer(key, p, gone.max_steps, true);
    for (double r : gone.rungs) {
        if (p.last_step() < r) break;
        const double v = metric_at(p.steps(), p.metrics(), r);
        if (std::isfinite(v)) ended_rung_values.emplace_back(r, v);
    }
}

double audit_widening(std::vector<double> ratios, const EngineSettings& s) {
    if (s.calibration_min_audits == 0 || ratios.size() < s.calibration_min_audits) return 1.0;
    const double q = (1.0 + s.interval_level) / 2.0;
    const auto k =
        std::min(ratios.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ratios.size())));
    std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(k), ratios.end());
    return std::min(std::max(1.0, ratios[k]), s.calibration_max_widen);
}

void OwnerAudit::add(bool miss) {
    const std::size_t slot = checked % kOwnerAuditWindow;
    if (checked >= kOwnerAuditWindow && missed[slot]) --misses;
    missed[slot] = miss;
    if (miss) ++misses;
    ++checked;
}

double OwnerAudit::factor(const EngineSettings& s) const {
    const std::size_t n = std::min(checked, kOwnerAuditWindow);
    const std::size_t needed = std::max<std::size_t>(s.calibration_min_audits, 1);
    if (n < needed || s.forecast_miss_allowance >= 1.0) return 1.0;
    const double rate = static_cast<double>(misses) / static_cast<double>(n);
    const double excess = rate - s.forecast_miss_allowance;
    if (excess <= 0.0) return 1.0;
    return std::max(0.0, 1.0 - excess / (1.0 - s.forecast_miss_allowance));
}

Prediction widen_interval(Prediction p, double widen) {
    if (widen > 1.0 && std::isfinite(p.value)) {
        p.lower = p.value - widen * (p.value - p.lower);
        p.upper = p.value + widen * (p.upper - p.value);
        p.widened = widen;
    }
    return p;
}

}  // namespace engine_detail

namespace {

bool same_point(const CurvePoint& a, const CurvePoint& b) {
    return std::memcmp(&a, &b, sizeof(CurvePoint)) == 0;  // NaN-safe: compares the bits
}

}  // namespace

// Forget the fits of trials that left the queue (finished, stopped, held) but keep what they
// achieved in their sweep's statistics, before this round's statistics are built: a sweep's best
// often finishes first, and later siblings must still be measured against it.
void Engine::Impl::retire_departed() {
    for (auto it = cache.begin(); it != cache.end();) {
        if (index.count(it->first) != 0) {
            ++it;
            continue;
        }
        const TrialCache& gone = it->second;
        if (gone.group < groups.size() && gone.predictor.size() > 0 && !std::isnan(gone.best)) {
            groups[gone.group].record_ended(gone, it->first);
        }
        it = cache.erase(it);
    }
}

void Engine::Impl::record_ended(const std::vector<JobView>& ended) {
    const std::size_t limit = settings.max_refits_per_round;  // 0: no limit
    std::size_t budget = limit > ended_refits ? limit - ended_refits : 0;
    bool erased = false;
    for (const JobView& job : ended) {
        if (job.group.empty() || job.points.size == 0) continue;
        const std::size_t g = group_index_of(job);
        GroupStats& gs = groups[g];
        TrialCache& c = cache_of(job);
        c.group = g;
        // Out of budget, an entry kept from the last round records what that round saw (as
        // retire_departed would have), a new one nothing.
        const std::size_t before = budget;
        sync(job, c, budget);
        if (limit > 0 && budget < before) ++ended_refits;
        // Its last points do not check the forecast that came due with them (the forecast audit
        // stays what the rounds saw): measured, auditing them widened the intervals of sweeps
        // whose curves drop at the end of their runs, het 1,327 -> 1,718 GPU-hours for one sweep
        // more at its best, philly 88,611 -> 89,780 with one fewer (doc/results.md).
        rungs_of(job, c);
        if (c.predictor.size() > 0 && !std::isnan(c.best)) gs.record_ended(c, job.key);
        cache.erase(job.key);
        erased = true;
    }
    // Last round's pointers into the cache may dangle now: the next round indexes afresh.
    if (erased) keys.clear();
}

RoundCounts Engine::Impl::sync_fit_cache(const std::vector<JobView>& jobs, bool same_keys) {
    const std::size_t n = jobs.size();
    reset_groups(n, same_keys);
    RoundCounts counts;
    const std::size_t limit = settings.max_refits_per_round;
    std::size_t budget = limit > ended_refits ? limit - ended_refits : 0;
    if (limit > 0 && budget == 0) budget = 1;  // the live trials are never starved by ended ones
    ended_refits = 0;
    for (std::size_t j = 0; j < n; ++j) {
        const JobView& job = jobs[j];
        if (job.group.empty()) {
            trial_of[j] = nullptr;
            continue;
        }
        ++counts.trials;
        TrialCache& c = cache_entry(job, j);
        const bool is_new = c.round == 0;
        c.round = round;
        const bool changed = sync(job, c, budget);
        if (changed) {
            ++counts.fitted;
            ++c.version;
        }
        if (!c.error.empty()) ++counts.invalid;
        derive(job, c);
        rungs_of(job, c);  // kept for the sweep's statistics when the trial leaves
        trial_of[j] = &c;
        join_group(job, j, c, changed, is_new);
    }
    end_sync(counts.trials);
    return counts;
}

void Engine::Impl::reset_groups(std::size_t n, bool same_keys) {
    if (!same_keys) trial_of.assign(n, nullptr);
    group_of.assign(n, kNone);
    // Groups persist; a sweep that ended leaves a stale entry, so start afresh once stale ones
    // dominate (rare: their number is bounded by the sweeps seen since the last reset).
    if (groups.size() > 2 * active_groups + 1024) {
        group_index.clear();
        groups.clear();
        for (auto& entry : cache) entry.second.group = kNone;
    }
    active_groups = 0;
}

// The job's cache entry, found or made by key; a trial whose direction changed starts afresh.
Engine::Impl::TrialCache& Engine::Impl::cache_of(const JobView& job) {
    auto it = cache.find(job.key);
    if (it == cache.end() || it->second.predictor.direction() != job.direction) {
        if (it != cache.end()) cache.erase(it);
        it = cache.emplace(job.key, TrialCache(job.direction, settings)).first;
    }
    return it->second;
}

// The job's cache entry: last round's (same keys in the same order need no hashing), else found
// or made by key; a trial whose direction changed starts afresh.
Engine::Impl::TrialCache& Engine::Impl::cache_entry(const JobView& job, std::size_t j) {
    TrialCache* cached = trial_of[j];
    if (cached == nullptr || cached->predictor.direction() != job.direction) cached = &cache_of(job);
    return *cached;
}

std::size_t Engine::Impl::group_index_of(const JobView& job) {
    auto [g, inserted] = group_index.try_emplace(job.group, groups.size());
    if (inserted) {
        groups.emplace_back();
        groups.back().direction = job.direction;
    }
    GroupStats& gs = groups[g->second];
    if (gs.application.empty()) gs.application = engine_detail::application_key(job);
    return g->second;
}

void Engine::Impl::join_group(const JobView& job, std::size_t j, TrialCache& c, bool changed, bool is_new) {
    const std::size_t g = group_index_of(job);
    GroupStats& gs = groups[g];
    if (gs.seen_round != round) {
        gs.start_round(round, job.direction);
        ++active_groups;
    }
    gs.siblings.find_jumps = settings.sibling_jumps || settings.behind_track_margin > 0.0;
    group_of[j] = g;
    c.group = g;
    gs.members.push_back(j);
    if (changed) {
        audit(job, c, gs);
        gs.siblings.offer(job.key, c.predictor, job.max_steps, false);
    }
    gs.changed = gs.changed || changed || is_new;
    gs.signature += TrialKeyHash()(job.key) * 0x9E3779B97F4A7C15ULL + 1;
    ++gs.trials;
    if (c.predictor.size() == 0) return;
    gs.observe(c, job.key);
}

void Engine::Impl::end_sync(std::size_t trials) {
    // the rung values of a group hold until a member's curve changes or the members change
    for (GroupStats& gs : groups) {
        if (gs.seen_round == round && (gs.changed || gs.signature != gs.last_signature)) {
            gs.rung_values.clear();
        }
    }
    // forget cache entries of jobs listed but no longer exploratory (those that left went in retire_departed)
    if (cache.size() != trials) {
        for (auto it = cache.begin(); it != cache.end();) {
            it = it->second.round == round ? std::next(it) : cache.erase(it);
        }
    }
}

// Brings a trial's cache up to its reported points. Returns true if it refitted.
bool Engine::Impl::sync(const JobView& job, TrialCache& c, std::size_t& budget) {
    const PointSpan& pts = job.points;
    if (pts.size == c.raw_count && (pts.size == 0 || same_point(pts[pts.size - 1], c.raw_last))) {
        return false;  // unchanged: the common case, O(1)
    }
    // Out of fitting budget this round (a controller restart with thousands of curves): keep
    // the old fit; the trial still looks changed next round and is fitted then.
    if (settings.max_refits_per_round > 0 && budget == 0) return false;
    if (budget > 0) --budget;
    auto curve = clean_curve(pts);
    c.raw_count = pts.size;
    if (pts.size > 0) c.raw_last = pts[pts.size - 1];
    c.derived_valid = false;
    if (!curve) {
        if (c.error != curve.error().message) {
            log(LogLevel::info, "trial " + to_string(job.key) + ": " + curve.error().message);
        }
        c.error = curve.error().message;
        c.predictor.clear();
        c.lo = c.hi = c.best = c.first = kNaN;
        return false;
    }
    c.error.clear();
    c.diverged = curve->diverged;
    c.diverged_at = curve->diverged_at_step;
    if (!c.predictor.extend(*curve)) c.predictor.assign(*curve);
    const CurvePredictor& p = c.predictor;
    if (p.size() > 0) {
        c.lo = *std::min_element(p.metrics().begin(), p.metrics().end());
        c.hi = *std::max_element(p.metrics().begin(), p.metrics().end());
        c.best = p.best_metric();
        c.first = p.first_metric();
    } else {
        c.lo = c.hi = c.best = c.first = kNaN;
    }
    return true;
}

void Engine::Impl::derive(const JobView& job, TrialCache& c) {
    // The table is looked up only when the trial's type inputs changed (a round over thousands
    // of trials compares a few short strings each).
    if (!c.value_known || job.job_type != c.value_job_type || job.gpu_type != c.value_gpu_type ||
        job.measured_gpu_type != c.value_measured || job.gpus != c.value_gpus) {
        c.gpu_value = gpu_valuation(job.job_type, job.gpu_type, job.measured_gpu_type, job.gpus, throughputs);
        c.value_job_type = job.job_type;
        c.value_gpu_type = job.gpu_type;
        c.value_measured = job.measured_gpu_type;
        c.value_gpus = job.gpus;
        c.value_known = true;
    }
    const double ratio = c.gpu_value.ratio;
    if (c.derived_valid && ratio == c.speed_ratio && job.max_steps == c.max_steps) return;
    c.derived_valid = true;
    c.speed_ratio = ratio;
    c.max_steps = job.max_steps;
    c.speed = observed_speed(job.points, 8, settings.throughput_hint_factor, job.start_time);
    const CurvePredictor& p = c.predictor;
    c.gain = 0.0;
    c.final_metric = Prediction{};
    if (p.size() == 0) return;
    const double s0 = p.last_step();
    const double horizon = job.max_steps > 0.0 ? job.max_steps : 2.0 * std::max(s0, 1.0);
    c.final_metric = p.predict(std::max(horizon, s0));
    apply_sibling_prior(job, c);
    if ((settings.sibling_jumps || settings.behind_track_margin > 0.0) && job.max_steps > 0.0) {
        thin_curve(p.steps(), p.metrics(), kSiblingCurvePoints, thin_steps, thin_metrics);
        curve_jumps(thin_steps, thin_metrics, p.direction(), job.max_steps, jump_scratch);
        c.own_jumps = jump_scratch.size();
    }
    if (!p.fitted() || !(c.speed > 0.0) || (job.max_steps > 0.0 && s0 >= job.max_steps)) return;
    double s1 = s0 + c.speed * ratio * settings.utility_horizon_s;
    if (job.max_steps > 0.0) s1 = std::min(s1, job.max_steps);
    const double sign = p.direction() == Direction::maximize ? 1.0 : -1.0;
    const double g = sign * (p.predict_value(s1) - p.predict_value(s0));
    c.gain = std::isfinite(g) && g > 0.0 ? g : 0.0;
}

// Checks the trial's forecast that came due and makes the next one. Forecasts reach twice as far
// as the curve has got, so a sweep measures its predictor on its own curves long before any of
// them finishes.
void Engine::Impl::audit(const JobView& job, TrialCache& c, GroupStats& gs) {
    const CurvePredictor& p = c.predictor;
    if (p.size() == 0) return;
    if (!std::isnan(c.audit_step) && p.last_step() >= c.audit_step) {
        const double realized = metric_at(p.steps(), p.metrics(), c.audit_step);
        const double half = std::fabs(c.audit_bound - c.audit_value);
        if (std::isfinite(realized) && half > 0.0) {
            const double sign = job.direction == Direction::maximize ? 1.0 : -1.0;
            const double ratio = sign * (realized - c.audit_value) / half;
            if (gs.audit_ratios.size() < kAuditWindow) {
                gs.audit_ratios.push_back(ratio);
            } else {
                gs.audit_ratios[gs.audits % kAuditWindow] = ratio;
            }
            ++gs.audits;
            gs.widen = audit_widening(gs.audit_ratios, settings);
            gs.held = audits_held(gs.audit_ratios, settings.audited_min_checks, settings.interval_level);
            pool_audit(gs, ratio);
            // fell short of even the pessimistic bound: the curve promised what it did not do
            if (job.owner != kNoOwner && std::isfinite(c.audit_floor))
                owners[job.owner].add(sign * (realized - c.audit_floor) < 0.0);
        }
        c.audit_step = kNaN;
    }
    if (settings.calibration_min_audits == 0 || !std::isnan(c.audit_step) || !p.fitted() || c.diverged ||
        p.size() < settings.min_points_to_fit) {
        return;
    }
    double target = 2.0 * p.last_step();
    if (job.max_steps > 0.0) target = std::min(target, job.max_steps);
    if (!(target > 1.25 * p.last_step())) return;
    const Prediction f = p.predict(target);
    if (!f.extrapolated) return;
    c.audit_step = target;
    c.audit_value = f.value;
    c.audit_bound = job.direction == Direction::maximize ? f.upper : f.lower;
    c.audit_floor = job.direction == Direction::maximize ? f.lower : f.upper;
}

double Engine::Impl::owner_factor(std::uint32_t owner) const {
    if (owner == kNoOwner) return 1.0;
    auto it = owners.find(owner);
    return it == owners.end() ? 1.0 : it->second.factor(settings);
}

// The trial's milestones: its own (--explore-milestones), else derived from the settings and its
// max_steps (cached until max_steps changes).
const std::vector<double>& Engine::Impl::rungs_of(const JobView& job, TrialCache& c) const {
    if (!job.milestones.empty()) {
        if (c.rungs != job.milestones) c.rungs = job.milestones;
        c.rungs_for_max_steps = -1.0;
    } else if (c.rungs_for_max_steps != job.max_steps) {
        c.rungs = asha_rungs({}, job.max_steps, settings);
        c.rungs_for_max_steps = job.max_steps;
    }
    return c.rungs;
}

MilestoneStanding Engine::Impl::milestone_rank(const JobView& job, std::size_t j) {
    MilestoneStanding out;
    TrialCache& c = *trial_of[j];
    const CurvePredictor& p = c.predictor;
    if (p.size() == 0) return out;
    for (double r : rungs_of(job, c)) {
        if (p.last_step() >= r) out.reached = r;
    }
    if (std::isnan(out.reached)) return out;
    if (c.asha_version != c.version || c.asha_rung != out.reached) {
        c.asha_rung = out.reached;
        c.asha_value = metric_at(p.steps(), p.metrics(), out.reached);
        c.asha_version = c.version;
    }
    const auto& values = values_at(group_of[j], out.reached);
    out.rank = asha_rank_sorted(c.asha_value, values, job.direction, settings.asha_reduction);
    return out;
}

const std::vector<double>& Engine::Impl::values_at(std::size_t group, double rung) {
    GroupStats& g = groups[group];
    for (const auto& [r, values] : g.rung_values) {
        if (r == rung) return values;
    }
    g.rung_values.emplace_back(rung, std::vector<double>());
    std::vector<double>& values = g.rung_values.back().second;
    for (std::size_t j : g.members) {
        if (trial_of[j] == nullptr) continue;
        const CurvePredictor& p = trial_of[j]->predictor;
        if (p.size() == 0 || p.last_step() < rung) continue;
        const double v = metric_at(p.steps(), p.metrics(), rung);
        if (std::isfinite(v)) values.push_back(v);
    }
    for (const auto& [r, v] : g.ended_rung_values) {
        if (r == rung) values.push_back(v);
    }
    std::sort(values.begin(), values.end());
    return values;
}

}  // namespace explsched
