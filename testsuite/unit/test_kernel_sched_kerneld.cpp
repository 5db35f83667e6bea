#define BOOST_TEST_MODULE test_kernel_sched_kerneld
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernel_sched/kerneld.hpp"
#include "kernel_sched/ksched_socket.hpp"
#include "kernel_sched/kstat_read.hpp"
#include "temp_dir.hpp"

using namespace explsched;
using namespace explsched::ksched;

namespace {

Result<KerneldConfig> parse(std::vector<std::string> args) {
    std::vector<char*> argv;
    static char prog[] = "explsched-kerneld";
    argv.push_back(prog);
    for (std::string& a : args) argv.push_back(a.data());
    return parse_kerneld_args(static_cast<int>(argv.size()), argv.data());
}

// Plays the intercept's part over the real socket, one phase at a time (the daemon runs in
// between on this thread).
struct FakeClient {
    Fd sock;
    ClientAttach a;
    Channel& ch() { return *a.channel.as<Channel>(); }
    const ReplyPage& reply() { return *a.reply.as<ReplyPage>(); }
    FakeClient(KernelDaemon& d, const std::string& path, const char* job,
               ClientMode mode = ClientMode::enforce) {
        HelloMsg hello{};
        init_header(hello.h, MsgType::hello);
        hello.mode = mode;
        copy_field(hello.job, sizeof hello.job, job);
        std::string error;
        BOOST_REQUIRE_MESSAGE(client_begin(path, hello, sock, error), error);
        d.service_sockets(0);
        BOOST_REQUIRE_MESSAGE(client_finish(sock.get(), monotonic_ns() + 1000000000ull, a, error), error);
    }
    void function(std::uint32_t index, const char* name, std::uint32_t regs) {
        FuncInfo& f = ch().funcs[index];
        f.regs = regs;
        f.static_smem = 0;
        f.max_threads = 1024;
        copy_field(f.name, sizeof f.name, name);
        f.ready.store(1);
    }
    // Returns the sequence (ring position + 1) the daemon grants against.
    std::uint64_t post(RecordType type, std::uint32_t func, std::uint32_t blocks, std::uint64_t arg = 0,
                       std::uint32_t block_z = 1) {
        std::uint64_t pos = 0;
        Record* r = ring_claim(ch(), pos);
        BOOST_REQUIRE(r != nullptr);
        RecordBody& b = r->body;
        b.type = type;
        b.entry = Entry::launch_kernel;
        b.flags = 0;
        b.func_index = func;
        b.grid_x = blocks;
        b.grid_y = b.grid_z = 1;
        b.block_x = 1024;
        b.block_y = 1;
        b.block_z = block_z;
        b.smem_dynamic = 0;
        b.stream = 0;
        b.arg = arg;
        b.time_ns = type == RecordType::complete ? monotonic_ns() : 0;
        ring_publish(*r, pos);
        return pos + 1;
    }
};

// A registrar's request, answered by the daemon on this thread.
int registrar(KernelDaemon& d, const std::string& path, MsgType type, const char* job, std::uint32_t uid,
              double priority) {
    RegisterMsg msg{};
    init_header(msg.h, type);
    msg.uid = uid;
    msg.owner_pid = getpid();
    msg.priority = priority;
    copy_field(msg.job, sizeof msg.job, job);
    std::string error;
    Fd s = connect_socket(path, error);
    BOOST_REQUIRE_MESSAGE(s.valid(), error);
    BOOST_REQUIRE(send_msg(s.get(), &msg, sizeof msg));
    d.service_sockets(0);
    ReplyMsg reply{};
    int nfds = 0;
    BOOST_REQUIRE(wait_readable(s.get(), monotonic_ns() + 1000000000ull));
    BOOST_REQUIRE(recv_msg(s.get(), &reply, sizeof reply, nullptr, 0, nfds) ==
                  static_cast<long>(sizeof reply));
    return reply.status;
}

KerneldConfig config_in(const TempDir& dir) {
    KerneldConfig config;
    config.socket_path = (dir.path / "kerneld.sock").string();
    config.stats_file = (dir.path / "stats.json").string();
    config.limits.sm_count = 132;
    return config;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_sched_kerneld)

BOOST_AUTO_TEST_CASE(options_parse_and_errors_name_the_option) {
    auto c = parse({"--socket", "/run/x/gpu0/kerneld.sock", "--gpu=2", "--sm-count", "80", "--budget-us",
                    "250", "--bw-cap", "0.9", "--spin-us", "0", "--user", "svc", "--registrar-uid", "64030"});
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->socket_path == "/run/x/gpu0/kerneld.sock");
    BOOST_TEST(c->gpu_index == 2u);
    BOOST_TEST(c->limits.sm_count == 80u);
    BOOST_TEST(c->admission.be_budget_ns == 250000u);
    BOOST_TEST(c->admission.bw_cap == 0.9);
    BOOST_TEST(c->spin_ns == 0u);
    BOOST_TEST(c->user == "svc");
    BOOST_TEST(c->registrar_uids == (std::vector<std::uint32_t>{0, 64030}));
    BOOST_TEST(parse({}).error().message == "option --socket is required");
    BOOST_TEST(parse({"--socket", "rel"}).error().message ==
               "option --socket: 'rel' is not an absolute path");
    BOOST_TEST(parse({"--socket", "/e", "--frobnicate", "1"}).error().message ==
               "unknown option --frobnicate");
    BOOST_TEST(parse({"--socket", "/e", "--sm-count", "x"}).error().message ==
               "option --sm-count: 'x' is not an integer >= 1");
    BOOST_TEST(parse({"--socket", "/e", "--bw-cap", "7"}).error().message ==
               "option --bw-cap: '7' is not a number in (0.000000, 4.000000]");
    BOOST_TEST(parse({"--socket", "/e", "--profiles", "/nonexistent"}).error().message ==
               "option --profiles: '/nonexistent' does not exist");
    BOOST_TEST(parse({"--socket"}).error().message == "option --socket needs a value");
    TempDir dir;
    std::ofstream(dir.path / "a.csv") << "x";
    std::ofstream(dir.path / "b.csv") << "x";
    std::ofstream(dir.path / "notes.txt") << "x";
    const auto listed = parse({"--socket", "/e", "--profiles", dir.path.string()});
    BOOST_REQUIRE(listed.ok());
    BOOST_TEST(listed->profiles ==
               (std::vector<std::string>{(dir.path / "a.csv").string(), (dir.path / "b.csv").string()}));
}

