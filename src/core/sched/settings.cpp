// Over 400 lines: the settings table (data, one row per key) and its typed setters are one concept.
#include "core/sched/settings.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/base/config_parse.hpp"
#include "core/base/strings.hpp"

namespace explsched {

std::string_view hopeless_option_text(HopelessAction action) {
    switch (action) {
        case HopelessAction::requeue_hold:
            return "requeue";
        case HopelessAction::terminate:
            return "cancel";
        case HopelessAction::none:
            return "none";
    }
    return "?";
}

std::string_view to_string(KernelSchedMode mode) {
    switch (mode) {
        case KernelSchedMode::off:
            return "off";
        case KernelSchedMode::observe:
            return "observe";
        case KernelSchedMode::enforce:
            return "enforce";
    }
    return "?";
}

Result<HopelessAction> parse_on_hopeless(std::string_view text) {
    if (text == "requeue") return HopelessAction::requeue_hold;
    if (text == "cancel") return HopelessAction::terminate;
    if (text == "none") return HopelessAction::none;
    return make_error("'" + std::string(text) + "' is not one of requeue, cancel, none");
}

Result<KernelSchedMode> parse_kernel_sched_mode(std::string_view text) {
    if (text == "off") return KernelSchedMode::off;
    if (text == "observe") return KernelSchedMode::observe;
    if (text == "enforce") return KernelSchedMode::enforce;
    return make_error("'" + std::string(text) + "' is not one of off, observe, enforce");
}

namespace {

// --- one setter per field type, instantiated per row ------------------------------------------

// A field of Settings, directly (&Settings::x) or inside the engine's settings
// (&EngineSettings::x): setters and getters reach both through field().
template <typename T>
struct member_type;
template <typename T>
struct member_type<T Settings::*> {
    using type = T;
};
template <typename T>
struct member_type<T EngineSettings::*> {
    using type = T;
};
template <typename T>
struct member_type<T FitSettings::*> {
    using type = T;
};

template <typename T>
T& field(Settings& s, T Settings::*member) {
    return s.*member;
}
template <typename T>
T& field(Settings& s, T EngineSettings::*member) {
    return s.engine.*member;
}
template <typename T>
const T& field(const Settings& s, T Settings::*member) {
    return s.*member;
}
template <typename T>
const T& field(const Settings& s, T EngineSettings::*member) {
    return s.engine.*member;
}
// The fit's tunables, which EngineSettings inherits.
template <typename T>
T& field(Settings& s, T FitSettings::*member) {
    return s.engine.*member;
}
template <typename T>
const T& field(const Settings& s, T FitSettings::*member) {
    return s.engine.*member;
}

template <auto Member, uint64_t Min, uint64_t Max>
Status set_uint(Settings& s, std::string_view v) {
    using T = typename member_type<decltype(Member)>::type;
    auto n = parse_uint64(v);
    if (!n) return make_error("'" + std::string(v) + "' is not a non-negative integer");
    if (*n < Min || *n > Max)
        return make_error(std::to_string(*n) + " is out of range [" + std::to_string(Min) + ", " +
                          std::to_string(Max) + "]");
    field(s, Member) = static_cast<T>(*n);
    return {};
}

template <auto Member, uint64_t Min, uint64_t Max>
Status set_duration(Settings& s, std::string_view v) {
    using T = typename member_type<decltype(Member)>::type;
    auto n = parse_duration_value(v);
    if (!n) return n.error();
    if (*n < Min || *n > Max)
        return make_error(std::to_string(*n) + " seconds is out of range [" + std::to_string(Min) + ", " +
                          std::to_string(Max) + "]");
    field(s, Member) = static_cast<T>(*n);
    return {};
}

// Bounds as integers scaled by 1e6, since doubles cannot be template arguments in C++17.
template <auto Member, int64_t MinMicro, int64_t MaxMicro>
Status set_double(Settings& s, std::string_view v) {
    auto d = parse_finite_double(v);
    if (!d) return make_error("'" + std::string(v) + "' is not a finite number");
    const double lo = static_cast<double>(MinMicro) / 1e6;
    const double hi = static_cast<double>(MaxMicro) / 1e6;
    if (*d < lo || *d > hi) {
        std::ostringstream msg;
        msg << *d << " is out of range [" << lo << ", " << hi << "]";
        return make_error(msg.str());
    }
    field(s, Member) = *d;
    return {};
}

template <auto Member>
Status set_bool(Settings& s, std::string_view v) {
    auto b = parse_bool_value(v);
    if (!b) return b.error();
    field(s, Member) = *b;
    return {};
}

template <auto Member, bool AllowEmpty = false>
Status set_path(Settings& s, std::string_view v) {
    if (AllowEmpty && v.empty()) {
        field(s, Member) = std::string();
        return {};
    }
    if (v.empty() || v.front() != '/') return make_error("'" + std::string(v) + "' is not an absolute path");
    field(s, Member) = std::string(v);
    return {};
}

Status set_host(Settings& s, std::string_view v) {
    if (v.empty() || v.size() > 255) return make_error("'" + std::string(v) + "' is not a host name");
    for (char c : v) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '.' || c == '-' || c == ':';
        if (!ok) return make_error("'" + std::string(v) + "' is not a host name or address");
    }
    s.report_host = std::string(v);
    return {};
}

// A POSIX portable user name (letters, digits, '.', '_', '-'; not starting with '-').
Status set_user_name(Settings& s, std::string_view v) {
    if (v.empty() || v.size() > 32 || v.front() == '-')
        return make_error("'" + std::string(v) + "' is not a user name");
    for (char c : v) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '.' || c == '_' || c == '-';
        if (!ok) return make_error("'" + std::string(v) + "' is not a user name");
    }
    s.kerneld_user = std::string(v);
    return {};
}

