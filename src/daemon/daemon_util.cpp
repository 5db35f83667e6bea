#include "daemon/daemon_util.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/base/errno_text.hpp"

namespace explsched::daemon {

void DaemonLogger::write(LogLevel level, std::string_view message) {
    if (!enabled(level)) return;
    if (syslog_) {
        const int prio = level == LogLevel::error ? LOG_ERR : level == LogLevel::info ? LOG_INFO : LOG_DEBUG;
        syslog(prio, "%.*s", static_cast<int>(message.size()), message.data());
        return;
    }
    std::string line = "explschedd: ";
    line.append(message.data(), message.size());
    line += '\n';
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
}

void DaemonLogger::use_syslog() {
    openlog("explschedd", LOG_PID, LOG_DAEMON);
    syslog_ = true;
}

Result<PidFile> PidFile::create(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (!fd.valid()) return make_error("pid file " + path + ": cannot open: " + errno_text(errno));
    if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        char buf[32] = {};
        [[maybe_unused]] const ssize_t n = ::pread(fd.get(), buf, sizeof buf - 1, 0);
        return make_error("pid file " + path + ": another explschedd holds it (pid " +
                          std::string(buf, strcspn(buf, "\n")) + ")");
    }
    PidFile file(path, std::move(fd));
    if (auto s = file.update(); !s) return s.error();
    return file;
}

PidFile::~PidFile() {
    if (fd_.valid()) ::unlink(path_.c_str());  // removed while the lock is still held
}

Status PidFile::update() {
    const std::string text = std::to_string(getpid()) + "\n";
    if (ftruncate(fd_.get(), 0) != 0 ||
        ::pwrite(fd_.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
        return make_error("pid file " + path_ + ": cannot write: " + errno_text(errno));
    return {};
}

Result<Detach> Detach::start() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return make_error("pipe: " + errno_text(errno));
    Fd read_end(fds[0]);
    Fd write_end(fds[1]);
    const pid_t pid = fork();
    if (pid < 0) return make_error("fork: " + errno_text(errno));
    if (pid > 0) {
        // The original process: wait for "ready" (one byte) or EOF (the daemon died first).
        write_end.reset();
        char byte = 0;
        ssize_t n;
        do n = ::read(read_end.get(), &byte, 1);
        while (n < 0 && errno == EINTR);
        waitpid(pid, nullptr, 0);  // the intermediate child exits at once
        _exit(n == 1 ? 0 : 1);
    }
    read_end.reset();
    setsid();
    const pid_t second = fork();
    if (second < 0) _exit(1);
    if (second > 0) _exit(0);
    umask(022);
    if (chdir("/") != 0) _exit(1);
    return Detach(std::move(write_end));
}

void Detach::ready() {
    if (Fd null(::open("/dev/null", O_RDWR)); null.valid()) {
        dup2(null.get(), STDIN_FILENO);
        dup2(null.get(), STDOUT_FILENO);
        dup2(null.get(), STDERR_FILENO);
        // Opened as 0, 1 or 2 (that stream was closed), it now is that stream: keep it open.
        if (null.get() <= STDERR_FILENO) null.release();
    }
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(fd_.get(), &byte, 1);
    fd_.reset();
}

}  // namespace explsched::daemon
