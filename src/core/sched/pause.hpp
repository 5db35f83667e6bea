// Pause and resume (freeze-thaw): the rules that pause a running trial instead of stopping it,
// resume a paused one when GPUs are cheap, and stop a paused one for good. A paused trial is
// requeued and held with its checkpoint by the host: it costs no GPU-hours while paused, so the
// pause may come earlier than the hopeless rules (pause_min_progress, pause_probability), and a
// stop becomes final only when even the trial's optimistic bound cannot matter to its sweep.
// Pure functions; the engine gathers the inputs (engine_pause.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "core/sched/decision.hpp"
#include "core/sched/engine_settings.hpp"
#include "core/sched/policy.hpp"

namespace explsched {

// What a paused (or to-be-paused) trial could still be worth: its optimistic bound (the
// interval's optimistic end), whether that beats its sweep's best, and the utility per GPU-second
// it would have if its curve went to that bound.
struct PauseOutlook {
    double bound = std::numeric_limits<double>::quiet_NaN();
    bool can_matter = true;  // the bound beats the sweep's best (or no best yet)
    // direction-aware (bound - best) in units of the sweep's range: the resume order
    double optimism = 0.0;
    double optimistic_utility = 0.0;
};

// `current` is the trial's best observed metric, `speed` its steps/s (NaN: unknown), `trust` the
// owner's forecast-audit factor.
PauseOutlook pause_outlook(const StopEvidence& evidence, double current, double speed, double gpus,
                           double trust, const EngineSettings& settings);

// Whether pausing is on and the trial has pauses left.
bool pause_enabled(std::uint32_t pauses, const EngineSettings& settings);

// A running trial that is not stopped: paused when unlikely (chance < pause_probability, by its
// own forecast: a bound moved for its siblings' later jumps, sibling_jumps, keeps it from being
// stopped, not from being paused), below the price, past its grace and pause_min_progress, not its
// sweep's leader nor done.
// Reason ReasonCode::pause_unlikely.
std::optional<Reason> pause_rule(const StopEvidence& evidence, const PauseOutlook& outlook, double utility,
                                 double price, double running_s, const EngineSettings& settings);

// A trial pause_rule picked, paused although no pending trial needs its GPUs
// (pause_idle_utility): past hopeless_min_progress of its run, its utility at most
// pause_idle_utility x the price, and even its optimistic utility below the price, so that the
// resume rule does not resume it at once. Reason ReasonCode::pause_idle (the figures of
// pause_unlikely).
std::optional<Reason> idle_pause_rule(const StopEvidence& evidence, const PauseOutlook& outlook,
                                      const Reason& unlikely, const EngineSettings& settings);

// A stopped trial (a stopping rule fired) whose optimistic bound still beats its sweep's best is
// paused instead (keeping the rule's reason); a paused one that cannot matter any more is stopped
// (ReasonCode::bound_cannot_matter). Not before hopeless_min_progress of its run, even once its
// sweep's forecasts have held (final_stop_allowed, policy.hpp), unless it is decisively hopeless:
// that stop is final from early_stop_progress on.
bool stop_is_final(const StopEvidence& evidence, const PauseOutlook& outlook, const EngineSettings& settings);
Reason cannot_matter_reason(const StopEvidence& evidence, const PauseOutlook& outlook);

// A paused trial that is not resumed while other trials of its sweep run, whatever the price:
// past hopeless_min_progress of its run (before it, a late bloomer's plateau may hide its
// curve's shape) with even its optimistic bound behind the sweep's best. Reason
// ReasonCode::paused_bound_behind.
bool waits_for_leaders(const StopEvidence& evidence, const PauseOutlook& outlook,
                       const EngineSettings& settings);

// Chooses among candidates (job index, GPUs, rank key: higher goes first) those that fit in
// `budget` GPUs, in order of the key; the rest are left out. Ties keep the input order.
struct PauseCandidate {
    std::size_t job = 0;
    std::uint32_t gpus = 1;
    double key = 0.0;
};
std::vector<std::size_t> choose_by_key(std::vector<PauseCandidate> candidates, double budget);

}  // namespace explsched
