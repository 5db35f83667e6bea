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

#include "result.hpp"

namespace explsched {

enum class OnHopeless { requeue, cancel, none };
enum class KernelSchedMode { off, observe, enforce };

std::string_view to_string(OnHopeless action);
std::string_view to_string(KernelSchedMode mode);
Result<OnHopeless> parse_on_hopeless(std::string_view text);
Result<KernelSchedMode> parse_kernel_sched_mode(std::string_view text);

// All defaults live here and nowhere else.
struct Settings {
    // --- Ranking (priority/explsched) -----------------------------------------------------------
    // Weights of the priority terms; each term is normalised to [0, 1] before weighting.
    uint32_t weight_utility = 100000;
    uint32_t weight_age = 10000;
    uint32_t weight_partition = 10000;
    // Seconds between re-rankings of every job; 0: slurm.conf PriorityCalcPeriod (whole minutes).
    uint32_t rerank_period = 0;
    // Age after which the age term saturates (seconds).
    uint32_t max_age = 7 * 24 * 3600;
    // Exploratory jobs without a prediction yet rank as if their utility sat at this fraction of
    // the price range, so a new trial neither starves nor jumps the queue.
    double default_utility_fraction = 0.5;

    // --- Preemption and termination (preempt/explsched) -----------------------------------------
    // A pending trial may preempt a running one only when its utility per GPU is higher by this
    // relative margin (0.25 = 25 %).
    double preempt_margin = 0.25;
    // Seconds between the checkpoint signal and the requeue.
    uint32_t grace_time = 60;
    // Whether non-exploratory jobs may be preempted by exploratory ones.
    bool preempt_non_explore = false;
    // What happens to a hopeless trial when its job did not choose (--explore-on-hopeless).
    OnHopeless hopeless_action = OnHopeless::requeue;

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
Result<Settings> parse_settings_args(const std::vector<std::string>& args,
                                     const Settings& base = Settings{});
// Applies a configuration file's text: one key=value per line, blank lines and '#' comments
// ignored. Errors name the line number: "<origin>:<line>: ...".
Result<Settings> parse_settings_file_text(std::string_view text, std::string_view origin,
                                          const Settings& base = Settings{});
// "key=value" for every key, in table order (what `explsched config` and the logs show).
std::vector<std::string> describe_settings(const Settings& settings);

}  // namespace explsched