BOOST_AUTO_TEST_CASE(cgroup_names_the_slurm_job) {
    BOOST_TEST(*cgroup_job("0::/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0\n") == 1234u);
    BOOST_TEST(*cgroup_job("4:memory:/slurm/uid_1000/job_77/step_batch\n") == 77u);
    BOOST_TEST(!cgroup_job("0::/user.slice/user-1000.slice/session-3.scope\n").has_value());
    BOOST_TEST(!cgroup_job("0::/job_x\n").has_value());
}

BOOST_AUTO_TEST_CASE(daemon_holds_best_effort_until_the_protected_kernel_completes) {
    TempDir dir;
    KerneldConfig config = config_in(dir);
    config.profiles = {(dir.path / "hp.csv").string()};
    std::ofstream(config.profiles[0])
        << "Name,Profile,Memory_footprint,SM_usage,Duration\nhp_gemm_kernel,1,0,80,50000\n";
    NullLogger log;
    KernelDaemon daemon(config, log);
    BOOST_REQUIRE(daemon.start().ok());
    // Priorities come from registrations only (this test runs as root: a registrar).
    BOOST_TEST(registrar(daemon, config.socket_path, MsgType::register_step, "10.0", getuid(), 10.0) == 0);
    BOOST_TEST(registrar(daemon, config.socket_path, MsgType::register_step, "11.0", getuid(), 1.0) == 0);
    BOOST_TEST(daemon.steps() == 2u);

    FakeClient hp(daemon, config.socket_path, "10.0");
    FakeClient be(daemon, config.socket_path, "11.0");
    BOOST_TEST(hp.a.welcome.priority == 10.0);
    BOOST_TEST(be.a.welcome.priority == 1.0);
    hp.function(0, "hp_gemm_kernel", 32);
    be.function(0, "be_elementwise_kernel", 32);
    std::uint64_t now = monotonic_ns();
    BOOST_TEST(!daemon.poll_once(now));
    BOOST_TEST(hp.reply().bypass.load() == 1u);  // protected: launches without waiting
    BOOST_TEST(be.reply().bypass.load() == 0u);

    // 264 blocks of 1024 threads with 32 registers: 2 per SM, the whole GPU.
    const std::uint64_t hp_seq = hp.post(RecordType::started, 0, 264);
    const std::uint64_t be_seq = be.post(RecordType::request, 0, 264);
    BOOST_TEST(daemon.poll_once(now += 1000));
    BOOST_TEST(be.reply().granted_upto.load() == 0u);  // held
    BOOST_TEST(daemon.poll_once(now += 1000) == false);
    BOOST_TEST(be.reply().granted_upto.load() == 0u);

    hp.post(RecordType::complete, kUnknownFunc, 0, hp_seq);
    BOOST_TEST(daemon.poll_once(now = monotonic_ns()));
    BOOST_TEST(be.reply().granted_upto.load() == be_seq);
    BOOST_TEST(be.reply().grant_futex.load() >= 1u);

    daemon.poll_once(now + 100'000'000);
    auto k = read_kstat(config.socket_path);
    BOOST_REQUIRE(k.ok());
    BOOST_TEST(k->alive);
    BOOST_REQUIRE(k->jobs.size() == 2u);
    BOOST_TEST(k->jobs[1].job == "11.0");
    BOOST_TEST(k->jobs[1].held == 1u);
    BOOST_TEST(k->jobs[1].admitted == 1u);
    BOOST_TEST(k->jobs[0].held == 0u);
    BOOST_TEST(k->clients_active == 2u);
    daemon.shutdown();
    BOOST_TEST(access(config.socket_path.c_str(), F_OK) != 0);  // new clients must not connect
    std::ifstream in(config.stats_file);
    const auto stats = nlohmann::json::parse(in);
    BOOST_TEST(stats["profiles"]["imported_names"].get<int>() > 0);
    BOOST_REQUIRE(stats["jobs"].size() == 2u);
    BOOST_TEST(stats["jobs"][1]["by_entry"]["cuLaunchKernel"].get<int>() == 1);
    BOOST_TEST(stats["jobs"][1]["wait_us_max"].get<double>() > 0.0);
}

