// explschedd: receives training-curve reports from ExplSched jobs, checks their munge credential
// and job ownership, and stores them in SQLite for priority/explsched. See explschedd(8).
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "core/base/strings.hpp"
#include "core/report/report_store.hpp"
#include "core/sched/settings.hpp"
#include "daemon/committer.hpp"
#include "daemon/daemon_util.hpp"
#include "daemon/job_owners.hpp"
#include "daemon/report_server.hpp"
#include "daemon/retention.hpp"
#include "explsched_config.h"

namespace {

using namespace explsched;
using namespace explsched::daemon;

constexpr const char* kDefaultConfig = "/etc/slurm/explschedd.conf";
constexpr const char* kDefaultPidFile = "/run/explschedd.pid";

struct Options {
    std::string config = kDefaultConfig;
    bool config_given = false;
    bool foreground = false;
    bool syslog = false;
    std::string pid_file = kDefaultPidFile;
    std::string slurm_conf;
    int verbosity = 0;
    std::size_t max_batch = 512;
    bool sync_full = true;
    ServerOptions server;
};

void usage(FILE* out) {
    std::fprintf(out,
                 "usage: explschedd [-D] [-f FILE] [-v]... [options]\n"
                 "Receives ExplSched training-curve reports (see explschedd(8)).\n\n"
                 "  -D, --foreground        stay in the foreground and log to stderr\n"
                 "  -f, --config FILE       settings file (default %s; report_host, report_port,\n"
                 "                          report_db, munge_socket)\n"
                 "  -v, --verbose           more log detail (repeat for debug)\n"
                 "  --syslog                log to syslog even in the foreground\n"
                 "  --pid-file FILE         pid file (default %s; 'none' for no file)\n"
                 "  --slurm-conf FILE       slurm.conf for job-owner lookups (default $SLURM_CONF)\n"
                 "  --max-batch N           reports per database commit, at most (default 512; 1 =\n"
                 "                          one commit per report)\n"
                 "  --sync full|normal      fsync each commit (full, default) or rely on the OS\n"
                 "  --auth-threads N        munge-checking threads (default 4)\n"
                 "  --limit KEY=VALUE       a limit or retention setting (repeatable; see\n"
                 "                          --list-limits), e.g. --limit user_rate=200\n"
                 "  --list-limits           print every limit with its default and meaning\n"
                 "  --max-connections N     same as --limit max_connections=N\n"
                 "  --max-inflight N        unanswered reports per connection (default 64)\n"
                 "  --idle-timeout SECONDS  same as --limit idle_timeout=SECONDS\n"
                 "  -V, --version           print the version\n",
                 kDefaultConfig, kDefaultPidFile);
}

// Returns the exit status to leave with, or nullopt to go on.
std::optional<int> parse_args(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "explschedd: option %s needs a value\n", arg.c_str());
                return nullptr;
            }
            return argv[++i];
        };
        auto number = [&](uint64_t lo, uint64_t hi) -> std::optional<uint64_t> {
            const char* v = value();
            if (v == nullptr) return std::nullopt;
            auto n = parse_uint64(v);
            if (!n || *n < lo || *n > hi) {
                std::fprintf(stderr, "explschedd: option %s: '%s' is not an integer in [%llu, %llu]\n",
                             arg.c_str(), v, static_cast<unsigned long long>(lo),
                             static_cast<unsigned long long>(hi));
                return std::nullopt;
            }
            return n;
        };
        if (arg == "-h" || arg == "--help") {
            usage(stdout);
            return 0;
        }
        if (arg == "-V" || arg == "--version") {
            std::printf("explschedd %s\n", PACKAGE_VERSION);
            return 0;
        }
        if (arg == "-D" || arg == "--foreground") {
            o.foreground = true;
        } else if (arg == "-v" || arg == "--verbose") {
            ++o.verbosity;
        } else if (arg == "-vv") {
            o.verbosity += 2;
        } else if (arg == "--syslog") {
            o.syslog = true;
        } else if (arg == "-f" || arg == "--config") {
            const char* v = value();
            if (v == nullptr) return 2;
            o.config = v;
            o.config_given = true;
        } else if (arg == "--pid-file") {
            const char* v = value();
            if (v == nullptr) return 2;
            o.pid_file = v;
        } else if (arg == "--slurm-conf") {
            const char* v = value();
            if (v == nullptr) return 2;
            o.slurm_conf = v;
        } else if (arg == "--sync") {
            const char* v = value();
            if (v == nullptr) return 2;
            if (std::strcmp(v, "full") != 0 && std::strcmp(v, "normal") != 0) {
                std::fprintf(stderr, "explschedd: option --sync: '%s' is not full or normal\n", v);
                return 2;
            }
            o.sync_full = std::strcmp(v, "full") == 0;
        } else if (arg == "--max-batch") {
            auto n = number(1, 100000);
            if (!n) return 2;
            o.max_batch = *n;
        } else if (arg == "--auth-threads") {
            auto n = number(1, 64);
            if (!n) return 2;
            o.server.auth_threads = static_cast<int>(*n);
        } else if (arg == "--limit" || arg == "--max-connections" || arg == "--idle-timeout") {
            const char* v = value();
            if (v == nullptr) return 2;
            const std::string item = arg == "--limit"             ? std::string(v)
                                     : arg == "--max-connections" ? "max_connections=" + std::string(v)
                                                                  : "idle_timeout=" + std::string(v);
            auto l = apply_limit(o.server.limits, item);
            if (!l) {
                std::fprintf(stderr, "explschedd: option %s: %s\n", arg.c_str(), l.error().message.c_str());
                return 2;
            }
            o.server.limits = *l;
        } else if (arg == "--list-limits") {
            const auto values = describe_limits(DaemonLimits{});
            const auto& keys = limit_keys();
            for (std::size_t k = 0; k < keys.size(); ++k)
                std::printf("%-36s %s\n", values[k].c_str(), std::string(keys[k].help).c_str());
            return 0;
        } else if (arg == "--max-inflight") {
            auto n = number(1, 100000);
            if (!n) return 2;
            o.server.max_inflight_per_conn = *n;
        } else {
            std::fprintf(stderr, "explschedd: unknown option '%s' (see --help)\n", arg.c_str());
            return 2;
        }
    }
    return std::nullopt;
}

