#define BOOST_TEST_MODULE daemon_daemon_util
#include <boost/test/unit_test.hpp>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "daemon/daemon_util.hpp"
#include "temp_dir.hpp"

using namespace explsched;
using namespace explsched::daemon;

namespace {

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::string text;
    std::getline(in, text);
    return text;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(daemon_daemon_util)

BOOST_AUTO_TEST_CASE(pid_file_holds_the_pid_and_is_removed) {
    TempDir dir;
    const auto path = dir.path / "x.pid";
    {
        auto pid = PidFile::create(path.string());
        BOOST_TEST_REQUIRE(pid.ok(), (pid.ok() ? "" : pid.error().message));
        BOOST_TEST(slurp(path) == std::to_string(getpid()));
    }
    BOOST_TEST(!std::filesystem::exists(path));
}

BOOST_AUTO_TEST_CASE(a_second_holder_is_refused_with_the_first_pid) {
    TempDir dir;
    const auto path = dir.path / "x.pid";
    auto first = PidFile::create(path.string());
    BOOST_TEST_REQUIRE(first.ok());
    // flock() locks belong to open file descriptions: a second process is what a second
    // explschedd is.
    const pid_t child = fork();
    BOOST_TEST_REQUIRE(child >= 0);
    if (child == 0) {
        auto second = PidFile::create(path.string());
        const bool refused = !second.ok() && second.error().message.find(
                                                 "pid " + std::to_string(getppid())) != std::string::npos;
        _exit(refused ? 0 : 1);
    }
    int status = 0;
    BOOST_TEST_REQUIRE(waitpid(child, &status, 0) == child);
    BOOST_TEST(WIFEXITED(status));
    BOOST_TEST(WEXITSTATUS(status) == 0);
    BOOST_TEST(slurp(path) == std::to_string(getpid()));  // the holder's file is untouched
}

BOOST_AUTO_TEST_CASE(an_unwritable_pid_file_names_its_path) {
    auto pid = PidFile::create("/nonexistent-dir/explschedd.pid");
    BOOST_TEST_REQUIRE(!pid.ok());
    BOOST_TEST(pid.error().message.find("/nonexistent-dir/explschedd.pid") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
