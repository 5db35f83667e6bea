#include "core/sched/site_pin.hpp"

namespace explsched {

SitePinEvent site_pin_step(SitePinState& s, std::uint32_t current, std::uint32_t hold, std::int64_t now) {
    if (!s.pinned && s.written != 0 && current != s.written) {
        s.pinned = true;
        s.pinned_at = now;
        return SitePinEvent::pinned;
    }
    if (s.pinned && hold != 0 && now - s.pinned_at >= static_cast<std::int64_t>(hold)) {
        s.pinned = false;
        // the operator's value is what the record holds; the next store replaces it
        s.written = current;
        return SitePinEvent::released;
    }
    return SitePinEvent::none;
}

}  // namespace explsched
