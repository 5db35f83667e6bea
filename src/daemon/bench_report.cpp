// explschedd-bench: sustained reports/s through a real explschedd with real munge credentials.
//
// For each mode it starts a fresh explschedd (fresh database, fsync per commit), runs N client
// threads that each report their own job's curve through libexplsched_report as fast as replies
// come back (one report in flight per client, a fresh munge credential per report, as a training
// loop does), and counts acknowledged reports. Modes, in the same run:
//   group:  explschedd's default group commit (many reports per transaction)
//   single: --max-batch 1, one COMMIT per report (the baseline)
// It then checks that the database holds exactly the acknowledged reports and prints reports/s
// and the ratio. Clients run as root (privileged: no slurmctld needed).
//
// usage: explschedd-bench --explschedd PATH --munge-socket PATH --dir DIR [--clients N]
//                         [--seconds S] [--port P] [--munged-pid PID]
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/report/report_store.hpp"
#include "explsched/report.h"

namespace {

struct Args {
    std::string daemon, munge_socket, dir;
    int clients = 32;
    double seconds = 5.0;
    int port = 0;
    pid_t munged = 0;  // when known, its CPU time is counted too
};

struct Run {
    double rate = 0.0;
    uint64_t acked = 0, in_db = 0, errors = 0;
    std::string first_error;
    std::string stats;                                       // explschedd's final stats line
    double cpu_daemon = 0, cpu_munged = 0, cpu_clients = 0;  // CPU seconds during the timed run
};

// utime + stime of a process, in seconds (0 when it cannot be read).
double process_cpu(pid_t pid) {
    if (pid <= 0) return 0.0;
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    if (close == std::string::npos) return 0.0;
    std::istringstream fields(text.substr(close + 2));
    std::string f;
    double ticks = 0;
    for (int i = 3; i <= 15 && fields >> f; ++i)
        if (i == 14 || i == 15) ticks += std::atof(f.c_str());
    return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double self_cpu() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

[[noreturn]] void die(const std::string& why) {
    std::fprintf(stderr, "explschedd-bench: %s\n", why.c_str());
    std::exit(1);
}

pid_t start_daemon(const Args& a, const std::string& conf, const std::string& log, bool single) {
    const pid_t pid = fork();
    if (pid < 0) die("fork failed");
    if (pid == 0) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) dup2(fd, STDERR_FILENO);
        std::vector<const char*> argv = {a.daemon.c_str(), "-D", "-f", conf.c_str(), "--pid-file", "none"};
        if (single) {
            argv.push_back("--max-batch");
            argv.push_back("1");
        }
        argv.push_back(nullptr);
        execv(a.daemon.c_str(), const_cast<char* const*>(argv.data()));
        std::perror("exec explschedd");
        _exit(127);
    }
    return pid;
}

