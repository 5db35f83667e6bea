#include "core/base/log.hpp"

#include <cstdio>

namespace explsched {

void StderrLogger::write(LogLevel level, std::string_view message) {
    if (!enabled(level)) return;
    std::fprintf(stderr, "explsched: %.*s\n", static_cast<int>(message.size()), message.data());
}

}  // namespace explsched