Status set_hopeless(Settings& s, std::string_view v) {
    auto a = parse_on_hopeless(v);
    if (!a) return a.error();
    s.engine.hopeless_action = *a;
    return {};
}

Status set_kernel_sched(Settings& s, std::string_view v) {
    auto m = parse_kernel_sched_mode(v);
    if (!m) return m.error();
    s.kernel_sched = *m;
    return {};
}

Status set_placement_rule(Settings& s, std::string_view v) {
    if (v != "link" && v != "min") return make_error("'" + std::string(v) + "' is not link or min");
    s.placement_rule = std::string(v);
    return {};
}

Status set_uplink_capacity(Settings& s, std::string_view v) {
    const std::string text(v);
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(d >= 0.1 && d <= 1e6))
        return make_error("'" + text + "' is not a number from 0.1 to 1e6");
    s.uplink_capacity = d;
    return {};
}

Status set_migrate_below(Settings& s, std::string_view v) {
    const std::string text(v);
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(d >= 0.0 && d <= 1.0))
        return make_error("'" + text + "' is not a ratio from 0 to 1");
    s.migrate_below = d;
    return {};
}

std::string fmt_double(double d) {
    std::ostringstream out;
    out << d;
    return out.str();
}

struct Row {
    std::string_view key;
    std::string_view help;
    Status (*set)(Settings&, std::string_view);
    std::string (*get)(const Settings&);
};

constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();

