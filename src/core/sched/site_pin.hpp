// site_factor/explsched's rule for an operator's site factor. The plugin stores a job's site
// factor each PriorityCalcPeriod; an operator may set it by hand (scontrol update job
// SiteFactor=). The rule: a record whose site factor differs from the one the plugin stored last
// was set by an operator, and the operator's value is kept ("pinned") for `hold` seconds, or for
// the rest of the job's life when hold is 0; then the plugin stores its own again. Before the
// plugin has stored anything for a job in this slurmctld's life (written == 0) nothing can be
// told apart: a pin that must survive a restart is kept in the action ledger.
#pragma once

#include <cstdint>

namespace explsched {

struct SitePinState {
    bool pinned = false;
    std::int64_t pinned_at = 0;  // when the operator's value was noticed (seconds since the epoch)
    std::uint32_t written = 0;   // the site factor the plugin stored last (0: none yet)
};

enum class SitePinEvent { none, pinned, released };

// One look at the job's record, whose site factor is `current` now; updates `s` (but not
// `s.written`: the caller sets it when it stores a value). True in s.pinned afterwards means:
// leave the record's site factor alone.
SitePinEvent site_pin_step(SitePinState& s, std::uint32_t current, std::uint32_t hold, std::int64_t now);

}  // namespace explsched
