#define BOOST_TEST_MODULE test_kernel_sched_step_setup
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <system_error>

#include "kernel_sched/kstat_read.hpp"
#include "kernel_sched/step_setup.hpp"

#include <ostream>

namespace explsched::ksched {
std::ostream& operator<<(std::ostream& out, KschedMode m) { return out << to_string(m); }
}  // namespace explsched::ksched

using namespace explsched::ksched;

namespace {

std::string g_intercept;  // a stand-in file in the current test's directory

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/explsched-step-test.XXXXXX";
        path = mkdtemp(tmpl);
        // setup_step only checks the intercept is readable and names it in LD_PRELOAD.
        g_intercept = path + "/libexplsched_intercept.so";
        std::ofstream(g_intercept) << "stand-in\n";
    }
    ~TempDir() {
        // Never leave a daemon behind, even when a check failed half way.
        for (std::uint32_t gpu = 0; gpu < 4; ++gpu) {
            if (pid_t pid = running_kerneld(path, gpu); pid > 0) kill(pid, SIGKILL);
        }
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

StepSetupRequest request(const std::string& runtime, std::uint32_t job, std::uint32_t step,
                         const char* gpus) {
    StepSetupRequest r;
    r.job_id = job;
    r.step_id = step;
    r.cuda_visible_devices = gpus;
    r.mode = KschedMode::enforce;
    r.priority = 2.5;
    r.runtime_dir = runtime;
    r.kerneld_path = EXPLSCHED_KERNELD_PATH;
    r.intercept_path = g_intercept;
    r.kerneld_args = {"--spin-us", "0"};
    return r;
}

StepTeardownRequest teardown(const std::string& runtime, std::uint32_t job, std::uint32_t step,
                             const char* gpus) {
    StepTeardownRequest t;
    t.job_id = job;
    t.step_id = step;
    t.cuda_visible_devices = gpus;
    t.runtime_dir = runtime;
    return t;
}

std::map<std::string, std::string> env_of(const StepEnvironment& e) { return {e.env.begin(), e.env.end()}; }

pid_t dead_pid() {
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    waitpid(pid, nullptr, 0);
    return pid;
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// The daemon is double-forked: once stopped it is gone, or a zombie until its new parent (init,
// or a subreaper in a container) reaps it.
bool stopped(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string ignored_pid, ignored_comm;
    char state = 0;
    if (!(stat >> ignored_pid >> ignored_comm >> state)) return true;
    return state == 'Z' || state == 'X';
}

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

BOOST_AUTO_TEST_CASE(mode_off_does_nothing) {
    TempDir dir;
    StepSetupRequest r = request(dir.path + "/rt", 1, 0, "0");
    r.mode = KschedMode::off;
    auto e = setup_step(r);
    BOOST_REQUIRE(e.ok());
    BOOST_TEST(e->env.empty());
    BOOST_TEST(!exists(dir.path + "/rt"));
}

BOOST_AUTO_TEST_CASE(daemons_are_shared_by_steps_and_stop_with_the_last) {
    TempDir dir;
    const std::string rt = dir.path + "/ksched";
    StepSetupRequest a = request(rt, 7, 0, "0");
    a.current_ld_preload = "/usr/lib/libother.so";
    auto ea = setup_step(a);
    BOOST_REQUIRE_MESSAGE(ea.ok(), (ea.ok() ? std::string() : ea.error().message));
    BOOST_TEST(ea->started == std::vector<bool>{true});
    auto env = env_of(*ea);
    BOOST_TEST(env["LD_PRELOAD"] == g_intercept + ":/usr/lib/libother.so");
    BOOST_TEST(env["EXPLSCHED_KSCHED_MODE"] == "enforce");
    BOOST_TEST(env["EXPLSCHED_KSCHED_ENDPOINTS"] == rt + "/gpu0/kerneld.shm");
    BOOST_TEST(env["EXPLSCHED_KSCHED_PRIORITY"] == "2.5");
    BOOST_TEST(env["EXPLSCHED_KSCHED_JOB"] == "7.0");
    const pid_t gpu0 = running_kerneld(rt, 0);
    BOOST_TEST(gpu0 > 0);
    auto k = read_kstat(rt + "/gpu0/kerneld.shm");
    BOOST_REQUIRE(k.ok());
    BOOST_TEST(k->alive);

    // A batch step of another job on GPUs 0 and 1 reuses GPU 0's daemon and starts GPU 1's.
    auto eb = setup_step(request(rt, 8, 0xfffffffbU, "0,1"));
    BOOST_REQUIRE_MESSAGE(eb.ok(), (eb.ok() ? std::string() : eb.error().message));
    BOOST_TEST(eb->started == (std::vector<bool>{false, true}));
    BOOST_TEST(running_kerneld(rt, 0) == gpu0);
    BOOST_TEST(env_of(*eb)["EXPLSCHED_KSCHED_ENDPOINTS"] ==
               rt + "/gpu0/kerneld.shm:" + rt + "/gpu1/kerneld.shm");
    BOOST_TEST(live_steps(rt, 0).value() == (std::vector<std::string>{"7.0", "8.batch"}));
    BOOST_TEST(find_endpoints(rt).size() == 2u);

    auto ta = teardown_step(teardown(rt, 7, 0, "0"));
    BOOST_REQUIRE(ta.ok());
    BOOST_TEST(ta->daemons_stopped.empty());
    BOOST_TEST(running_kerneld(rt, 0) == gpu0);

    auto tb = teardown_step(teardown(rt, 8, 0xfffffffbU, "0,1"));
    BOOST_REQUIRE(tb.ok());
    BOOST_TEST(tb->daemons_stopped == (std::vector<std::uint32_t>{0, 1}));
    BOOST_TEST(running_kerneld(rt, 0) == 0);
    BOOST_TEST(running_kerneld(rt, 1) == 0);
    BOOST_TEST(!exists(rt + "/gpu0/kerneld.shm"));
    BOOST_TEST(stopped(gpu0));
    // Tearing down a step twice (Slurm may call exit hooks again) is harmless.
    BOOST_TEST(teardown_step(teardown(rt, 8, 0xfffffffbU, "0,1")).ok());
}

BOOST_AUTO_TEST_CASE(steps_whose_owner_died_do_not_pin_the_daemon) {
    TempDir dir;
    const std::string rt = dir.path + "/ksched";
    StepSetupRequest crashed = request(rt, 5, 1, "2");
    crashed.owner_pid = dead_pid();  // a slurmstepd that died without teardown
    BOOST_REQUIRE(setup_step(crashed).ok());
    BOOST_REQUIRE(setup_step(request(rt, 6, 0, "2")).ok());
    BOOST_TEST(live_steps(rt, 2).value() == std::vector<std::string>{"6.0"});
    auto t = teardown_step(teardown(rt, 6, 0, "2"));
    BOOST_REQUIRE(t.ok());
    BOOST_TEST(t->daemons_stopped == std::vector<std::uint32_t>{2});
}

BOOST_AUTO_TEST_CASE(bad_requests_are_errors) {
    TempDir dir;
    StepSetupRequest r = request(dir.path, 1, 0, "0");
    r.kerneld_path = "explsched-kerneld";
    BOOST_TEST(setup_step(r).error().message == "kerneld path 'explsched-kerneld' must be absolute");
    r = request(dir.path, 1, 0, "0");
    r.intercept_path = dir.path + "/missing.so";
    BOOST_TEST(setup_step(r).error().message ==
               "cannot read " + dir.path + "/missing.so: No such file or directory");
    r = request(dir.path, 1, 0, "0,1");
    r.mps = true;
    BOOST_TEST(setup_step(r).error().message ==
               "MPS with more than one GPU per step is not supported (CUDA_VISIBLE_DEVICES=0,1)");
    r = request(dir.path, 1, 0, "NoDevFiles");
    BOOST_TEST(!setup_step(r).ok());
    // A daemon that cannot start: the error says where to look, and the step is not registered.
    r = request(dir.path + "/rt", 1, 0, "0");
    r.kerneld_path = "/bin/false";
    r.start_timeout_ms = 200;
    auto e = setup_step(r);
    BOOST_REQUIRE(!e.ok());
    BOOST_TEST(e.error().message ==
               "explsched-kerneld for GPU 0 did not start within 200 ms (/bin/false); see " + dir.path +
                   "/rt/gpu0/kerneld.log");
    BOOST_TEST(live_steps(dir.path + "/rt", 0).value().empty());
}

BOOST_AUTO_TEST_CASE(mps_control_daemon_per_gpu) {
    TempDir dir;
    const std::string rt = dir.path + "/ksched";
    // A stand-in for nvidia-cuda-mps-control that records how it was called.
    const std::string control = dir.path + "/mps-control";
    const std::string log = dir.path + "/mps.log";
    std::ofstream(control)
        << "#!/bin/sh\necho \"args=$* pipe=$CUDA_MPS_PIPE_DIRECTORY gpu=$CUDA_VISIBLE_DEVICES\" >> " << log
        << "\nif [ $# -eq 0 ]; then read cmd; echo \"stdin=$cmd\" >> " << log << "; fi\n";
    chmod(control.c_str(), 0755);
    StepSetupRequest r = request(rt, 9, 0, "3");
    r.mps = true;
    r.mps_control_path = control;
    auto e = setup_step(r);
    BOOST_REQUIRE_MESSAGE(e.ok(), (e.ok() ? std::string() : e.error().message));
    BOOST_TEST(env_of(*e)["CUDA_MPS_PIPE_DIRECTORY"] == rt + "/gpu3/mps/pipe");
    BOOST_REQUIRE(setup_step(request(rt, 10, 0, "3")).ok());  // MPS already up: not started twice
    StepTeardownRequest t = teardown(rt, 9, 0, "3");
    t.mps_control_path = control;
    BOOST_REQUIRE(teardown_step(t).ok());
    t = teardown(rt, 10, 0, "3");
    t.mps_control_path = control;
    BOOST_REQUIRE(teardown_step(t).ok());
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    BOOST_TEST(text.str() == "args=-d pipe=" + rt + "/gpu3/mps/pipe gpu=3\nargs= pipe=" + rt +
                                 "/gpu3/mps/pipe gpu=\nstdin=quit\n");
}

BOOST_AUTO_TEST_SUITE_END()
