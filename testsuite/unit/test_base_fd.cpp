#define BOOST_TEST_MODULE test_base_fd
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "core/base/fd.hpp"

using namespace explsched;

namespace {

// True when `fd` is not an open descriptor of this process.
bool closed(int fd) {
    errno = 0;
    return fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

int open_null() {
    const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    BOOST_REQUIRE(fd >= 0);
    return fd;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(base_fd)

BOOST_AUTO_TEST_CASE(default_is_empty) {
    const Fd f;
    BOOST_TEST(!f.valid());
    BOOST_TEST(f.get() == -1);
}

BOOST_AUTO_TEST_CASE(closes_on_destruction) {
    const int raw = open_null();
    {
        const Fd f(raw);
        BOOST_TEST(f.valid());
        BOOST_TEST(f.get() == raw);
        BOOST_TEST(!closed(raw));
    }
    BOOST_TEST(closed(raw));
}

BOOST_AUTO_TEST_CASE(move_transfers_ownership) {
    const int raw = open_null();
    Fd a(raw);
    Fd b(std::move(a));
    BOOST_TEST(!a.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    BOOST_TEST(b.get() == raw);
    {
        Fd c;
        c = std::move(b);
        BOOST_TEST(!b.valid());  // NOLINT(bugprone-use-after-move)
        BOOST_TEST(c.get() == raw);
        BOOST_TEST(!closed(raw));  // moving closed nothing
    }
    BOOST_TEST(closed(raw));  // only the last owner closed it
}

BOOST_AUTO_TEST_CASE(move_assignment_closes_the_old_descriptor) {
    const int first = open_null();
    const int second = open_null();
    Fd a(first);
    Fd b(second);
    a = std::move(b);
    BOOST_TEST(closed(first));
    BOOST_TEST(a.get() == second);
    BOOST_TEST(!closed(second));
}

BOOST_AUTO_TEST_CASE(release_gives_up_ownership) {
    const int raw = open_null();
    {
        Fd f(raw);
        BOOST_TEST(f.release() == raw);
        BOOST_TEST(!f.valid());
    }
    BOOST_TEST(!closed(raw));  // the destructor left it alone
    BOOST_TEST(::close(raw) == 0);
}

BOOST_AUTO_TEST_CASE(reset_closes_and_takes) {
    const int first = open_null();
    const int second = open_null();
    Fd f(first);
    f.reset(second);
    BOOST_TEST(closed(first));
    BOOST_TEST(f.get() == second);
    f.reset(second);  // the same descriptor again: kept open
    BOOST_TEST(!closed(second));
    f.reset();
    BOOST_TEST(closed(second));
    BOOST_TEST(!f.valid());
}

BOOST_AUTO_TEST_SUITE_END()