// The table: one row per key. Keep it in the order the man page documents.
const Row kRows[] = {
    {"weight_utility", "weight of the utility-versus-price term of exploratory jobs",
     set_uint<&EngineSettings::weight_value, 0, kU32 / 4>,
     [](const Settings& s) { return std::to_string(s.engine.weight_value); }},
    {"weight_age", "weight of the age term (every job)", set_uint<&EngineSettings::weight_age, 0, kU32 / 4>,
     [](const Settings& s) { return std::to_string(s.engine.weight_age); }},
    {"weight_partition", "weight of the partition PriorityJobFactor term (every job)",
     set_uint<&EngineSettings::weight_partition, 0, kU32 / 4>,
     [](const Settings& s) { return std::to_string(s.engine.weight_partition); }},
    {"max_age", "waiting time at which the age term saturates (seconds, or with s/m/h/d)",
     set_duration<&EngineSettings::max_age_s, 1, kU32>,
     [](const Settings& s) { return fmt_double(s.engine.max_age_s); }},
    {"rerank_period", "seconds between re-rankings of all jobs (0: PriorityCalcPeriod)",
     set_duration<&Settings::rerank_period, 0, 86400>,
     [](const Settings& s) { return std::to_string(s.rerank_period); }},
    {"max_curve_points", "points kept in memory per trial; past it older points are binned",
     set_uint<&Settings::max_curve_points, 64, 1000000>,
     [](const Settings& s) { return std::to_string(s.max_curve_points); }},
    {"site_factor_hold",
     "seconds an operator's SiteFactor on a job is kept before site_factor/explsched sets it again (0: "
     "the job's life)",
     set_duration<&Settings::site_factor_hold, 0, 31536000>,
     [](const Settings& s) { return std::to_string(s.site_factor_hold); }},
    {"feed_chunk", "stored reports read per re-ranking at most (catching up after a restart)",
     set_uint<&Settings::feed_chunk, 1000, 100000000>,
     [](const Settings& s) { return std::to_string(s.feed_chunk); }},
    {"throughput_table",
     "Gavel-format JSON of throughputs per job type and GPU type (absolute path; empty: none)",
     set_path<&Settings::throughput_table, true>, [](const Settings& s) { return s.throughput_table; }},
    {"placement", "place pending multi-node jobs where network contention is predicted least (yes/no)",
     set_bool<&Settings::placement>,
     [](const Settings& s) { return std::string(s.placement ? "yes" : "no"); }},
    {"net_table",
     "directory of DeepShare-format isolated_thp.csv and shared_thp_ratio.csv (absolute path; empty: none)",
     set_path<&Settings::net_table, true>, [](const Settings& s) { return s.net_table; }},
    {"placement_rule", "contention rule of placement: link (additive per link) or min (DeepShare's)",
     set_placement_rule, [](const Settings& s) { return s.placement_rule; }},
    {"topology_file",
     "topology.conf-style leaf switches for placement: uplinks are shared links (absolute path; empty: none)",
     set_path<&Settings::topology_file, true>, [](const Settings& s) { return s.topology_file; }},
    {"uplink_capacity", "a leaf switch uplink's capacity in node links, for placement (default 4)",
     set_uplink_capacity, [](const Settings& s) { return fmt_double(s.uplink_capacity); }},
    {"migrate_below",
     "requeue a running multi-node job predicted below this ratio when a 0.2 better node set is free (0: "
     "off)",
     set_migrate_below, [](const Settings& s) { return fmt_double(s.migrate_below); }},
    {"placement_window",
     "placement plans the next N pending multi-node jobs, cheapest per GPU first (1: priority order)",
     set_uint<&Settings::placement_window, 1, 1024>,
     [](const Settings& s) { return std::to_string(s.placement_window); }},
    {"placement_pass_limit",
     "seconds a pending multi-node job may be passed by cheaper ones before it is placed in priority order",
     set_duration<&Settings::placement_pass_limit, 0, 7 * 86400>,
     [](const Settings& s) { return std::to_string(s.placement_pass_limit); }},
    {"placement_learn",
     "learn placement's pair table from the throughput running multi-node trials report (yes/no)",
     set_bool<&Settings::placement_learn>,
     [](const Settings& s) { return std::string(s.placement_learn ? "yes" : "no"); }},
    {"utility_horizon", "wall time whose predicted gain a trial's utility values (seconds)",
     set_duration<&EngineSettings::utility_horizon_s, 1, 30 * 86400>,
     [](const Settings& s) { return fmt_double(s.engine.utility_horizon_s); }},
    {"throughput_hint",
     "a client's reported throughput counts up to this many times the measured speed (0: ignored)",
     set_double<&EngineSettings::throughput_hint_factor, 0, 1000000000>,
     [](const Settings& s) { return fmt_double(s.engine.throughput_hint_factor); }},
    {"forecast_miss_allowance",
     "fraction of a user's checked forecasts that may fail before their trials' utility is discounted (1: "
     "off)",
     set_double<&EngineSettings::forecast_miss_allowance, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.forecast_miss_allowance); }},
    {"interval_level", "central probability of the prediction interval (0-1)",
     set_double<&EngineSettings::interval_level, 1, 999999>,
     [](const Settings& s) { return fmt_double(s.engine.interval_level); }},
    {"interval_calibration",
     "factor on the fitted forecast interval's half-width (1: as fitted; 1.78 measured on held-out sweeps, "
     "what explsched predict reports)",
     set_double<&FitSettings::interval_calibration, 1, 100000000>,
     [](const Settings& s) { return fmt_double(s.engine.interval_calibration); }},
    {"fallback_calibration", "factor on the interval of a curve too short to extrapolate (1: as fitted)",
     set_double<&FitSettings::fallback_calibration, 1, 100000000>,
     [](const Settings& s) { return fmt_double(s.engine.fallback_calibration); }},
    {"sibling_prior_weight",
     "weight of a trial's own forecast against its sweep's siblings' curves (0: no sibling prior)",
     set_double<&FitSettings::sibling_prior_weight, 0, 1000000000000>,
     [](const Settings& s) { return fmt_double(s.engine.sibling_prior_weight); }},
    {"sibling_shape_bandwidth",
     "how closely a sibling's recent shape must match a trial's to count (fraction of its range)",
     set_double<&FitSettings::sibling_shape_bandwidth, 1, 100000000>,
     [](const Settings& s) { return fmt_double(s.engine.sibling_shape_bandwidth); }},
    {"sibling_level_bandwidth",
     "how closely a sibling's level must match a trial's to count (fraction of its range)",
     set_double<&FitSettings::sibling_level_bandwidth, 1, 100000000>,
     [](const Settings& s) { return fmt_double(s.engine.sibling_level_bandwidth); }},
    {"sibling_calibration", "factor on the interval of a forecast its siblings' curves moved (1: as mixed)",
     set_double<&FitSettings::sibling_calibration, 1, 100000000>,
     [](const Settings& s) { return fmt_double(s.engine.sibling_calibration); }},
    {"min_points", "reported points a trial needs before its curve is extrapolated",
     set_uint<&EngineSettings::min_points_to_fit, 3, 1000>,
     [](const Settings& s) { return std::to_string(s.engine.min_points_to_fit); }},
    {"max_refits", "curves (re)fitted per re-ranking at most (0: no limit); the rest wait a round",
     set_uint<&EngineSettings::max_refits_per_round, 0, 1000000>,
     [](const Settings& s) { return std::to_string(s.engine.max_refits_per_round); }},
    {"preempt_margin", "relative utility margin a preemptor needs over a preemptee (0.25 = 25%)",
     set_double<&EngineSettings::preempt_margin, 0, 100000000>,
     [](const Settings& s) { return fmt_double(s.engine.preempt_margin); }},
    {"preempt_rank_margin",
     "relative priority margin a trial without a forecast needs over a running trial with one (1 = twice)",
     set_double<&EngineSettings::preempt_rank_margin, 0, 100000000>,
     [](const Settings& s) { return fmt_double(s.engine.preempt_rank_margin); }},
    {"unpredicted_turn",
     "seconds a trial without a forecast runs before a waiting one without a forecast may take a turn (0: "
     "never)",
     set_duration<&EngineSettings::unpredicted_turn_s, 0, 30 * 86400>,
     [](const Settings& s) { return fmt_double(s.engine.unpredicted_turn_s); }},
    {"protect_leader",
     "whether a trial holding its sweep's best metric is preempted only by a trial worth its GPUs (yes/no)",
     set_bool<&EngineSettings::protect_leader>,
     [](const Settings& s) { return std::string(s.engine.protect_leader ? "yes" : "no"); }},
    {"min_run", "seconds a (re)started trial runs before it may be preempted",
     set_duration<&EngineSettings::min_run_s, 0, 30 * 86400>,
     [](const Settings& s) { return fmt_double(s.engine.min_run_s); }},
    {"grace_time", "seconds between the checkpoint signal and the requeue of a preempted trial",
     set_duration<&Settings::grace_time, 0, 86400>,
     [](const Settings& s) { return std::to_string(s.grace_time); }},
    {"preempt_cross_user", "whether a trial may be preempted for another user's job (yes/no)",
     set_bool<&EngineSettings::preempt_cross_user>,
     [](const Settings& s) { return std::string(s.engine.preempt_cross_user ? "yes" : "no"); }},
    {"preempt_non_explore", "whether exploratory jobs may preempt non-exploratory ones (yes/no)",
     set_bool<&EngineSettings::preempt_nonexploratory>,
     [](const Settings& s) { return std::string(s.engine.preempt_nonexploratory ? "yes" : "no"); }},
    {"hopeless_action", "default for hopeless trials: requeue (and hold), cancel, or none", set_hopeless,
     [](const Settings& s) { return std::string(hopeless_option_text(s.engine.hopeless_action)); }},
    {"hopeless_probability", "a trial whose chance to beat its sweep's best is below this is hopeless",
     set_double<&EngineSettings::hopeless_probability, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.hopeless_probability); }},
    {"hopeless_min_points", "reported points a trial needs before it can be called hopeless",
     set_uint<&EngineSettings::hopeless_min_points, 1, 1000>,
     [](const Settings& s) { return std::to_string(s.engine.hopeless_min_points); }},
    {"hopeless_min_progress",
     "fraction of its run (max_steps, else the group's furthest trial) before a trial can be called hopeless",
     set_double<&EngineSettings::hopeless_min_progress, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.hopeless_min_progress); }},
    {"audited_min_progress",
     "from this fraction of its run (at most hopeless_min_progress) a trial may be judged hopeless once "
     "its sweep's or its application's checked forecasts have held (1: never before hopeless_min_progress)",
     set_double<&EngineSettings::audited_min_progress, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.audited_min_progress); }},
    {"audited_min_checks", "checked forecasts that must have held before audited_min_progress applies",
     set_uint<&EngineSettings::audited_min_checks, 1, kMaxCalibrationAudits>,
     [](const Settings& s) { return std::to_string(s.engine.audited_min_checks); }},
    {"early_stop_progress",
     "from this fraction of its run (before hopeless_min_progress), a trial whose chance to beat its "
     "sweep's best is below early_stop_probability is stopped for good",
     set_double<&EngineSettings::early_stop_progress, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.early_stop_progress); }},
    {"early_stop_probability",
     "the chance to beat its sweep's best below which a trial is stopped from early_stop_progress on "
     "(at most hopeless_probability; 0: never before hopeless_min_progress)",
     set_double<&EngineSettings::early_stop_probability, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.early_stop_probability); }},
    {"chance_worth_gpu_hours",
     "GPU-hours a sure chance of beating its sweep's best is worth: a trial whose chance is below "
     "its remaining GPU-hours / this (at most pause_probability) is hopeless (0: off)",
     set_double<&EngineSettings::chance_worth_gpu_hours, 0, 1000000000000000000>,
     [](const Settings& s) { return fmt_double(s.engine.chance_worth_gpu_hours); }},
    {"calibration_min_audits",
     "checked forecasts a sweep needs before its intervals are widened to what its curves did (0: no audit)",
     set_uint<&EngineSettings::calibration_min_audits, 0, kMaxCalibrationAudits>,
     [](const Settings& s) { return std::to_string(s.engine.calibration_min_audits); }},
    {"calibration_max_widen", "most a sweep's forecast audits may widen its intervals (factor)",
     set_double<&EngineSettings::calibration_max_widen, 1000000, 1000000000>,
     [](const Settings& s) { return fmt_double(s.engine.calibration_max_widen); }},
    {"milestone_stop_probability",
     "a trial outside the top 1/eta at a milestone whose chance to beat its sweep's best is below this is "
     "hopeless (0: never)",
     set_double<&EngineSettings::milestone_stop_probability, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.milestone_stop_probability); }},
    {"milestone_stop_unpredicted",
     "also stop a trial behind at a milestone before its curve can be extrapolated, as ASHA does (yes/no)",
     set_bool<&EngineSettings::milestone_stop_unpredicted>,
     [](const Settings& s) { return std::string(s.engine.milestone_stop_unpredicted ? "yes" : "no"); }},
    {"min_expected_gain",
     "a trial whose expected improvement on its sweep's best is below this fraction of the sweep's metric "
     "range is hopeless (0: never)",
     set_double<&EngineSettings::min_expected_gain, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.min_expected_gain); }},
    {"near_tie_range",
     "min_expected_gain judges only trials predicted within this fraction of the sweep's metric range of "
     "its best (0: any trial)",
     set_double<&EngineSettings::near_tie_range, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.near_tie_range); }},
    {"stale_best_fraction",
     "a trial behind its sweep's best whose own best has not improved (by 1 % of the sweep's metric range) "
     "over this fraction of its run, and is not forecast to, is hopeless (0: never)",
     set_double<&EngineSettings::stale_best_fraction, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.stale_best_fraction); }},
    {"best_track_margin",
     "a trial ahead of the path its sweep's best took, at the same fractions of their runs, by more than "
     "this fraction of the sweep's metric range is read as on course to beat it (0: off)",
     set_double<&EngineSettings::best_track_margin, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.best_track_margin); }},
    {"behind_track_margin",
     "a trial behind the path its sweep's best took, at the same fractions of their runs, by more than "
     "this fraction of the sweep's metric range, and not closing the gap, is hopeless (0: off)",
     set_double<&EngineSettings::behind_track_margin, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.behind_track_margin); }},
    {"sibling_jumps",
     "a trial's optimistic bound allows for the jumps (learning-rate drops, plateaus that ended) its "
     "sweep's other trials made later in their runs (yes/no)",
     set_bool<&EngineSettings::sibling_jumps>,
     [](const Settings& s) { return std::string(s.engine.sibling_jumps ? "yes" : "no"); }},
    {"explore_first_progress",
     "from this fraction of its run, a trial not leading its sweep is paused while its sweep's untried "
     "trials wait for GPUs (0: off)",
     set_double<&EngineSettings::explore_first_progress, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.explore_first_progress); }},
    {"pause_probability",
     "a running trial below the GPU price whose chance to beat its sweep's best is below this is paused "
     "(requeued and held with its checkpoint, resumed when GPUs are cheap; 0: never pause)",
     set_double<&EngineSettings::pause_probability, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.pause_probability); }},
    {"pause_min_progress", "fraction of its run a trial must have done before it can be paused",
     set_double<&EngineSettings::pause_min_progress, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.pause_min_progress); }},
    {"pause_idle_utility",
     "past hopeless_min_progress, a trial the pause rule picks is paused even when no trial waits for its "
     "GPUs if its utility is at most this fraction of the GPU price and its optimistic utility is below it "
     "(0: only as far as pending trials need GPUs)",
     set_double<&EngineSettings::pause_idle_utility, 0, 1000000>,
     [](const Settings& s) { return fmt_double(s.engine.pause_idle_utility); }},
    {"pause_max", "times one trial may be paused; then it is stopped as without pause",
     set_uint<&EngineSettings::pause_max, 0, 1000>,
     [](const Settings& s) { return std::to_string(s.engine.pause_max); }},
    {"asha_reduction", "ASHA fallback: keep the top 1/eta of a sweep at each milestone (eta)",
     set_double<&EngineSettings::asha_reduction, 1000000, 1000000000>,
     [](const Settings& s) { return fmt_double(s.engine.asha_reduction); }},
    {"report_host", "host or address explschedd listens on and clients report to", set_host,
     [](const Settings& s) { return s.report_host; }},
    {"report_port", "TCP port of explschedd", set_uint<&Settings::report_port, 1, 65535>,
     [](const Settings& s) { return std::to_string(s.report_port); }},
    {"report_db", "SQLite database of training-curve reports (absolute path)", set_path<&Settings::report_db>,
     [](const Settings& s) { return s.report_db; }},
    {"munge_socket", "munged socket used to sign and check reports (absolute path; empty: default)",
     set_path<&Settings::munge_socket, true>, [](const Settings& s) { return s.munge_socket; }},
    {"kernel_sched", "device-level kernel scheduling for --explore steps: off, observe, enforce",
     set_kernel_sched, [](const Settings& s) { return std::string(to_string(s.kernel_sched)); }},
    {"mps", "start an MPS control daemon beside each GPU's kernel scheduler (yes/no)",
     set_bool<&Settings::mps>, [](const Settings& s) { return std::string(s.mps ? "yes" : "no"); }},
    {"runtime_dir", "directory for per-GPU sockets, rings and pid files (absolute path)",
     set_path<&Settings::runtime_dir>, [](const Settings& s) { return s.runtime_dir; }},
    {"libexec_dir", "directory holding libexplsched_intercept.so and explsched-kerneld",
     set_path<&Settings::libexec_dir, true>, [](const Settings& s) { return s.libexec_dir; }},
    {"kerneld_user", "user explsched-kerneld runs as (owner of its per-GPU directory and socket)",
     set_user_name, [](const Settings& s) { return s.kerneld_user; }},
};

