#include "daemon/peer_identity.hpp"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>

namespace explsched::daemon {

namespace {

// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as the IPv4 address it is.
sockaddr_storage unmapped(const sockaddr_storage& addr) {
    if (addr.ss_family != AF_INET6) return addr;
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    if (!IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) return addr;
    sockaddr_storage out{};
    auto* a4 = reinterpret_cast<sockaddr_in*>(&out);
    a4->sin_family = AF_INET;
    a4->sin_port = a6->sin6_port;
    std::memcpy(&a4->sin_addr, &a6->sin6_addr.s6_addr[12], 4);
    return out;
}

// Address (network order words) and port (network order) of a socket address.
void fill(const sockaddr_storage& addr, __be32 words[4], __be16& port) {
    if (addr.ss_family == AF_INET) {
        const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
        std::memcpy(words, &a->sin_addr, 4);
        port = a->sin_port;
    } else {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
        std::memcpy(words, &a->sin6_addr, 16);
        port = a->sin6_port;
    }
}

std::string numeric(const sockaddr_storage& addr) {
    char host[INET6_ADDRSTRLEN] = "?";
    if (addr.ss_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr, host, sizeof host);
    else if (addr.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr, host, sizeof host);
    return host;
}

}  // namespace

std::string PeerIdentity::key() const { return uid ? address + "#uid=" + std::to_string(*uid) : address; }

PeerIdentifier::PeerIdentifier()
    : netlink_(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) {
    if (!netlink_.valid()) return;
    // The kernel answers at once; the bound only guards the event loop against the unexpected.
    timeval tv{0, 100000};
    setsockopt(netlink_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

PeerIdentity PeerIdentifier::identify(int fd) {
    sockaddr_storage peer{}, local{};
    socklen_t plen = sizeof peer, llen = sizeof local;
    PeerIdentity id;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &plen) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&local), &llen) != 0) {
        id.address = "?";
        return id;
    }
    peer = unmapped(peer);
    local = unmapped(local);
    id.address = numeric(peer);
    if (peer.ss_family == local.ss_family) id.uid = socket_uid(peer, local);
    return id;
}

// Asks for the one socket whose local end is the peer's address and whose remote end is ours:
// the client's own socket, which exists only if the client runs on this host.
std::optional<uint32_t> PeerIdentifier::socket_uid(const sockaddr_storage& peer,
                                                   const sockaddr_storage& local) {
    if (!netlink_.valid()) return std::nullopt;
    struct {
        nlmsghdr nlh;
        inet_diag_req_v2 req;
    } msg{};
    msg.nlh.nlmsg_len = sizeof msg;
    msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    msg.nlh.nlmsg_flags = NLM_F_REQUEST;
    msg.req.sdiag_family = static_cast<__u8>(peer.ss_family);
    msg.req.sdiag_protocol = IPPROTO_TCP;
    msg.req.idiag_states = ~0U;
    fill(peer, msg.req.id.idiag_src, msg.req.id.idiag_sport);
    fill(local, msg.req.id.idiag_dst, msg.req.id.idiag_dport);
    msg.req.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    msg.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (sendto(netlink_.get(), &msg, sizeof msg, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) !=
        static_cast<ssize_t>(sizeof msg))
        return std::nullopt;
    alignas(nlmsghdr) char buf[8192];
    const ssize_t n = recv(netlink_.get(), buf, sizeof buf, 0);
    if (n <= 0) return std::nullopt;
    std::size_t left = static_cast<std::size_t>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
        if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_DONE) return std::nullopt;  // not here
        if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg)))
            continue;
        const auto* d = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
        return d->idiag_uid;
    }
    return std::nullopt;
}

}  // namespace explsched::daemon
