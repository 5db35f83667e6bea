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
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return make_error("pid file " + path + ": cannot open: " + std::strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char buf[32] = {};
        [[maybe_unused]] const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
        ::close(fd);
        return make_error("pid file " + path + ": another explschedd holds it (pid " +
                          std::string(buf, strcspn(buf, "\n")) + ")");
    }
    PidFile file(path, fd);
    if (auto s = file.update(); !s) return s.error();
    return file;
}

PidFile::PidFile(PidFile&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }

PidFile::~PidFile() {
    if (fd_ < 0) return;
    ::unlink(path_.c_str());
    ::close(fd_);
}

Status PidFile::update() {
    const std::string text = std::to_string(getpid()) + "\n";
    if (ftruncate(fd_, 0) != 0 ||
        ::pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
        return make_error("pid file " + path_ + ": cannot write: " + std::strerror(errno));
    return {};
}

Result<Detach> Detach::start() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return make_error(std::string("pipe: ") + std::strerror(errno));
    const pid_t pid = fork();
    if (pid < 0) return make_error(std::string("fork: ") + std::strerror(errno));
    if (pid > 0) {
        // The original process: wait for "ready" (one byte) or EOF (the daemon died first).
        ::close(fds[1]);
        char byte = 0;
        ssize_t n;
        do n = ::read(fds[0], &byte, 1);
        while (n < 0 && errno == EINTR);
        waitpid(pid, nullptr, 0);  // the intermediate child exits at once
        _exit(n == 1 ? 0 : 1);
    }
    ::close(fds[0]);
    setsid();
    const pid_t second = fork();
    if (second < 0) _exit(1);
    if (second > 0) _exit(0);
    umask(022);
    if (chdir("/") != 0) _exit(1);
    return Detach(fds[1]);
}

Detach::~Detach() {
    if (fd_ >= 0) ::close(fd_);
}

void Detach::ready() {
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        if (null > STDERR_FILENO) ::close(null);
    }
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(fd_, &byte, 1);
    ::close(fd_);
    fd_ = -1;
}

}  // namespace explsched::daemon
