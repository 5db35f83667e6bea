// ExplSched settings: one struct with every default, and one table-driven parser shared by every
// place a site configures us: slurm.conf `PriorityParameters=` (comma-separated key=value), the
// plugstack.conf arguments of the SPANK plugin (whitespace-separated key=value), and the
// explschedd configuration file (one key=value per line, '#' comments).
//
// Parsers are pure functions: they never log, and they report the first unknown key or bad value
// as an Error that names it. A failed parse leaves the caller's settings untouched.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"
#include "core/sched/engine_settings.hpp"

namespace explsched {

enum class KernelSchedMode { off, observe, enforce };

// The user-facing words for HopelessAction (--explore-on-hopeless, hopeless_action=):
// requeue (and hold), cancel, none.
std::string_view hopeless_option_text(HopelessAction action);
Result<HopelessAction> parse_on_hopeless(std::string_view text);
std::string_view to_string(KernelSchedMode mode);
Result<KernelSchedMode> parse_kernel_sched_mode(std::string_view text);

// All defaults live here and nowhere else.
struct Settings {
    // --- The core engine: prediction, utility, price, decisions, priority weights -----------------
    // (engine_settings.hpp holds those defaults; the keys below map onto its fields.)
    EngineSettings engine;

    // --- priority/explsched ---------------------------------------------------------------------
    // Seconds between re-rankings of every job; 0: slurm.conf PriorityCalcPeriod (whole minutes).
    uint32_t rerank_period = 0;
    // Points kept in memory per trial; past it the older part of a curve is binned
    // (curves/curve_budget.hpp). Bounds slurmctld's memory and the fit's cost per trial.
    uint32_t max_curve_points = 2000;
    // Stored reports read per re-ranking at most: after a restart the plugin catches up with the
    // store over several rounds (no cancel or hold until it has), never in one long read.
    uint32_t feed_chunk = 200000;
    // Gavel-format JSON of job types' throughputs on GPU types (throughput_table.hpp): a trial
    // whose speed was measured on one GPU type is valued on the type it runs or would run on, by
    // the --explore-model row's ratio. Empty: no table (no trial is scaled by type).
    std::string throughput_table = "";
    // Network-contention-aware placement of pending multi-node jobs (doc/placement.md): off by
    // default. net_table: a directory with DeepShare-format isolated_thp.csv and
    // shared_thp_ratio.csv (empty: no table, every pair gets the documented fallback);
    // placement_rule: "link" (additive per link, default) or "min" (DeepShare's).
    bool placement = false;
    std::string net_table = "";
    std::string placement_rule = "link";
    // topology.conf-style leaf switches (SwitchName=s1 Nodes=n[1-4]): a job spanning several
    // crosses their uplinks, each worth uplink_capacity node links. Empty: nodes' links only.
    std::string topology_file = "";
    double uplink_capacity = 4.0;
    // Migration (off: 0): a running multi-node job predicted below this ratio is requeued when the
    // same shape elsewhere is predicted at least 0.2 better (at most one a round).
    double migrate_below = 0.0;
    // The planner's window (core/sched/net_plan.hpp): among the next placement_window pending
    // multi-node jobs by priority, the one whose placement loses least per GPU is placed first,
    // and (priority/explsched) raised just above the higher jobs it passes so Slurm starts it
    // first. 1: strict priority order. A job passed for placement_pass_limit seconds is placed
    // in priority order from then on (no job waits longer for others' sake).
    uint32_t placement_window = 64;
    uint32_t placement_pass_limit = 600;
    // Learn the pair table online from the throughput running multi-node trials report (their
    // speed beside other jobs against their speed alone; core/sched/net_learn.hpp). Off by
    // default: it trusts what users' processes report (bounded: doc/placement.md).
    bool placement_learn = false;

    // --- site_factor/explsched ------------------------------------------------------------------
    // Seconds an operator's `scontrol update job SiteFactor=` is kept before ExplSched writes the
    // job's site factor again; 0: for the rest of the job's life (requeues included).
    uint32_t site_factor_hold = 0;

    // --- preempt/explsched ----------------------------------------------------------------------
    // Seconds between the checkpoint signal (SIGTERM) and the requeue of a preempted trial.
    uint32_t grace_time = 60;

    // --- Reporting (explschedd and its clients) -------------------------------------------------
    std::string report_host = "127.0.0.1";
    uint16_t report_port = 6828;
    std::string report_db = "/var/lib/explsched/reports.db";
    // munged's socket; empty: libmunge's default (/run/munge/munge.socket.2).
    std::string munge_socket = "";

    // --- Device level (SPANK plugin, explsched-kerneld) -----------------------------------------
    KernelSchedMode kernel_sched = KernelSchedMode::off;
    bool mps = false;
    std::string runtime_dir = "/run/explsched";
    std::string libexec_dir = "";  // empty: the directory the installation put our helpers in
    // The user explsched-kerneld runs as: the SPANK plugin trusts a GPU directory and socket owned
    // by root or this user only.
    std::string kerneld_user = "explsched";
};

// Description of one key, for `explsched config --list`, man pages and error hints.
struct SettingInfo {
    std::string_view key;
    std::string_view help;
};
const std::vector<SettingInfo>& setting_keys();

// Applies one "key=value" to a copy of base.
Result<Settings> apply_setting(const Settings& base, std::string_view key_value);
// Applies every item of `text` split on `separators` (empty items are ignored), e.g.
// parse_settings("preempt_margin=0.3,grace_time=120", ",").
Result<Settings> parse_settings(std::string_view text, std::string_view separators,
                                const Settings& base = Settings{});
// Applies argv-style items (plugstack.conf arguments).
Result<Settings> parse_settings_args(const std::vector<std::string>& args, const Settings& base = Settings{});
// Applies a configuration file's text: one key=value per line, blank lines and '#' comments
// ignored. Errors name the line number: "<origin>:<line>: ...".
Result<Settings> parse_settings_file_text(std::string_view text, std::string_view origin,
                                          const Settings& base = Settings{});
// The settings file shared by explschedd and the client tools: $EXPLSCHED_CONF if set (it must
// then be readable), else /etc/slurm/explschedd.conf if it exists, else the defaults.
Result<Settings> site_settings();

// "key=value" for every key, in table order (what `explsched config` and the logs show).
std::vector<std::string> describe_settings(const Settings& settings);

}  // namespace explsched
