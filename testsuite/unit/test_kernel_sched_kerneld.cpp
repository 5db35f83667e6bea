#define BOOST_TEST_MODULE test_kernel_sched_kerneld
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernel_sched/kerneld.hpp"
#include "kernel_sched/kstat_read.hpp"

using namespace explsched;
using namespace explsched::ksched;

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/explsched-kerneld-test.XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

Result<KerneldConfig> parse(std::vector<std::string> args) {
    std::vector<char*> argv;
    static char prog[] = "explsched-kerneld";
    argv.push_back(prog);
    for (std::string& a : args) argv.push_back(a.data());
    return parse_kerneld_args(static_cast<int>(argv.size()), argv.data());
}

// Plays the intercept's part: claims a slot and posts records.
struct FakeClient {
    ClientSlot* slot;
    ClientSlot& s() { return *slot; }
    FakeClient(Segment* seg, int index, const char* job, double priority) : slot(&seg->slots[index]) {
        s().state.store(static_cast<std::uint32_t>(SlotState::claiming));
        s().pid = getpid();
        s().mode = ClientMode::enforce;
        s().priority = priority;
        copy_field(s().job, sizeof s().job, job);
        s().generation.fetch_add(1);
        s().state.store(static_cast<std::uint32_t>(SlotState::active));
    }
    void function(std::uint32_t index, const char* name, std::uint32_t regs) {
        FuncInfo& f = s().funcs[index];
        f.regs = regs;
        f.static_smem = 0;
        f.max_threads = 1024;
        copy_field(f.name, sizeof f.name, name);
        f.ready.store(1);
    }
    // Returns the sequence (ring position + 1) the daemon grants against.
    std::uint64_t post(RecordType type, std::uint32_t func, std::uint32_t blocks, std::uint64_t arg = 0) {
        std::uint64_t pos = 0;
        Record* r = ring_claim(s(), pos);
        BOOST_REQUIRE(r != nullptr);
        r->type = type;
        r->entry = Entry::launch_kernel;
        r->flags = 0;
        r->func_index = func;
        r->grid_x = blocks;
        r->grid_y = r->grid_z = 1;
        r->block_x = 1024;
        r->block_y = 1;
        r->block_z = 1;
        r->smem_dynamic = 0;
        r->stream = 0;
        r->arg = arg;
        r->time_ns = type == RecordType::complete ? monotonic_ns() : 0;
        ring_publish(*r, pos);
        return pos + 1;
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_sched_kerneld)

BOOST_AUTO_TEST_CASE(options_parse_and_errors_name_the_option) {
    auto c = parse({"--endpoint", "/run/x/gpu0.shm", "--gpu=2", "--sm-count", "80", "--budget-us", "250",
                    "--bw-cap", "0.9", "--spin-us", "0"});
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->endpoint == "/run/x/gpu0.shm");
    BOOST_TEST(c->gpu_index == 2u);
    BOOST_TEST(c->limits.sm_count == 80u);
    BOOST_TEST(c->admission.be_budget_ns == 250000u);
    BOOST_TEST(c->admission.bw_cap == 0.9);
    BOOST_TEST(c->spin_ns == 0u);
    BOOST_TEST(parse({}).error().message == "option --endpoint is required");
    BOOST_TEST(parse({"--endpoint", "e", "--frobnicate", "1"}).error().message ==
               "unknown option --frobnicate");
    BOOST_TEST(parse({"--endpoint", "e", "--sm-count", "x"}).error().message ==
               "option --sm-count: 'x' is not an integer >= 1");
    BOOST_TEST(parse({"--endpoint", "e", "--bw-cap", "7"}).error().message ==
               "option --bw-cap: '7' is not a number in (0.000000, 4.000000]");
    BOOST_TEST(parse({"--endpoint", "e", "--profiles", "/nonexistent"}).error().message ==
               "option --profiles: '/nonexistent' does not exist");
    BOOST_TEST(parse({"--endpoint"}).error().message == "option --endpoint needs a value");
    // A directory of profiles expands to its .csv files.
    TempDir dir;
    std::ofstream(dir.path + "/a.csv") << "x";
    std::ofstream(dir.path + "/b.csv") << "x";
    std::ofstream(dir.path + "/notes.txt") << "x";
    const auto listed = parse({"--endpoint", "e", "--profiles", dir.path});
    BOOST_REQUIRE(listed.ok());
    BOOST_TEST(listed->profiles == (std::vector<std::string>{dir.path + "/a.csv", dir.path + "/b.csv"}));
    BOOST_TEST(parse({"--endpoint", "e", "--profiles", dir.path + "/notes.txt"}).ok());
}

