#include "core/sched/engine.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "core/curves/curve_ensemble.hpp"
#include "core/sched/policy.hpp"
#include "core/sched/price.hpp"
#include "core/sched/priority.hpp"
#include "core/sched/utility.hpp"

namespace explsched {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool same_point(const CurvePoint& a, const CurvePoint& b) {
    return std::memcmp(&a, &b, sizeof(CurvePoint)) == 0;  // NaN-safe: compares the bits
}

bool better(Direction d, double a, double b) { return d == Direction::maximize ? a > b : a < b; }

// Per-trial state that survives between rounds: the fitted predictor and what was derived from
// it. Recomputed only when the trial's points or its speed/type/horizon inputs change.
struct TrialCache {
    explicit TrialCache(Direction d, const EngineSettings& s) : predictor(d, s) {}

    CurvePredictor predictor;
    std::size_t raw_count = 0;
    CurvePoint raw_last{};
    bool diverged = false;
    double diverged_at = kNaN;
    std::string error;  // the last rejected report's error ("" when fine)
    // derived
    bool derived_valid = false;
    double speed = kNaN;       // steps/s as measured
    double speed_ratio = 1.0;  // scaling to the GPU type it is valued on
    double max_steps = 0.0;
    double gain = 0.0;  // predicted improvement over the utility horizon, metric units
    Prediction final_metric;
    // observed summary, refreshed when the points change (group statistics read these every
    // round; scanning every curve each round would cost O(points))
    double lo = kNaN, hi = kNaN, best = kNaN, first = kNaN;
    // ASHA rungs derived from the settings and max_steps (jobs without their own milestones)
    std::vector<double> rungs;
    double rungs_for_max_steps = -1.0;
    std::uint64_t version = 0;  // bumped whenever the points change
    // the metric at the last ASHA rung reached, for `asha_version`
    double asha_rung = kNaN, asha_value = kNaN;
    std::uint64_t asha_version = ~std::uint64_t{0};
    std::uint64_t round = 0;
    std::size_t group = std::numeric_limits<std::size_t>::max();  // index in Impl::groups
    // Forecast audit: the prediction made for `audit_step` (twice the step it was made at) and
    // its optimistic bound, checked against the curve once it gets there.
    double audit_step = kNaN, audit_value = kNaN, audit_bound = kNaN;
};

constexpr std::size_t kAuditWindow = kMaxCalibrationAudits;

// A group (sweep) persists across rounds so that what only changes when a member's curve
// changes (the ASHA rung values) is not recomputed every round.
struct GroupStats {
    Direction direction = Direction::maximize;
    double lo = kInf, hi = -kInf;       // observed metric range
    double best = kNaN, second = kNaN;  // best and second-best observed metric
    TrialKey best_key;
    double furthest_step = 0.0;  // the last step of its most advanced trial
    std::size_t trials = 0;
    std::uint64_t seen_round = 0;
    bool changed = false;                             // a member's curve changed this round
    std::uint64_t signature = 0, last_signature = 0;  // of the member set
    std::vector<std::size_t> members;                 // this round's jobs
    // per rung reached: the sorted metrics of the members that reached it
    std::vector<std::pair<double, std::vector<double>>> rung_values;
    // What the sweep's trials that have left the queue (finished, stopped, held) achieved: a
    // sweep's best often finishes first, and later siblings must still be measured against it.
    double ended_lo = kInf, ended_hi = -kInf, ended_best = kNaN, ended_furthest = 0.0;
    TrialKey ended_best_key;
    // ... and their metric at each milestone they reached: (milestone step, metric)
    std::vector<std::pair<double, double>> ended_rung_values;
    // Forecast audits of its members (kept when they end): for every forecast that came due,
    // how far the curve beat it in units of the interval's optimistic half-width (1: exactly at
    // the bound). A sweep whose curves keep beating their bounds (plateaus that end, learning
    // rate drops) gets its intervals widened until they would have held (`widen`).
    // The newest kAuditWindow of them (a ring): the widening follows what the sweep's curves do
    // now, and a sweep of thousands of trials costs a bounded selection per checked forecast.
    std::vector<double> audit_ratios;
    std::size_t audits = 0;  // checked forecasts ever (the ring's write position)
    double widen = 1.0;

