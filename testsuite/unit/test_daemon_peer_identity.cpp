#define BOOST_TEST_MODULE daemon_peer_identity
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/fd.hpp"
#include "daemon/peer_identity.hpp"

using namespace explsched;
using namespace explsched::daemon;

namespace {

// A listening socket on 127.0.0.1 (any port); returns its port.
Fd listener(uint16_t& port) {
    Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    BOOST_TEST_REQUIRE(fd.valid());
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_TEST_REQUIRE(bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    BOOST_TEST_REQUIRE(listen(fd.get(), 4) == 0);
    socklen_t len = sizeof a;
    BOOST_TEST_REQUIRE(getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port = ntohs(a.sin_port);
    return fd;
}

Fd connect_to(uint16_t port) {
    Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    BOOST_TEST_REQUIRE(connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    return fd;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(daemon_peer_identity)

BOOST_AUTO_TEST_CASE(a_loopback_peer_is_known_by_its_uid) {
    uint16_t port = 0;
    Fd l = listener(port);
    Fd c = connect_to(port);
    Fd a(accept4(l.get(), nullptr, nullptr, SOCK_CLOEXEC));
    BOOST_TEST_REQUIRE(a.valid());
    PeerIdentifier ids;
    const PeerIdentity who = ids.identify(a.get());
    BOOST_TEST(who.address == "127.0.0.1");
    BOOST_TEST_REQUIRE(who.uid.has_value(), "NETLINK_SOCK_DIAG gave no uid for a loopback peer");
    BOOST_TEST(*who.uid == static_cast<uint32_t>(geteuid()));
    BOOST_TEST(who.key() == "127.0.0.1#uid=" + std::to_string(geteuid()));
}

BOOST_AUTO_TEST_CASE(the_uid_is_the_peer_sockets_owner_not_ours) {
    if (geteuid() != 0) return;  // needs another uid to connect as
    uint16_t port = 0;
    Fd l = listener(port);
    const pid_t pid = fork();
    BOOST_TEST_REQUIRE(pid >= 0);
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
        Fd c(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        if (connect(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) _exit(4);
        char b;
        [[maybe_unused]] ssize_t n = read(c.get(), &b, 1);  // until the parent closes
        _exit(0);
    }
    Fd a(accept4(l.get(), nullptr, nullptr, SOCK_CLOEXEC));
    BOOST_TEST_REQUIRE(a.valid());
    PeerIdentifier ids;
    const PeerIdentity who = ids.identify(a.get());
    a.reset();
    int status = 0;
    waitpid(pid, &status, 0);
    BOOST_TEST_REQUIRE(who.uid.has_value());
    BOOST_TEST(*who.uid == 65534u);
}

BOOST_AUTO_TEST_CASE(a_non_socket_gives_no_identity) {
    PeerIdentifier ids;
    int p[2];
    BOOST_TEST_REQUIRE(pipe(p) == 0);
    const PeerIdentity who = ids.identify(p[0]);
    close(p[0]);
    close(p[1]);
    BOOST_TEST(!who.uid.has_value());
    BOOST_TEST(who.address == "?");
}

BOOST_AUTO_TEST_SUITE_END()
