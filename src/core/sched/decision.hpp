// What the engine concludes about one trial: its state, the decision, and the reason in a form
// cheap to produce for 12,000 trials per round (a code and the numbers), formatted on demand.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace explsched {

enum class TrialState { unknown, promising, hopeless };

// pending trials: run (worth GPUs at the price its load would create) or wait;
// running trials: keep, preemptable (utility under the price), or, when hopeless, terminate or
// requeue_hold (requeue and hold, per the job's hopeless action); pause: a running trial is
// requeued and held with its checkpoint (costs nothing while paused, the host may release it), a
// paused one stays paused. A paused trial the engine thaws gets `run` (ReasonCode::resumed).
enum class Decision { run, wait, keep, preemptable, terminate, requeue_hold, pause };

enum class ReasonCode {
    nonexploratory,       // no group: ranked by age, partition and nice
    invalid_report,       // curve rejected; Assessment::error says why
    diverged,             // metric became non-finite at step a
    hopeless,             // final a in [b, c] cannot beat group best d (probability e)
    hopeless_early,       // the same, before hopeless_min_progress: e < early_stop_probability
    finished,             // reached max_steps a
    too_few_points,       // a points < b needed, no milestone reached yet; c: its turn (s) is over
    asha_promoted,        // milestone step a: rank b of c, within the top 1/d
    asha_behind,          // milestone step a: rank b of c, outside the top 1/d
    above_price,          // utility a >= price b at load c
    below_price,          // utility a < price b at load c
    in_grace,             // running a s < min_run_s b: not preemptable yet
    behind_at_milestone,  // milestone step a: rank b of c, outside the top 1/d; chance e to win
    negligible_gain,      // expected improvement a (of the range) on best d < b; final c
    costly_chance,        // chance a to beat best d is worth a*c GPU-hours < the b its run needs; final e
    // pause and resume (core/sched/pause.hpp)
    pause_unlikely,       // chance a < pause_probability b, utility c < price d; optimistic bound e
    pause_idle,           // pause_unlikely's figures, no trial waiting: utility c <= pause_idle_utility x d
    paused_below_price,   // paused: optimistic utility a < price b at load c; optimistic bound d
    paused_bound_behind,  // paused: optimistic bound a behind best b (chance c): waits for its leaders
    paused_no_room,       // paused: optimistic utility a >= price b, but c GPUs free, d needed
    resumed,              // optimistic utility a >= price b at load c; optimistic bound d vs best e
    resumed_idle,         // the same figures, a < b: on GPUs nobody else wants, its sweep's others gone
    bound_cannot_matter,  // optimistic bound a cannot beat the sweep's best b (chance c)
    explore_first,        // a untried job records of its sweep wait; paused at fraction b of its run (c)
    resumed_grace,        // resumed from pause a s ago < min_run_s b: kept; chance c to beat best d
    // running, utility a < price b at load c, but it holds its sweep's best metric d (ahead of e):
    // only a trial worth its GPUs (utility at least its price) or a plain job by rank takes them
    leads_sweep,
    // released from its pause and not restarted yet: no verdict on its forecast (the evidence it
    // was resumed on) before it ran min_run b s; chance c to beat best d
    resumed_pending,
    // running, not its sweep's leader: chance a < pause_probability b, and c pending tasks of its
    // job array wait for a slot of the array's task limit (sbatch --array=...%N) that it holds;
    // optimistic bound e. Its utility may be above the GPU price: the slot, not a GPU, is short.
    pause_slot,
    // paused: its job array runs at its task limit (c tasks waiting), so releasing it would not
    // start it; optimistic utility a, price b
    paused_no_slot,
    // its own best a, last improved (by kStaleBestMargin of the sweep's range) at step b, a
    // fraction c of its run ago (>= stale_best_fraction), is behind the sweep's best d, and its
    // forecast final e does not come back past it
    stale_best,
    // behind, by a on average over the last tenth of the runs compared, the path of the sibling
    // that reached the sweep's best c, at the same fractions of their runs, and not closing the
    // gap fast enough: chance b below hopeless_probability (behind_track_margin); its forecast
    // final d in an interval up to e (which alone would have kept it)
    behind_track,
};

struct Reason {
    static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    ReasonCode code = ReasonCode::nonexploratory;
    double a = kNaN, b = kNaN, c = kNaN, d = kNaN, e = kNaN;
    // Set where a stopping rule fired before hopeless_min_progress only because the sweep's
    // checked forecasts have held (audited_min_progress): the fraction of its run it had reached.
    // Such a verdict is not final (a pause, not a cancel), and the description says so.
    double held_at = kNaN;
};

const char* to_string(TrialState state);
const char* to_string(Decision decision);
const char* to_string(ReasonCode code);
// The code named `text` (as to_string writes it); false when no code has that name.
bool reason_code_from(std::string_view text, ReasonCode& out);

// One line for humans (SystemComment, sprio, logs), e.g.
// "preemptable: utility 3.1e-06/GPU-s below price 5.2e-06 at load 0.93".
std::string describe(Decision decision, const Reason& reason);

}  // namespace explsched
