// Process plumbing of explschedd: logging to stderr or syslog, the pid file, detaching.
#pragma once

#include <string>

#include "core/base/fd.hpp"
#include "core/base/log.hpp"
#include "core/base/result.hpp"

namespace explsched::daemon {

// "explschedd: <message>" on stderr, or syslog(LOG_DAEMON) once detached. Thread-safe (one
// write(2)/syslog(3) call per line).
class DaemonLogger final : public Logger {
public:
    explicit DaemonLogger(LogLevel max_level) : max_level_(max_level) {}
    bool enabled(LogLevel level) const override { return level <= max_level_; }
    void write(LogLevel level, std::string_view message) override;
    void use_syslog();

private:
    LogLevel max_level_;
    bool syslog_ = false;
};

// A pid file held with an exclusive lock for the life of the process: a second explschedd with
// the same file refuses to start instead of clobbering it. Removed on destruction.
class PidFile {
public:
    static Result<PidFile> create(const std::string& path);
    PidFile(PidFile&& other) noexcept = default;
    PidFile& operator=(PidFile&&) = delete;
    ~PidFile();
    // Rewrites the pid (after detaching changed it).
    Status update();

private:
    PidFile(std::string path, Fd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
    std::string path_;
    Fd fd_;  // holds the lock
};

// Detaches (fork, setsid, fork). The original process waits until the daemon calls
// DetachReady::ready() (or exits), then exits with 0, or 1 if the daemon failed first: an init
// script that starts explschedd learns about a bad port or database immediately.
class Detach {
public:
    static Result<Detach> start();  // returns in the daemon; the original process never returns
    Detach(Detach&& other) noexcept = default;
    Detach& operator=(Detach&&) = delete;
    void ready();  // redirects stdio to /dev/null and releases the waiting parent

private:
    explicit Detach(Fd fd) : fd_(std::move(fd)) {}
    Fd fd_;  // write end of the pipe the original process waits on
};

}  // namespace explsched::daemon
