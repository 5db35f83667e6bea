// The text of an errno value, for messages such as "explsched: cannot open x: <errno_text>".
// Header-only, so that the intercept (built without the core library) can use it too.
#pragma once

#include <cstring>
#include <string>

namespace explsched {

inline std::string errno_text(int err) { return std::strerror(err); }

}  // namespace explsched
