#include "kernel_sched/ksched_socket.hpp"

#include <cerrno>
#include <cstring>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "core/base/errno_text.hpp"

namespace explsched::ksched {

bool send_msg(int fd, const void* data, std::size_t size, const int* fds, int nfds) {
    iovec iov{const_cast<void*>(data), size};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 3)];
    if (nfds > 0 && nfds <= 3) {
        std::memset(control, 0, sizeof control);
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<unsigned>(nfds));
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<unsigned>(nfds));
        std::memcpy(CMSG_DATA(c), fds, sizeof(int) * static_cast<unsigned>(nfds));
    }
    for (;;) {
        const ssize_t n = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n >= 0) return static_cast<std::size_t>(n) == size;
        if (errno != EINTR) return false;
    }
}

long recv_msg(int fd, void* data, std::size_t size, int* fds, int max_fds, int& nfds) {
    nfds = 0;
    iovec iov{data, size};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = 0;
    do {
        n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int got = -1;
            std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
            if (nfds < max_fds && fds != nullptr)
                fds[nfds++] = got;
            else
                close(got);  // a peer must not make us keep descriptors we did not ask for
        }
    }
    if ((msg.msg_flags & MSG_TRUNC) != 0) errno = EMSGSIZE;
    return static_cast<long>(n);
}

bool wait_readable(int fd, std::uint64_t deadline_ns) {
    for (;;) {
        const std::uint64_t now = monotonic_ns();
        if (now >= deadline_ns) return false;
        pollfd p{fd, POLLIN, 0};
        const auto ms = static_cast<int>((deadline_ns - now + 999999) / 1000000);
        const int r = poll(&p, 1, ms);
        if (r > 0) return true;
        if (r < 0 && errno != EINTR) return false;
    }
}

Fd connect_socket(const std::string& path, std::string& error) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) {
        error = "socket path " + path + " is too long";
        return Fd();
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    Fd s(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!s.valid()) {
        error = "socket: " + errno_text(errno);
        return Fd();
    }
    // A Unix socket connects at once or fails (EAGAIN: the daemon's backlog is full).
    if (connect(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        error = "cannot connect to " + path + ": " + errno_text(errno);
        return Fd();
    }
    return s;
}

bool client_begin(const std::string& path, const HelloMsg& hello, Fd& sock, std::string& error) {
    sock = connect_socket(path, error);
    if (!sock.valid()) return false;
    if (!send_msg(sock.get(), &hello, sizeof hello)) {
        error = "cannot send hello to " + path + ": " + errno_text(errno);
        sock.reset();
        return false;
    }
    return true;
}

bool client_finish(int sock, std::uint64_t deadline_ns, ClientAttach& out, std::string& error) {
    if (!wait_readable(sock, deadline_ns)) {
        error = "no answer from the daemon in time";
        return false;
    }
    int fds[3] = {-1, -1, -1};
    int nfds = 0;
    const long n = recv_msg(sock, &out.welcome, sizeof out.welcome, fds, 3, nfds);
    Fd owned[3] = {Fd(fds[0]), Fd(fds[1]), Fd(fds[2])};
    if (n != static_cast<long>(sizeof out.welcome) || !header_ok(out.welcome.h, MsgType::welcome)) {
        error = n == 0 ? "the daemon closed the connection" : "malformed answer from the daemon";
        return false;
    }
    out.welcome.message[sizeof out.welcome.message - 1] = '\0';
    if (out.welcome.status != 0) {
        error = std::string("refused: ") + out.welcome.message;
        return false;
    }
    if (nfds != 3 || out.welcome.channel_size != kChannelSize || out.welcome.reply_size != kReplySize ||
        out.welcome.status_size != kStatusSize) {
        error = "the daemon's answer does not match this build";
        return false;
    }
    std::string why;
    out.channel = map_fd(owned[0].get(), kChannelSize, true, why);
    if (out.channel) out.reply = map_fd(owned[1].get(), kReplySize, false, why);
    if (out.reply) out.status = map_fd(owned[2].get(), kStatusSize, false, why);
    if (!out.status) {
        error = why;
        return false;
    }
    const Channel* ch = out.channel.as<Channel>();
    const ReplyPage* rp = out.reply.as<ReplyPage>();
    if (ch->header.magic != kMagic || ch->header.version != kVersion || rp->magic != kMagic ||
        out.status.as<StatusFile>()->header.magic.load(std::memory_order_acquire) != kMagic) {
        error = "the daemon's channel is not initialised";
        return false;
    }
    return true;
}

bool exchange(const std::string& path, const void* msg, std::size_t size, ReplyMsg& reply,
              std::uint64_t deadline_ns, std::string& error) {
    Fd s = connect_socket(path, error);
    if (!s.valid()) return false;
    if (!send_msg(s.get(), msg, size)) {
        error = "cannot send to " + path + ": " + errno_text(errno);
        return false;
    }
    if (!wait_readable(s.get(), deadline_ns)) {
        error = "no answer from " + path + " in time";
        return false;
    }
    int nfds = 0;
    const long n = recv_msg(s.get(), &reply, sizeof reply, nullptr, 0, nfds);
    if (n != static_cast<long>(sizeof reply) || !header_ok(reply.h, MsgType::ack)) {
        error = "malformed answer from " + path;
        return false;
    }
    reply.message[sizeof reply.message - 1] = '\0';
    if (reply.status != 0) {
        error = path + " refused: " + reply.message;
        return false;
    }
    return true;
}

}  // namespace explsched::ksched