Run run_mode(const Args& a, bool single) {
    const std::string tag = single ? "single" : "group";
    const std::string db = a.dir + "/bench-" + tag + ".db";
    const std::string conf = a.dir + "/bench-" + tag + ".conf";
    const std::string log = a.dir + "/bench-" + tag + ".log";
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
    {
        std::ofstream out(conf);
        out << "report_host=127.0.0.1\nreport_port=" << a.port << "\nreport_db=" << db
            << "\nmunge_socket=" << a.munge_socket << "\n";
    }
    const pid_t daemon = start_daemon(a, conf, log, single);
    const std::string address = "127.0.0.1:" + std::to_string(a.port);

    // Wait until explschedd answers (a report for a warm-up job).
    char err[512] = "";
    explsched_reporter* probe =
        explsched_reporter_open(address.c_str(), a.munge_socket.c_str(), err, sizeof err);
    if (probe == nullptr) die(err);
    explsched_report_result res{};
    bool up = false;
    for (int i = 0; i < 100 && !up; ++i) {
        up = explsched_reporter_send(probe, 1, 0, 1.0, NAN, &res) == EXPLSCHED_REPORT_STORED;
        if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    explsched_reporter_close(probe);
    if (!up) die("explschedd did not come up (" + std::string(res.message) + "); see " + log);

    std::atomic<bool> stop{false};
    std::atomic<uint64_t> acked{0}, errors{0};
    std::string first_error;
    std::atomic<bool> have_error{false};
    std::vector<std::thread> threads;
    for (int c = 0; c < a.clients; ++c) {
        threads.emplace_back([&, c] {
            char e[512] = "";
            explsched_reporter* r =
                explsched_reporter_open(address.c_str(), a.munge_socket.c_str(), e, sizeof e);
            if (r == nullptr) {
                errors.fetch_add(1);
                return;
            }
            const auto job = static_cast<uint32_t>(1000 + c);
            explsched_report_result out{};
            uint64_t mine = 0;
            for (uint64_t step = 1; !stop.load(std::memory_order_relaxed); ++step) {
                const double loss = 2.0 / std::sqrt(static_cast<double>(step)) + 0.1;
                const int st = explsched_reporter_send(r, job, step, loss, 1000.0, &out);
                if (st == EXPLSCHED_REPORT_STORED) {
                    ++mine;
                } else {
                    errors.fetch_add(1);
                    if (!have_error.exchange(true)) first_error = out.message;
                }
            }
            acked.fetch_add(mine);
            explsched_reporter_close(r);
        });
    }
    const auto t0 = std::chrono::steady_clock::now();
    const double daemon0 = process_cpu(daemon), munged0 = process_cpu(a.munged), self0 = self_cpu();
    std::this_thread::sleep_for(std::chrono::duration<double>(a.seconds));
    stop = true;
    for (auto& t : threads) t.join();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double daemon1 = process_cpu(daemon), munged1 = process_cpu(a.munged), self1 = self_cpu();

    kill(daemon, SIGTERM);
    int status = 0;
    waitpid(daemon, &status, 0);

    Run run;
    run.cpu_daemon = daemon1 - daemon0;
    run.cpu_munged = munged1 - munged0;
    run.cpu_clients = self1 - self0;
    run.acked = acked.load();
    run.errors = errors.load();
    run.first_error = first_error;
    run.rate = static_cast<double>(run.acked) / elapsed;
    auto reader = explsched::ReportReader::open(db);
    if (!reader) die(reader.error().message);
    auto last = (*reader)->last_id();
    if (!last) die(last.error().message);
    run.in_db = static_cast<uint64_t>(*last) - 1;  // minus the warm-up report
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);)
        if (line.find("stats:") != std::string::npos) run.stats = line;
    return run;
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (v == nullptr)
            die("option " + arg + " needs a value (see the comment at the top of bench_report.cpp)");
        ++i;
        if (arg == "--explschedd")
            a.daemon = v;
        else if (arg == "--munge-socket")
            a.munge_socket = v;
        else if (arg == "--dir")
            a.dir = v;
        else if (arg == "--clients")
            a.clients = std::atoi(v);
        else if (arg == "--seconds")
            a.seconds = std::atof(v);
        else if (arg == "--port")
            a.port = std::atoi(v);
        else if (arg == "--munged-pid")
            a.munged = static_cast<pid_t>(std::atoi(v));
        else
            die("unknown option " + arg);
    }
    if (a.daemon.empty() || a.munge_socket.empty() || a.dir.empty())
        die("--explschedd, --munge-socket and --dir are required");
    if (a.clients < 1 || a.clients > 1000 || !(a.seconds > 0))
        die("--clients must be 1..1000 and --seconds > 0");
    if (a.port == 0) a.port = 20000 + static_cast<int>(getpid() % 20000);

    std::printf(
        "explschedd-bench: %d clients, %.1f s per mode, real munge credentials (%s), fsync per commit\n",
        a.clients, a.seconds, a.munge_socket.c_str());
    const Run group = run_mode(a, false);
    const Run single = run_mode(a, true);
    bool ok = true;
    for (const auto& [name, r] :
         {std::pair<const char*, const Run&>{"group commit", group}, {"one commit per report", single}}) {
        std::printf("%-22s %9.0f reports/s  acked=%llu in_db=%llu errors=%llu\n", name, r.rate,
                    static_cast<unsigned long long>(r.acked), static_cast<unsigned long long>(r.in_db),
                    static_cast<unsigned long long>(r.errors));
        if (!r.stats.empty()) std::printf("  %s\n", r.stats.c_str());
        if (r.acked > 0) {
            const double per = 1e6 / static_cast<double>(r.acked);
            const double total = (r.cpu_daemon + r.cpu_munged + r.cpu_clients) * per;
            std::printf(
                "  CPU per report: %.0f us (explschedd %.0f, munged %.0f%s, clients %.0f)"
                " -> %.0f reports/s if 2 cores were ours alone\n",
                total, r.cpu_daemon * per, r.cpu_munged * per, a.munged > 0 ? "" : " (not measured)",
                r.cpu_clients * per, total > 0 ? 2e6 / total : 0.0);
        }
        if (r.errors > 0) std::printf("  first error: %s\n", r.first_error.c_str());
        // Clients wait for each reply, so the database holds exactly the acknowledged reports.
        if (r.in_db != r.acked || r.errors > 0) ok = false;
    }
    std::printf("ratio group/single: %.2f\n", single.rate > 0 ? group.rate / single.rate : 0.0);
    std::printf("target >= 5000 reports/s (group commit): %s\n", group.rate >= 5000 ? "met" : "NOT met");
    if (!ok) std::printf("FAIL: a report was lost or refused\n");
    return ok ? 0 : 1;
}
