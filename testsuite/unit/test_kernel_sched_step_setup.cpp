#define BOOST_TEST_MODULE test_kernel_sched_step_setup
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "kernel_sched/kerneld.hpp"
#include "kernel_sched/step_setup.hpp"
#include "temp_dir.hpp"

using namespace explsched;
using namespace explsched::ksched;

namespace explsched::ksched {
std::ostream& operator<<(std::ostream& out, KschedMode m) { return out << to_string(m); }
}  // namespace explsched::ksched

namespace {

std::string env_of(const StepEnvironment& e, const std::string& name) {
    for (const auto& [k, v] : e.env)
        if (k == name) return v;
    return "<unset>";
}

// A kerneld for GPU `gpu` under `runtime`, served on its own thread.
struct DaemonThread {
    NullLogger log;
    KernelDaemon daemon;
    std::atomic<bool> stop{false};
    std::thread thread;
    static KerneldConfig config(const std::string& runtime, std::uint32_t gpu) {
        mkdir(gpu_dir(runtime, gpu).c_str(), 0755);
        KerneldConfig c;
        c.socket_path = endpoint_path(runtime, gpu);
        c.gpu_index = gpu;
        return c;
    }
    DaemonThread(const std::string& runtime, std::uint32_t gpu) : daemon(config(runtime, gpu), log) {
        BOOST_REQUIRE(daemon.start().ok());
        thread = std::thread([this] { daemon.run(stop); });
    }
    ~DaemonThread() {
        stop = true;
        thread.join();
        daemon.shutdown();
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_sched_step_setup)

BOOST_AUTO_TEST_CASE(parsers) {
    BOOST_TEST(parse_ksched_mode("enforce").value() == KschedMode::enforce);
    BOOST_TEST(parse_ksched_mode("on").error().message ==
               "kernel scheduling mode 'on': expected off, observe or enforce");
    BOOST_TEST(parse_visible_devices("0, 3").value() == (std::vector<std::uint32_t>{0, 3}));
    BOOST_TEST(
        parse_visible_devices("GPU-8f2c").error().message ==
        "CUDA_VISIBLE_DEVICES item 'GPU-8f2c' is not a GPU index (UUIDs and MIG devices are not supported)");
    BOOST_TEST(parse_visible_devices("1,1").error().message == "CUDA_VISIBLE_DEVICES lists GPU 1 twice");
    BOOST_TEST(parse_visible_devices(" ").error().message ==
               "CUDA_VISIBLE_DEVICES is empty: the step has no GPU");
    BOOST_TEST(step_name(12, 0xfffffffbU) == "12.batch");
    BOOST_TEST(step_name(12, 3) == "12.3");
}

BOOST_AUTO_TEST_CASE(task_environment) {
    StepEnvRequest r;
    r.job_id = 7;
    r.step_id = 0;
    r.cuda_visible_devices = "1,3";
    r.runtime_dir = "/run/explsched/ksched";
    r.intercept_path = "/usr/lib/libexplsched_intercept.so";
    r.current_ld_preload = "/opt/x.so";
    auto e = step_environment(r);
    BOOST_REQUIRE(e.ok());
    BOOST_TEST(env_of(*e, "LD_PRELOAD") == "/usr/lib/libexplsched_intercept.so:/opt/x.so");
    BOOST_TEST(env_of(*e, "EXPLSCHED_KSCHED_ENDPOINTS") ==
               "/run/explsched/ksched/gpu1/kerneld.sock:/run/explsched/ksched/gpu3/kerneld.sock");
    BOOST_TEST(env_of(*e, "EXPLSCHED_KSCHED_JOB") == "7.0");
    BOOST_TEST(env_of(*e, "EXPLSCHED_KSCHED_PRIORITY") == "<unset>");  // priority never travels in the env
    r.mode = KschedMode::off;
    BOOST_TEST(step_environment(r)->env.empty());
    r.mode = KschedMode::enforce;
    r.intercept_path = "lib.so";
    BOOST_TEST(step_environment(r).error().message == "intercept library path 'lib.so' must be absolute");
}

BOOST_AUTO_TEST_CASE(trusted_directories) {
    TempDir dir;  // /tmp (root, sticky) / explsched-test-XXXXXX (root, 0700)
    const std::string root = dir.path.string();
    BOOST_TEST(check_trusted_dir(root).ok());
    const std::string open = root + "/open";
    mkdir(open.c_str(), 0755);
    chmod(open.c_str(), 0777);
    BOOST_TEST(check_trusted_dir(open).error().message ==
               open + " is writable by group or others (mode 0777)");
    BOOST_TEST(check_trusted_dir(open + "/x").error().message ==
               open + " is writable by group or others (mode 0777)");
    const std::string link = root + "/link";
    BOOST_REQUIRE(symlink(root.c_str(), link.c_str()) == 0);
    BOOST_TEST(check_trusted_dir(link).error().message.find("cannot open " + link) == 0u);
    const std::string theirs = root + "/theirs";
    mkdir(theirs.c_str(), 0755);
    BOOST_REQUIRE(chown(theirs.c_str(), 4242, 4242) == 0);
    BOOST_TEST(check_trusted_dir(theirs).error().message == theirs + " is owned by uid 4242 (expected root)");
    const auto depth = static_cast<std::size_t>(std::count(theirs.begin(), theirs.end(), '/'));
    BOOST_TEST(check_trusted_dir(theirs, depth, 4242).ok());  // the kerneld user's GPU directory
    BOOST_TEST(check_trusted_dir("relative").error().message == "'relative' is not an absolute path");
}

BOOST_AUTO_TEST_CASE(registration_reaches_the_daemon_and_fails_open_without_one) {
    TempDir dir;
    const std::string runtime = dir.path.string() + "/ksched";
    mkdir(runtime.c_str(), 0755);
    DaemonThread gpu0(runtime, 0);
    StepRegistration r;
    r.job_id = 5;
    r.step_id = 0;
    r.uid = 1234;
    r.priority = 42;
    r.cuda_visible_devices = "0,1";  // GPU 1 has no daemon
    r.runtime_dir = runtime;
    const auto start = std::chrono::steady_clock::now();
    auto done = register_step(r);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
            .count();
    BOOST_TEST_MESSAGE("registration took " << ms << " ms");
    BOOST_REQUIRE(done.ok());
    BOOST_TEST(done->registered == (std::vector<std::uint32_t>{0}));
    BOOST_REQUIRE(done->errors.size() == 1u);
    BOOST_TEST(done->errors[0].find("GPU 1: ") == 0u);
    BOOST_TEST(gpu0.daemon.steps() == 1u);
    BOOST_TEST(register_step(r, true).ok());
    BOOST_TEST(gpu0.daemon.steps() == 0u);
    // A runtime directory someone else could write: refused, the step runs unmanaged.
    chmod(runtime.c_str(), 0777);
    BOOST_TEST(register_step(r).error().message.find("runtime_dir " + runtime + " is not trusted: ") == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
