// Who is at the other end of a TCP connection, as far as this host's kernel can tell: for a peer
// socket on this host (loopback, or one of this host's addresses) the uid that owns it, from
// NETLINK_SOCK_DIAG (inet_diag's exact-socket lookup, the data `ss -e` shows). A peer on another
// host is known by its address alone.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/base/fd.hpp"

namespace explsched::daemon {

struct PeerIdentity {
    std::string address;          // numeric, without the port
    std::optional<uint32_t> uid;  // set when the peer socket is on this host
    // The key limits are counted under: "<address>" or "<address>#uid=<uid>".
    std::string key() const;
};

class PeerIdentifier {
public:
    PeerIdentifier();
    // The identity of the peer of a connected TCP socket (never blocks: one netlink round trip).
    PeerIdentity identify(int fd);

private:
    std::optional<uint32_t> socket_uid(const sockaddr_storage& peer, const sockaddr_storage& local);
    Fd netlink_;
};

}  // namespace explsched::daemon
