// The socket side of the kerneld protocol (ksched_shm.hpp): bounded, non-blocking helpers shared
// by the intercept (client hello), the step setup (registrations, as root in slurmstepd) and the
// daemon. Every wait has a deadline; nothing here raises or allocates on a fast path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/fd.hpp"
#include "kernel_sched/ksched_shm.hpp"

namespace explsched::ksched {

// Sends one message (and up to 3 descriptors) without blocking; false when it could not go now.
bool send_msg(int fd, const void* data, std::size_t size, const int* fds = nullptr, int nfds = 0);
// Receives one message without blocking. Returns its length (0: peer closed; -1: nothing now or
// an error, see errno). Descriptors beyond `max_fds` and any on a message that carries none are
// closed; received descriptors are close-on-exec.
long recv_msg(int fd, void* data, std::size_t size, int* fds, int max_fds, int& nfds);
// Waits until `fd` is readable or `deadline_ns` (CLOCK_MONOTONIC) passes.
bool wait_readable(int fd, std::uint64_t deadline_ns);
// Connects a non-blocking SOCK_SEQPACKET socket to `path` (O_CLOEXEC). Invalid Fd on failure.
Fd connect_socket(const std::string& path, std::string& error);

// Client side of the hello exchange, in two phases so a single-threaded test can run the daemon
// between them.
bool client_begin(const std::string& path, const HelloMsg& hello, Fd& sock, std::string& error);
struct ClientAttach {
    Mapping channel;  // read-write
    Mapping reply;    // read-only
    Mapping status;   // read-only
    ReplyMsg welcome{};
};
bool client_finish(int sock, std::uint64_t deadline_ns, ClientAttach& out, std::string& error);

// One request/reply exchange (registrations): connect, send, wait for the ack until the deadline.
bool exchange(const std::string& path, const void* msg, std::size_t size, ReplyMsg& reply,
              std::uint64_t deadline_ns, std::string& error);

}  // namespace explsched::ksched