    void start_round(std::uint64_t round, Direction d) {
        direction = d;
        lo = ended_lo;
        hi = ended_hi;
        best = ended_best;
        second = kNaN;
        best_key = ended_best_key;
        furthest_step = ended_furthest;
        trials = 0;
        seen_round = round;
        changed = false;
        last_signature = signature;
        signature = 0;
        members.clear();
    }
};

// The interval widening a sweep's forecast audits call for: the factor by which the optimistic
// half-width must grow for the audited forecasts to have been beaten no more often than the
// interval level says ((1 - level) / 2), never below 1; 1 until calibration_min_audits are in.
double audit_widening(std::vector<double> ratios, const EngineSettings& s) {
    if (s.calibration_min_audits == 0 || ratios.size() < s.calibration_min_audits) return 1.0;
    const double q = (1.0 + s.interval_level) / 2.0;
    const auto k = std::min(ratios.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ratios.size())));
    std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(k), ratios.end());
    return std::min(std::max(1.0, ratios[k]), s.calibration_max_widen);
}

Prediction widen_interval(Prediction p, double widen) {
    if (widen > 1.0 && std::isfinite(p.value)) {
        p.lower = p.value - widen * (p.value - p.lower);
        p.upper = p.value + widen * (p.upper - p.value);
        p.widened = widen;
    }
    return p;
}

}  // namespace

struct Engine::Impl {
    Impl(const EngineSettings& s, ThroughputTable t, Logger* l)
        : settings(s),
          throughputs(std::move(t)),
          logger(l),
          bounds(s.price_lower_quantile, s.price_upper_quantile, s.price_smoothing, s.price_min_ratio),
          z(interval_z(s.interval_level)) {}

    EngineSettings settings;
    ThroughputTable throughputs;
    Logger* logger;
    PriceBoundsEstimator bounds;
    double z;
    std::uint64_t round = 0;
    std::unordered_map<TrialKey, TrialCache, TrialKeyHash> cache;
    std::unordered_map<TrialKey, std::size_t, TrialKeyHash> index;  // key -> position in last
    std::vector<Assessment> last;
    RoundSummary summary;
    // scratch reused across rounds
    std::unordered_map<std::string, std::size_t> group_index;
    std::vector<GroupStats> groups;
    std::size_t active_groups = 0;
    std::vector<TrialKey> keys;         // last round's jobs, in order
    std::vector<TrialCache*> trial_of;  // per job: its cache entry (null if none)
    std::vector<std::size_t> group_of;  // per job: its group (npos if none)
    std::vector<double> scratch;

