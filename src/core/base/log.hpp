// The core never prints: it writes to a Logger that its host injects. The slurmctld shims bind it
// to Slurm's error/info/verbose/debug, the SPANK plugin to slurm_error/slurm_info/slurm_debug, the
// command-line tools to stderr. Callers check enabled() before formatting, so a disabled level
// costs one comparison.
#pragma once

#include <string_view>

namespace explsched {

enum class LogLevel { error = 0, info = 1, verbose = 2, debug = 3 };

class Logger {
public:
    virtual ~Logger() = default;
    virtual bool enabled(LogLevel level) const = 0;
    virtual void write(LogLevel level, std::string_view message) = 0;
};

// Discards everything; the default where no host binds a logger.
class NullLogger final : public Logger {
public:
    bool enabled(LogLevel) const override { return false; }
    void write(LogLevel, std::string_view) override {}
};

// Writes "explsched: <message>" lines to stderr up to a maximum level (command-line tools).
class StderrLogger final : public Logger {
public:
    explicit StderrLogger(LogLevel max_level) : max_level_(max_level) {}
    bool enabled(LogLevel level) const override { return level <= max_level_; }
    void write(LogLevel level, std::string_view message) override;

private:
    LogLevel max_level_;
};

}  // namespace explsched