Result<Settings> load_settings(const Options& o) {
    std::ifstream in(o.config);
    if (!in) {
        // The default file is optional (defaults apply); a file named on the command line is not.
        if (!o.config_given && errno == ENOENT) return Settings{};
        return make_error("cannot read " + o.config + ": " + std::strerror(errno));
    }
    std::stringstream text;
    text << in.rdbuf();
    return parse_settings_file_text(text.str(), o.config);
}

int serve(const Options& o, const Settings& settings, DaemonLogger& log) {
    // Signals go to a signalfd: block them before any thread starts so every thread inherits the mask.
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &mask, nullptr);
    signal(SIGPIPE, SIG_IGN);
    const int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        log.write(LogLevel::error, std::string("signalfd: ") + std::strerror(errno));
        return 1;
    }

    std::optional<Detach> detach;
    if (!o.foreground) {
        auto d = Detach::start();
        if (!d) {
            log.write(LogLevel::error, d.error().message);
            return 1;
        }
        detach.emplace(std::move(d).value());
    }
    std::optional<PidFile> pid_file;
    if (o.pid_file != "none") {
        auto p = PidFile::create(o.pid_file);
        if (!p) {
            log.write(LogLevel::error, p.error().message);
            return 1;
        }
        pid_file.emplace(std::move(p).value());
    }

    StoreOptions store_options;
    store_options.synchronous_full = o.sync_full;
    store_options.max_points_per_job = o.server.limits.max_points_per_job;
    auto store = ReportStore::open(settings.report_db, store_options);
    if (!store) {
        log.write(LogLevel::error, store.error().message);
        return 1;
    }
    const DaemonLimits& limits = o.server.limits;
    OwnerCacheOptions cache;
    cache.owner_ttl = std::chrono::seconds(limits.owner_cache_ttl);
    cache.unknown_ttl = std::chrono::seconds(limits.unknown_job_ttl);
    cache.capacity = limits.owner_cache_entries;
    JobOwners owners(o.slurm_conf, log, cache);
    CompletionQueue done;
    auto committer = std::make_unique<Committer>(**store, o.max_batch, done, log);
    ServerOptions server_options = o.server;
    server_options.host = settings.report_host;
    server_options.port = settings.report_port;
    server_options.munge_socket = settings.munge_socket;
    server_options.db_path = settings.report_db;
    auto server = ReportServer::create(server_options, owners, *committer, done, log);
    if (!server) {
        log.write(LogLevel::error, server.error().message);
        return 1;
    }
    auto retention = std::make_unique<Retention>(settings.report_db, *committer, owners, limits, log);
    std::string limit_text;
    for (const auto& kv : describe_limits(limits)) limit_text += " " + kv;
    log.write(LogLevel::info, "limits:" + limit_text);
    log.write(LogLevel::info, "explschedd " PACKAGE_VERSION " on " + (*server)->address() + ", database " +
                                  settings.report_db + ", munge socket " +
                                  (settings.munge_socket.empty() ? "default" : settings.munge_socket) + ", " +
                                  owners.describe() + ", max batch " + std::to_string(o.max_batch));
    if (detach) {
        if (!o.syslog) log.use_syslog();  // stderr is about to become /dev/null
        detach->ready();
    }
    // Clients restrict their credentials to SlurmUser's uid (the SPANK plugin's EXPLSCHED_REPORT_UID):
    // a daemon running as anyone else cannot decode them. Checked beside the loop, which must not wait
    // for a slow slurmctld.
    std::thread user_check([&owners, &log] {
        if (const auto slurm_user = owners.slurm_user(); slurm_user && *slurm_user != geteuid())
            log.write(LogLevel::error, "explschedd runs as uid " + std::to_string(geteuid()) +
                                           " but SlurmUser is uid " + std::to_string(*slurm_user) +
                                           ": jobs restrict their credentials to SlurmUser and their reports "
                                           "will be refused; run explschedd as SlurmUser");
    });
    Status st = (*server)->run(sfd);
    user_check.join();
    server->reset();    // workers joined: nothing new reaches the committer
    retention.reset();  // no prune runs while the committer drains
    committer.reset();  // drains and commits what is queued
    ::close(sfd);
    if (!st) {
        log.write(LogLevel::error, st.error().message);
        return 1;
    }
    log.write(LogLevel::info, "stopped");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (auto rc = parse_args(argc, argv, o)) return *rc;
    const LogLevel level = o.verbosity >= 2   ? LogLevel::debug
                           : o.verbosity == 1 ? LogLevel::verbose
                                              : LogLevel::info;
    DaemonLogger log(level);
    if (o.syslog) log.use_syslog();
    // The database, its -wal and -shm hold every user's curves: nothing explschedd creates is for
    // anyone else (report_store.cpp also creates the database 0600 explicitly).
    umask(077);
    // Each client holds a descriptor: allow max_connections of them (up to the hard limit).
    rlimit nofile{};
    const auto wanted = static_cast<rlim_t>(o.server.limits.max_connections) + 256;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < wanted) {
        nofile.rlim_cur = std::min<rlim_t>(nofile.rlim_max, wanted);
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    try {
        auto settings = load_settings(o);
        if (!settings) {
            log.write(LogLevel::error, settings.error().message);
            return 1;
        }
        return serve(o, *settings, log);
    } catch (const std::exception& e) {
        log.write(LogLevel::error, std::string("internal error: ") + e.what());
        return 70;
    }
}