BOOST_AUTO_TEST_CASE(daemon_holds_best_effort_until_the_protected_kernel_completes) {
    TempDir dir;
    KerneldConfig config;
    config.endpoint = dir.path + "/gpu0.shm";
    config.stats_file = dir.path + "/stats.json";
    config.limits.sm_count = 132;
    config.profiles = {dir.path + "/hp.csv"};
    std::ofstream(config.profiles[0])
        << "Name,Profile,Memory_footprint,SM_usage,Duration\nhp_gemm_kernel,1,0,80,50000\n";
    NullLogger log;
    KernelDaemon daemon(config, log);
    BOOST_REQUIRE(daemon.start().ok());
    Segment* seg = daemon.segment();

    FakeClient hp(seg, 0, "10.0", 10.0);
    FakeClient be(seg, 1, "11.0", 1.0);
    hp.function(0, "hp_gemm_kernel", 32);
    be.function(0, "be_elementwise_kernel", 32);
    std::uint64_t now = monotonic_ns();
    BOOST_TEST(!daemon.poll_once(now));      // adopts both clients; nothing posted yet
    BOOST_TEST(hp.s().bypass.load() == 1u);  // protected: launches without waiting
    BOOST_TEST(be.s().bypass.load() == 0u);

    // 264 blocks of 1024 threads with 32 registers: 2 per SM, the whole GPU.
    const std::uint64_t hp_seq = hp.post(RecordType::started, 0, 264);
    const std::uint64_t be_seq = be.post(RecordType::request, 0, 264);
    BOOST_TEST(daemon.poll_once(now += 1000));
    BOOST_TEST(be.s().granted_upto.load() == 0u);  // held
    BOOST_TEST(daemon.poll_once(now += 1000) == false);
    BOOST_TEST(be.s().granted_upto.load() == 0u);

    hp.post(RecordType::complete, kUnknownFunc, 0, hp_seq);
    BOOST_TEST(daemon.poll_once(now = monotonic_ns()));
    BOOST_TEST(be.s().granted_upto.load() == be_seq);
    BOOST_TEST(be.s().grant_futex.load() >= 1u);

    // Statistics: published for kstat, written as JSON at shutdown.
    daemon.poll_once(now + 100'000'000);
    auto k = read_kstat(config.endpoint);
    BOOST_REQUIRE(k.ok());
    BOOST_TEST(k->alive);
    BOOST_REQUIRE(k->jobs.size() == 2u);
    BOOST_TEST(k->jobs[1].job == "11.0");
    BOOST_TEST(k->jobs[1].held == 1u);
    BOOST_TEST(k->jobs[1].admitted == 1u);
    BOOST_TEST(k->jobs[0].held == 0u);
    BOOST_TEST(k->clients_active == 2u);
    daemon.shutdown();
    BOOST_TEST(access(config.endpoint.c_str(), F_OK) != 0);  // new clients must not attach
    std::ifstream in(config.stats_file);
    const auto stats = nlohmann::json::parse(in);
    BOOST_TEST(stats["profiles"]["imported_names"].get<int>() > 0);
    BOOST_REQUIRE(stats["jobs"].size() == 2u);
    BOOST_TEST(stats["jobs"][1]["by_entry"]["cuLaunchKernel"].get<int>() == 1);
    BOOST_TEST(stats["jobs"][1]["wait_us_max"].get<double>() > 0.0);
}

BOOST_AUTO_TEST_CASE(start_reports_bad_profiles_and_paths) {
    TempDir dir;
    NullLogger log;
    KerneldConfig config;
    config.endpoint = dir.path + "/gpu0.shm";
    const std::string bad = dir.path + "/bad.csv";
    std::ofstream(bad) << "Name,Profile,Memory_footprint,SM_usage,Duration\nConv,7,0,1,5\n";
    config.profiles = {bad};
    KernelDaemon a(config, log);
    auto s = a.start();
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().message == bad + ":2: field 'Profile': '7' is not one of -1, 0, 1");
    config.profiles.clear();
    config.endpoint = dir.path + "/no/such/dir/gpu0.shm";
    KernelDaemon b(config, log);
    auto t = b.start();
    BOOST_REQUIRE(!t.ok());
    BOOST_TEST(t.error().message.find("cannot create " + dir.path + "/no/such/dir/gpu0.shm.tmp.") == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
