// An owning file descriptor: closed when its owner goes away, so an early return or an exception
// cannot leak it. Move-only. Header-only and exception-free, so that code built with
// -fno-exceptions and linked without the core (the CUDA intercept) can use it too.
#pragma once

#include <unistd.h>

#include <utility>

namespace explsched {

class Fd {
public:
    Fd() noexcept = default;
    explicit Fd(int fd) noexcept : fd_(fd) {}
    Fd(Fd&& other) noexcept : fd_(other.release()) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) reset(other.release());
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }

    int get() const noexcept { return fd_; }
    bool valid() const noexcept { return fd_ >= 0; }
    // Gives up ownership: the caller closes the returned descriptor.
    int release() noexcept { return std::exchange(fd_, -1); }
    // Closes the descriptor held (if any) and takes `fd`. close(2) is not retried on EINTR: on
    // Linux the descriptor is gone either way, and a retry could close one another thread opened.
    void reset(int fd = -1) noexcept {
        const int old = std::exchange(fd_, fd);
        if (old >= 0 && old != fd) ::close(old);
    }

private:
    int fd_ = -1;
};

}  // namespace explsched