    void log(LogLevel level, const std::string& message) {
        if (logger != nullptr && logger->enabled(level)) logger->write(level, message);
    }
    bool sync(const JobView& job, TrialCache& c, std::size_t& budget);
    const std::vector<double>& rungs_of(const JobView& job, TrialCache& c) const;
    // The trial's rank at the highest milestone it reached; `reached` NaN when none.
    struct MilestoneRank {
        double reached = kNaN;
        AshaRank rank;
    };
    MilestoneRank milestone_rank(const JobView& job, std::size_t j);
    void derive(const JobView& job, TrialCache& c);
    void audit(const JobView& job, TrialCache& c, GroupStats& gs) const;
    const std::vector<double>& values_at(std::size_t group, double rung);
};

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
    double ratio = 1.0;
    if (!job.job_type.empty() && !job.measured_gpu_type.empty()) {
        ratio = throughputs.speed_ratio(job.job_type, job.measured_gpu_type, job.gpu_type,
                                        static_cast<int>(std::max<std::uint32_t>(job.gpus, 1)));
    }
    if (c.derived_valid && ratio == c.speed_ratio && job.max_steps == c.max_steps) return;
    c.derived_valid = true;
    c.speed_ratio = ratio;
    c.max_steps = job.max_steps;
    c.speed = observed_speed(job.points);
    const CurvePredictor& p = c.predictor;
    c.gain = 0.0;
    c.final_metric = Prediction{};
    if (p.size() == 0) return;
    const double s0 = p.last_step();
    const double horizon = job.max_steps > 0.0 ? job.max_steps : 2.0 * std::max(s0, 1.0);
    c.final_metric = p.predict(std::max(horizon, s0));
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
void Engine::Impl::audit(const JobView& job, TrialCache& c, GroupStats& gs) const {
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

Engine::Impl::MilestoneRank Engine::Impl::milestone_rank(const JobView& job, std::size_t j) {
    MilestoneRank out;
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

Result<Engine> Engine::create(const EngineSettings& settings, ThroughputTable throughputs, Logger* logger) {
    if (auto s = validate(settings); !s) return s.error();
    return Engine(std::make_unique<Impl>(settings, std::move(throughputs), logger));
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;
Engine::~Engine() = default;

const RoundSummary& Engine::last_round() const { return impl_->summary; }
const EngineSettings& Engine::settings() const { return impl_->settings; }
std::size_t Engine::cached_trials() const { return impl_->cache.size(); }

const Assessment* Engine::find(const TrialKey& key) const {
    const auto it = impl_->index.find(key);
    return it == impl_->index.end() ? nullptr : &impl_->last[it->second];
}

PreemptVerdict Engine::can_preempt(const Assessment& preemptor, const Assessment& preemptee) const {
    return preempt_verdict(preemptor, preemptee, impl_->settings);
}

PreemptVerdict Engine::can_preempt(const TrialKey& preemptor, const TrialKey& preemptee) const {
    const Assessment* a = find(preemptor);
    const Assessment* b = find(preemptee);
    if (a == nullptr) return {false, "job " + to_string(preemptor) + " was not assessed"};
    if (b == nullptr) return {false, "job " + to_string(preemptee) + " was not assessed"};
    return can_preempt(*a, *b);
}

Status Engine::evaluate(const std::vector<JobView>& jobs, const ClusterView& cluster,
                        std::vector<Assessment>& out) {
    Impl& m = *impl_;
    const EngineSettings& s = m.settings;
    const std::size_t n = jobs.size();

    // --- whole-round input checks --------------------------------------------------------------
    // Rounds usually list the same jobs in the same order: then last round's index and cache
    // pointers still hold, and the round needs no hashing at all.
    bool same_keys = n == m.keys.size();
    for (std::size_t j = 0; same_keys && j < n; ++j) same_keys = jobs[j].key == m.keys[j];
    if (!same_keys) {
        m.index.clear();
        m.index.reserve(n);
        m.keys.resize(n);
        for (std::size_t j = 0; j < n; ++j) {
            m.keys[j] = jobs[j].key;
            if (!m.index.emplace(jobs[j].key, j).second) {
                m.index.clear();
                m.keys.clear();
                m.last.clear();
                return make_error("engine round: job " + to_string(jobs[j].key) + " listed twice");
            }
        }
    }
    std::uint64_t busy = 0;
    for (std::size_t j = 0; j < n; ++j) {
        if (jobs[j].state == JobState::running) busy += jobs[j].gpus;
    }
    if (cluster.busy_gpus >= 0) busy = static_cast<std::uint64_t>(cluster.busy_gpus);
    if (cluster.total_gpus == 0 && busy > 0) {
        m.index.clear();
        m.last.clear();
        return make_error("engine round: total_gpus is 0 but " + std::to_string(busy) + " GPUs are busy");
    }
    const double total = std::max<double>(cluster.total_gpus, 1.0);
    const double load = std::min(1.0, static_cast<double>(busy) / total);
    ++m.round;

    // --- trials that left the queue (finished, stopped, held) ------------------------------------
    // Forget their fits but keep what they achieved in their sweep's statistics, before this
    // round's statistics are built: a sweep's best often finishes first, and later siblings must
    // still be measured against it. With the same keys as last round, nobody left.
    if (!same_keys) {
        for (auto it = m.cache.begin(); it != m.cache.end();) {
            if (m.index.count(it->first) != 0) {
                ++it;
                continue;
            }
            const TrialCache& gone = it->second;
            if (gone.group < m.groups.size() && gone.predictor.size() > 0 && !std::isnan(gone.best)) {
                GroupStats& gs = m.groups[gone.group];
                gs.ended_lo = std::min(gs.ended_lo, gone.lo);
                gs.ended_hi = std::max(gs.ended_hi, gone.hi);
                gs.ended_furthest = std::max(gs.ended_furthest, gone.predictor.last_step());
                if (std::isnan(gs.ended_best) || better(gs.direction, gone.best, gs.ended_best)) {
                    gs.ended_best = gone.best;
                    gs.ended_best_key = it->first;
                }
                const CurvePredictor& p = gone.predictor;
                for (double r : gone.rungs) {
                    if (p.last_step() < r) break;
                    const double v = metric_at(p.steps(), p.metrics(), r);
                    if (std::isfinite(v)) gs.ended_rung_values.emplace_back(r, v);
                }
            }
            it = m.cache.erase(it);
        }
    }

    // --- per-trial caches and group statistics -----------------------------------------------
    if (!same_keys) m.trial_of.assign(n, nullptr);
    m.group_of.assign(n, std::numeric_limits<std::size_t>::max());
    // Groups persist; a sweep that ended leaves a stale entry, so start afresh once stale ones
    // dominate (rare: their number is bounded by the sweeps seen since the last reset).
    if (m.groups.size() > 2 * m.active_groups + 1024) {
        m.group_index.clear();
        m.groups.clear();
        for (auto& entry : m.cache) entry.second.group = std::numeric_limits<std::size_t>::max();
    }
    m.active_groups = 0;
    std::size_t fitted = 0, invalid = 0, trials = 0;
    std::size_t budget = s.max_refits_per_round;
    for (std::size_t j = 0; j < n; ++j) {
        const JobView& job = jobs[j];
        if (job.group.empty()) {
            m.trial_of[j] = nullptr;
            continue;
        }
        ++trials;
        TrialCache* cached = m.trial_of[j];  // last round's entry for this key, if any
        if (cached == nullptr || cached->predictor.direction() != job.direction) {
            auto it = m.cache.find(job.key);
            if (it == m.cache.end() || it->second.predictor.direction() != job.direction) {
                if (it != m.cache.end()) m.cache.erase(it);
                it = m.cache.emplace(job.key, TrialCache(job.direction, s)).first;
            }
            cached = &it->second;
        }
        TrialCache& c = *cached;
        const bool is_new = c.round == 0;
        c.round = m.round;
        const bool changed = m.sync(job, c, budget);
        if (changed) {
            ++fitted;
            ++c.version;
        }
        if (!c.error.empty()) ++invalid;
        m.derive(job, c);
        m.rungs_of(job, c);  // kept for the sweep's statistics when the trial leaves
        m.trial_of[j] = &c;

        auto [g, inserted] = m.group_index.try_emplace(job.group, m.groups.size());
        if (inserted) m.groups.emplace_back();
        GroupStats& gs = m.groups[g->second];
        if (gs.seen_round != m.round) {
            gs.start_round(m.round, job.direction);
            ++m.active_groups;
        }
        m.group_of[j] = g->second;
        c.group = g->second;
        gs.members.push_back(j);
        if (changed) m.audit(job, c, gs);
        gs.changed = gs.changed || changed || is_new;
        gs.signature += TrialKeyHash()(job.key) * 0x9E3779B97F4A7C15ULL + 1;
        ++gs.trials;
        if (c.predictor.size() == 0) continue;
        gs.lo = std::min(gs.lo, c.lo);
        gs.hi = std::max(gs.hi, c.hi);
        gs.furthest_step = std::max(gs.furthest_step, c.predictor.last_step());
        const double best = c.best;
        if (std::isnan(gs.best) || better(gs.direction, best, gs.best)) {
            gs.second = gs.best;
            gs.best = best;
            gs.best_key = job.key;
        } else if (std::isnan(gs.second) || better(gs.direction, best, gs.second)) {
            gs.second = best;
        }
    }
    // the rung values of a group hold until a member's curve changes or the members change
    for (GroupStats& gs : m.groups) {
        if (gs.seen_round == m.round && (gs.changed || gs.signature != gs.last_signature)) {
            gs.rung_values.clear();
        }
    }
    // forget cache entries of jobs listed but no longer exploratory (left ones went above)
    if (m.cache.size() != trials) {
        for (auto it = m.cache.begin(); it != m.cache.end();) {
            it = it->second.round == m.round ? std::next(it) : m.cache.erase(it);
        }
    }

    // --- utilities and the price ------------------------------------------------------------------
    out.assign(n, Assessment{});
    m.scratch.clear();
    for (std::size_t j = 0; j < n; ++j) {
        const TrialCache* c = m.trial_of[j];
        Assessment& a = out[j];
        a.key = jobs[j].key;
        a.exploratory = !jobs[j].group.empty();
        if (c == nullptr || !c->predictor.fitted() || !c->error.empty()) continue;
        const GroupStats& gs = m.groups[m.group_of[j]];
        const double best_other = gs.best_key == jobs[j].key ? gs.second : gs.best;
        const Prediction final_metric = widen_interval(c->final_metric, gs.widen);
        a.prediction = final_metric;
        const double p_win = win_probability_heavy(final_metric, jobs[j].direction, best_other, s.interval_level);
        const double own = std::fabs(c->best - c->first);
        const double scale = gs.hi > gs.lo ? gs.hi - gs.lo : std::max(own, 1e-12);
        UtilityInputs in;
        in.gain = c->gain;
        in.group_scale = scale;
        in.win_probability = p_win;
        in.dominated_weight = s.dominated_weight;
        in.gpus = std::max<double>(jobs[j].gpus, 1.0);
        in.horizon_s = s.utility_horizon_s;
        a.utility = utility_per_gpu_second(in);
        // hopeless: enough points and progress, a real extrapolation, and not even the
        // optimistic side of the interval reaches the best another trial of the group has
        const double run_length = jobs[j].max_steps > 0.0 ? jobs[j].max_steps : gs.furthest_step;
        const bool far_enough = c->predictor.last_step() >= s.hopeless_min_progress * run_length;
        if (c->predictor.size() >= s.hopeless_min_points && far_enough && c->final_metric.extrapolated &&
            std::isfinite(best_other) && p_win < s.hopeless_probability) {
            a.state = TrialState::hopeless;
            a.reason.code = ReasonCode::hopeless;
            a.reason.a = final_metric.value;
            a.reason.b = final_metric.lower;
            a.reason.c = final_metric.upper;
            a.reason.d = best_other;
            a.reason.e = p_win;
            continue;
        }
        // expected to add (almost) nothing to its sweep's best
        const bool done = jobs[j].max_steps > 0.0 && c->predictor.last_step() >= jobs[j].max_steps;
        const bool leader = gs.best_key == jobs[j].key;
        if (s.min_expected_gain > 0.0 && !leader && !done && far_enough && c->final_metric.extrapolated &&
            c->predictor.size() >= s.hopeless_min_points && std::isfinite(best_other)) {
            const double gain = expected_improvement_heavy(final_metric, jobs[j].direction, best_other, s.interval_level) / scale;
            if (gain < s.min_expected_gain) {
                a.state = TrialState::hopeless;
                a.reason.code = ReasonCode::negligible_gain;
                a.reason.a = gain;
                a.reason.b = s.min_expected_gain;
                a.reason.c = c->final_metric.value;
                a.reason.d = best_other;
                continue;
            }
        }
        // behind at a milestone, and the extrapolation agrees it is unlikely to win
        if (s.milestone_stop_probability > 0.0 && !done && far_enough && std::isfinite(best_other) &&
            p_win < s.milestone_stop_probability) {
            const Impl::MilestoneRank mr = m.milestone_rank(jobs[j], j);
            if (!std::isnan(mr.reached) && !mr.rank.promoted) {
                a.state = TrialState::hopeless;
                a.reason.code = ReasonCode::behind_at_milestone;
                a.reason.a = mr.reached;
                a.reason.b = static_cast<double>(mr.rank.rank);
                a.reason.c = static_cast<double>(mr.rank.of);
                a.reason.d = s.asha_reduction;
                a.reason.e = p_win;
                continue;
            }
        }
        a.state = TrialState::promising;
        m.scratch.push_back(a.utility);
    }
    m.bounds.observe(m.scratch);
    const bool priced = m.bounds.has_estimate();
    const PriceFunction price = m.bounds.price();
    const double ratio = priced ? price.upper() / price.lower() : s.price_min_ratio;
    const double price_now = priced ? price(load) : 0.0;

    // --- decisions and priorities -------------------------------------------------------------
    std::array<double, 33> price_by_gpus;
    price_by_gpus.fill(kNaN);
    for (std::size_t j = 0; j < n; ++j) {
        const JobView& job = jobs[j];
        Assessment& a = out[j];
        const TrialCache* c = m.trial_of[j];
        const double load_after =
            job.state == JobState::pending ? std::min(1.0, load + job.gpus / total) : load;
        if (!priced) {
            a.price = 0.0;
        } else if (job.state == JobState::running) {
            a.price = price_now;
        } else if (job.gpus < price_by_gpus.size()) {
            double& memo = price_by_gpus[job.gpus];  // most jobs ask for a handful of GPUs
            if (std::isnan(memo)) memo = price(load_after);
            a.price = memo;
        } else {
            a.price = price(load_after);
        }
        const double age = age_factor(cluster.now - job.submit_time, s.max_age_s);
        const double running_s =
            job.state == JobState::running && job.start_time > 0.0 ? cluster.now - job.start_time : kInf;
        const HopelessAction action = job.has_hopeless_action ? job.hopeless_action : s.hopeless_action;
        double value = s.unknown_value;
        if (c != nullptr && std::isnan(a.prediction.value)) a.prediction = c->final_metric;

        if (c == nullptr) {
            a.reason.code = ReasonCode::nonexploratory;
            a.decision = job.state == JobState::pending ? Decision::run : Decision::keep;
            value = s.nonexploratory_value;
        } else if (!c->error.empty()) {
            a.reason.code = ReasonCode::invalid_report;
            a.error = c->error;
            a.decision = job.state == JobState::pending ? Decision::run : Decision::keep;
        } else if (c->diverged) {
            a.state = TrialState::hopeless;
            a.reason = Reason{};
            a.reason.code = ReasonCode::diverged;
            a.reason.a = c->diverged_at;
            a.decision = hopeless_decision(action, job.state);
            value = 0.0;
        } else if (a.state == TrialState::hopeless) {
            a.decision = hopeless_decision(action, job.state);
            value = 0.0;
        } else if (job.max_steps > 0.0 && c->predictor.size() > 0 &&
                   c->predictor.last_step() >= job.max_steps) {
            a.reason.code = ReasonCode::finished;
            a.reason.a = job.max_steps;
            a.decision = job.state == JobState::pending ? Decision::run : Decision::keep;
        } else if (a.state == TrialState::promising && c->speed > 0.0) {
            decide_by_price(job.state, a.utility, a.price, load_after, running_s, s, a);
            value = value_factor(a.utility, a.price, ratio);
        } else {
            // No usable prediction (too few points, or no speed yet): successive halving on
            // the group's milestones decides, so a sweep still prunes before curves are long.
            a.state = TrialState::unknown;
            const Impl::MilestoneRank mr = m.milestone_rank(job, j);
            const double reached = mr.reached;
            if (std::isnan(reached)) {
                a.reason.code = ReasonCode::too_few_points;
                a.reason.a = static_cast<double>(m.trial_of[j]->predictor.size());
                a.reason.b = static_cast<double>(s.min_points_to_fit);
                a.decision = job.state == JobState::pending ? Decision::run : Decision::keep;
            } else {
                const AshaRank& r = mr.rank;
                a.reason.code = r.promoted ? ReasonCode::asha_promoted : ReasonCode::asha_behind;
                a.reason.a = reached;
                a.reason.b = static_cast<double>(r.rank);
                a.reason.c = static_cast<double>(r.of);
                a.reason.d = s.asha_reduction;
                if (r.promoted) {
                    a.decision = job.state == JobState::pending ? Decision::run : Decision::keep;
                    value = 0.5 * (1.0 + s.unknown_value);
                } else if (s.milestone_stop_unpredicted &&
                           !(job.max_steps > 0.0 && m.trial_of[j]->predictor.last_step() >= job.max_steps)) {
                    // Too short to predict and behind its sweep at a milestone: stopped, as
                    // ASHA stops it (the ranking at equal steps is the only evidence yet).
                    a.state = TrialState::hopeless;
                    a.reason.code = ReasonCode::behind_at_milestone;
                    a.decision = hopeless_decision(action, job.state);
                    value = 0.0;
                } else {
                    value = 0.5 * s.unknown_value;
                    if (job.state == JobState::pending) {
                        a.decision = Decision::wait;
                    } else if (running_s < s.min_run_s) {
                        a.decision = Decision::keep;
                        a.reason = Reason{};
                        a.reason.code = ReasonCode::in_grace;
                        a.reason.a = running_s;
                        a.reason.b = s.min_run_s;
                    } else {
                        a.decision = Decision::preemptable;
                    }
                }
            }
        }
        if (job.state == JobState::pending && a.state != TrialState::hopeless) {
            value = starvation_floor(value, age);
        }
        a.priority = compose_priority(value, age, job.partition_factor, job.nice, s);
    }

    m.last = out;
    m.summary = RoundSummary{};
    m.summary.now = cluster.now;
    m.summary.utilisation = load;
    m.summary.price_lower = priced ? price.lower() : 0.0;
    m.summary.price_upper = priced ? price.upper() : 0.0;
    m.summary.price_now = price_now;
    m.summary.trials = trials;
    m.summary.fitted = fitted;
    m.summary.invalid = invalid;
    return {};
}

}  // namespace explsched