const Row* find_row(std::string_view key) {
    for (const Row& row : kRows)
        if (row.key == key) return &row;
    return nullptr;
}

std::string known_keys() {
    std::string out;
    for (const Row& row : kRows) {
        if (!out.empty()) out += ", ";
        out += row.key;
    }
    return out;
}

}  // namespace

const std::vector<SettingInfo>& setting_keys() {
    static const std::vector<SettingInfo> keys = [] {
        std::vector<SettingInfo> v;
        for (const Row& row : kRows) v.push_back({row.key, row.help});
        return v;
    }();
    return keys;
}

Result<Settings> apply_setting(const Settings& base, std::string_view key_value) {
    auto kv = split_key_value(key_value);
    if (!kv) return kv.error();
    const std::string_view key = kv->key;
    const std::string_view value = kv->value;
    const Row* row = find_row(key);
    if (row == nullptr)
        return make_error("unknown setting '" + std::string(key) + "' (known: " + known_keys() + ")");
    Settings out = base;
    if (Status st = row->set(out, value); !st)
        return make_error("setting '" + std::string(key) + "': " + st.error().message);
    if (Status st = validate(out.engine); !st)
        return make_error("setting '" + std::string(key) + "': " + st.error().message);
    return out;
}

Result<Settings> parse_settings(std::string_view text, std::string_view separators, const Settings& base) {
    return apply_items(text, separators, base, apply_setting);
}

Result<Settings> parse_settings_args(const std::vector<std::string>& args, const Settings& base) {
    return apply_args(args, base, apply_setting);
}

Result<Settings> parse_settings_file_text(std::string_view text, std::string_view origin,
                                          const Settings& base) {
    return apply_lines(text, origin, base, apply_setting);
}

std::vector<std::string> describe_settings(const Settings& settings) {
    std::vector<std::string> out;
    for (const Row& row : kRows) out.push_back(std::string(row.key) + "=" + row.get(settings));
    return out;
}

Result<Settings> site_settings() {
    const char* env = std::getenv("EXPLSCHED_CONF");
    const bool explicit_path = env != nullptr && *env != '\0';
    const std::string file = explicit_path ? env : "/etc/slurm/explschedd.conf";
    std::ifstream in(file);
    if (!in) {
        if (!explicit_path) return Settings{};  // the default file is optional
        return make_error("cannot read EXPLSCHED_CONF=" + file + ": " + std::strerror(errno));
    }
    std::stringstream text;
    text << in.rdbuf();
    return parse_settings_file_text(text.str(), file);
}

}  // namespace explsched
