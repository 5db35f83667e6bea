#define BOOST_TEST_MODULE test_base_errno_text
#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <string>

#include "core/base/errno_text.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(base_errno_text)

BOOST_AUTO_TEST_CASE(names_the_error) {
    // glibc's texts (the C locale: the test harness sets no LC_MESSAGES catalogue).
    BOOST_TEST(errno_text(ENOENT) == "No such file or directory");
    BOOST_TEST(errno_text(EACCES) == "Permission denied");
    BOOST_TEST(errno_text(EBADF) == "Bad file descriptor");
}

BOOST_AUTO_TEST_CASE(unknown_values_still_give_text) {
    const std::string text = errno_text(99999);
    BOOST_TEST(text.find("99999") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(leaves_errno_alone) {
    errno = EINTR;
    (void)errno_text(ENOENT);
    BOOST_TEST(errno == EINTR);
}

BOOST_AUTO_TEST_SUITE_END()