BOOST_AUTO_TEST_CASE(a_client_cannot_resize_its_channel_or_write_its_reply_page) {
    TempDir dir;
    KerneldConfig config = config_in(dir);
    NullLogger log;
    KernelDaemon daemon(config, log);
    BOOST_REQUIRE(daemon.start().ok());
    HelloMsg hello{};
    init_header(hello.h, MsgType::hello);
    hello.mode = ClientMode::enforce;
    Fd sock;
    std::string error;
    BOOST_REQUIRE(client_begin(config.socket_path, hello, sock, error));
    daemon.service_sockets(0);
    ReplyMsg welcome{};
    int fds[3] = {-1, -1, -1};
    int nfds = 0;
    BOOST_REQUIRE(wait_readable(sock.get(), monotonic_ns() + 1000000000ull));
    BOOST_REQUIRE(recv_msg(sock.get(), &welcome, sizeof welcome, fds, 3, nfds) > 0);
    BOOST_REQUIRE(nfds == 3);
    const Fd channel(fds[0]), reply(fds[1]), status(fds[2]);
    BOOST_TEST(ftruncate(channel.get(), 0) == -1);  // F_SEAL_SHRINK: no SIGBUS for anyone
    BOOST_TEST(errno == EPERM);
    BOOST_TEST(ftruncate(channel.get(), 1 << 30) == -1);  // F_SEAL_GROW
    BOOST_TEST(ftruncate(reply.get(), 0) == -1);
    BOOST_TEST(mmap(nullptr, kReplySize, PROT_READ | PROT_WRITE, MAP_SHARED, reply.get(), 0) == MAP_FAILED);
    BOOST_TEST(errno == EPERM);  // F_SEAL_FUTURE_WRITE: read-only for the client
    BOOST_TEST(write(reply.get(), "x", 1) == -1);
    void* ro = mmap(nullptr, kReplySize, PROT_READ, MAP_SHARED, reply.get(), 0);
    BOOST_REQUIRE(ro != MAP_FAILED);
    BOOST_TEST(mprotect(ro, kReplySize, PROT_READ | PROT_WRITE) == -1);
    munmap(ro, kReplySize);
    BOOST_TEST(fcntl(channel.get(), F_ADD_SEALS, F_SEAL_WRITE) == -1);  // F_SEAL_SEAL
    BOOST_TEST(write(status.get(), "x", 1) == -1);                      // read-only descriptor
    BOOST_TEST(ftruncate(status.get(), 0) == -1);
    BOOST_TEST(daemon.clients() == 1u);
    sock.reset();  // hang-up: the client is gone
    daemon.service_sockets(10'000'000);
    BOOST_TEST(daemon.clients() == 0u);
}

