#include "core/sched/engine_settings.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace explsched {

const char* to_string(HopelessAction action) {
    switch (action) {
        case HopelessAction::terminate:
            return "terminate";
        case HopelessAction::requeue_hold:
            return "requeue_hold";
        case HopelessAction::none:
            return "none";
    }
    return "?";
}

namespace {

Error bad(const char* field, double value, const char* why) {
    std::ostringstream out;
    out << "engine settings: " << field << ": " << value << ": " << why;
    return make_error(out.str());
}

// Open or closed interval check with a message naming the field and the bounds.
Status in_range(const char* field, double value, double lo, double hi, bool open_lo = false,
                bool open_hi = false) {
    const bool ok =
        std::isfinite(value) && (open_lo ? value > lo : value >= lo) && (open_hi ? value < hi : value <= hi);
    if (ok) return {};
    std::ostringstream why;
    why << "not in " << (open_lo ? "(" : "[") << lo << ", " << hi << (open_hi ? ")" : "]");
    return bad(field, value, why.str().c_str());
}

}  // namespace

Status validate(const EngineSettings& s) {
    const double inf = 1e300;
    const Status checks[] = {
        in_range("interval_level", s.interval_level, 0.0, 1.0, true, true),
        in_range("min_points_to_fit", static_cast<double>(s.min_points_to_fit), 3, 1000),
        in_range("max_fit_points", static_cast<double>(s.max_fit_points), 8, 10000),
        in_range("refit_growth", s.refit_growth, 0.0, 10.0),
        in_range("max_refits_per_round", static_cast<double>(s.max_refits_per_round), 0, 1e9),
        in_range("fit_recency_power", s.fit_recency_power, 0.0, 8.0),
        in_range("backtest_split", s.backtest_split, 0.1, 0.95),
        in_range("agreement_shrinkage", s.agreement_shrinkage, 0.0, 100.0),
        in_range("interval_calibration", s.interval_calibration, 0.0, 100.0, true),
        in_range("fallback_calibration", s.fallback_calibration, 0.0, 100.0, true),
        in_range("sibling_prior_weight", s.sibling_prior_weight, 0.0, 1e6),
        in_range("sibling_shape_bandwidth", s.sibling_shape_bandwidth, 0.0, 100.0, true),
        in_range("sibling_level_bandwidth", s.sibling_level_bandwidth, 0.0, 100.0, true),
        in_range("sibling_calibration", s.sibling_calibration, 0.0, 100.0, true),
        in_range("utility_horizon_s", s.utility_horizon_s, 0.0, inf, true),
        in_range("dominated_weight", s.dominated_weight, 0.0, 1.0),
        in_range("price_lower_quantile", s.price_lower_quantile, 0.0, 1.0),
        in_range("price_upper_quantile", s.price_upper_quantile, s.price_lower_quantile, 1.0, true),
        in_range("price_smoothing", s.price_smoothing, 0.0, 1.0, true),
        in_range("price_min_ratio", s.price_min_ratio, 1.0, 1e12, true),
        in_range("preempt_margin", s.preempt_margin, 0.0, 100.0),
        in_range("preempt_rank_margin", s.preempt_rank_margin, 0.0, 100.0),
        in_range("throughput_hint_factor", s.throughput_hint_factor, 0.0, 1000.0),
        in_range("forecast_miss_allowance", s.forecast_miss_allowance, 0.0, 1.0),
        in_range("min_run_s", s.min_run_s, 0.0, inf),
        in_range("hopeless_probability", s.hopeless_probability, 0.0, 0.5),
        in_range("hopeless_min_points", static_cast<double>(s.hopeless_min_points), 1, 1e6),
        in_range("hopeless_min_progress", s.hopeless_min_progress, 0.0, 1.0),
        in_range("audited_min_progress", s.audited_min_progress, 0.0, 1.0),
        in_range("audited_min_checks", static_cast<double>(s.audited_min_checks), 1,
                 static_cast<double>(kMaxCalibrationAudits)),
        in_range("early_stop_progress", s.early_stop_progress, 0.0, 1.0),
        in_range("early_stop_probability", s.early_stop_probability, 0.0, 0.5),
        in_range("chance_worth_gpu_hours", s.chance_worth_gpu_hours, 0.0, 1e12),
        in_range("calibration_min_audits", static_cast<double>(s.calibration_min_audits), 0,
                 static_cast<double>(kMaxCalibrationAudits)),
        in_range("calibration_max_widen", s.calibration_max_widen, 1.0, 1000.0),
        in_range("milestone_stop_probability", s.milestone_stop_probability, 0.0, 1.0),
        in_range("min_expected_gain", s.min_expected_gain, 0.0, 1.0),
        in_range("near_tie_range", s.near_tie_range, 0.0, 1000.0),
        in_range("stale_best_fraction", s.stale_best_fraction, 0.0, 1.0),
        in_range("best_track_margin", s.best_track_margin, 0.0, 1.0),
        in_range("behind_track_margin", s.behind_track_margin, 0.0, 1.0),
        in_range("pause_probability", s.pause_probability, 0.0, 1.0),
        in_range("pause_min_progress", s.pause_min_progress, 0.0, 1.0),
        in_range("pause_idle_utility", s.pause_idle_utility, 0.0, 1.0),
        in_range("explore_first_progress", s.explore_first_progress, 0.0, 1.0),
        in_range("pause_max", static_cast<double>(s.pause_max), 0, 1000),
        in_range("asha_reduction", s.asha_reduction, 1.0, 1000.0, true),
        in_range("asha_min_step", s.asha_min_step, 0.0, inf),
        in_range("asha_rungs", static_cast<double>(s.asha_rungs), 1, 64),
        in_range("max_age_s", s.max_age_s, 0.0, inf, true),
        in_range("nonexploratory_value", s.nonexploratory_value, 0.0, 1.0),
        in_range("unknown_value", s.unknown_value, 0.0, 1.0),
    };
    for (const Status& check : checks) {
        if (!check) return check;
    }
    const double total = static_cast<double>(s.weight_value) + s.weight_age + s.weight_partition;
    if (total > 4.0e9) {
        return bad("weight_value + weight_age + weight_partition", total,
                   "exceeds Slurm's 32-bit priority range");
    }
    return {};
}

}  // namespace explsched