BOOST_AUTO_TEST_CASE(absurd_records_are_refused_and_the_daemon_keeps_serving) {
    TempDir dir;
    KerneldConfig config = config_in(dir);
    NullLogger log;
    KernelDaemon daemon(config, log);
    BOOST_REQUIRE(daemon.start().ok());
    FakeClient bad(daemon, config.socket_path, "66.0");
    FuncInfo& f = bad.ch().funcs[0];
    f.regs = 0xFFFFFFFFu;
    f.static_smem = 0xFFFFFFFFu;
    f.max_threads = 0;
    std::memset(f.name, 'A', sizeof f.name);  // not terminated
    f.ready.store(1);
    bad.post(RecordType::request, 0, 264, 0, 0xFFFFFFFFu);  // blockDimZ=0xFFFFFFFF: refused
    bad.post(RecordType::request, 0, 0);                    // zero grid: refused
    bad.post(RecordType::request, 4000, 1);                 // function index beyond the table
    bad.post(RecordType::request, 0, 0xFFFFFFFFu);          // grid beyond CUDA's limit
    bad.post(RecordType::request, 0, 264);                  // huge registers: clamped, admitted
    std::uint64_t pos = 0;
    Record* r = ring_claim(bad.ch(), pos);
    std::memset(static_cast<void*>(&r->body), 0xFF, sizeof r->body);  // garbage type
    ring_publish(*r, pos);
    std::uint64_t now = monotonic_ns();
    BOOST_TEST(daemon.poll_once(now));
    BOOST_TEST(daemon.refused() == 5u);
    daemon.poll_once(now + 100'000'000);
    auto k = read_kstat(config.socket_path);
    BOOST_REQUIRE(k.ok());
    BOOST_REQUIRE(k->jobs.size() == 1u);
    BOOST_TEST(k->jobs[0].refused == 5u);
    BOOST_TEST(k->jobs[0].launches == 1u);
}

BOOST_AUTO_TEST_CASE(priority_only_from_a_matching_registration) {
    TempDir dir;
    KerneldConfig config = config_in(dir);
    config.registrar_uids = {0};
    NullLogger log;
    KernelDaemon daemon(config, log);
    BOOST_REQUIRE(daemon.start().ok());
    // The step belongs to another uid: a client of ours naming it gets the lowest priority.
    BOOST_TEST(registrar(daemon, config.socket_path, MsgType::register_step, "20.0", getuid() + 4242, 99.0) ==
               0);
    FakeClient thief(daemon, config.socket_path, "20.0");
    BOOST_TEST(thief.a.welcome.priority == kLowestPriority);
    FakeClient unnamed(daemon, config.socket_path, "no-such-step");
    BOOST_TEST(unnamed.a.welcome.priority == kLowestPriority);
    // Registered for our uid: the registered priority, also for a client that came first.
    BOOST_TEST(registrar(daemon, config.socket_path, MsgType::register_step, "no-such-step", getuid(), 7.0) ==
               0);
    BOOST_TEST(unnamed.reply().priority == 7.0);
    BOOST_TEST(registrar(daemon, config.socket_path, MsgType::unregister_step, "no-such-step", getuid(), 0) ==
               0);
    BOOST_TEST(unnamed.reply().priority == kLowestPriority);
}

BOOST_AUTO_TEST_CASE(start_reports_bad_profiles_and_paths) {
    TempDir dir;
    NullLogger log;
    KerneldConfig config = config_in(dir);
    const std::string bad = (dir.path / "bad.csv").string();
    std::ofstream(bad) << "Name,Profile,Memory_footprint,SM_usage,Duration\nConv,7,0,1,5\n";
    config.profiles = {bad};
    KernelDaemon a(config, log);
    auto s = a.start();
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().message == bad + ":2: field 'Profile': '7' is not one of -1, 0, 1");
    config.profiles.clear();
    config.socket_path = (dir.path / "no/such/dir/kerneld.sock").string();
    config.status_file.clear();
    KernelDaemon b(config, log);
    auto t = b.start();
    BOOST_REQUIRE(!t.ok());
    BOOST_TEST(t.error().message.find("cannot create " +
                                      (dir.path / "no/such/dir/kerneld.status.tmp.").string()) == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
