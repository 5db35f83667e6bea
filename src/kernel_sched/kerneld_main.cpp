// explsched-kerneld entry point: parse options, serve until SIGTERM/SIGINT, write statistics.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include "kernel_sched/kerneld.hpp"
#include "kernel_sched/ksched_socket.hpp"

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

// Started as root (a prolog, an init script): become the dedicated user before creating anything,
// so the socket and status file are that user's and no client input reaches a root process.
bool drop_privileges(const std::string& user) {
    if (geteuid() != 0) return true;
    const passwd* pw = getpwnam(user.c_str());
    if (pw == nullptr) {
        std::fprintf(stderr, "explsched-kerneld: user '%s' does not exist (create it, or pass --user)\n",
                     user.c_str());
        return false;
    }
    if (pw->pw_uid == 0) {
        std::fprintf(stderr,
                     "explsched-kerneld: warning: serving as root (--user %s); use a dedicated user\n",
                     user.c_str());
        return true;
    }
    if (setgroups(0, nullptr) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0 || setuid(0) == 0) {
        std::fprintf(stderr, "explsched-kerneld: cannot become user '%s'\n", user.c_str());
        return false;
    }
    return true;
}

// `explsched-kerneld register SOCKET STEP UID PRIORITY [OWNER_PID]` / `unregister SOCKET STEP`:
// what the SPANK plugin does for each step, for tests and for sites that register steps from a
// prolog. Only root (or a --registrar-uid) is listened to.
int register_command(int argc, char** argv) {
    namespace ks = explsched::ksched;
    const bool unregister = std::strcmp(argv[1], "unregister") == 0;
    if (argc < (unregister ? 4 : 6)) {
        std::fprintf(stderr,
                     "usage: explsched-kerneld register SOCKET STEP UID PRIORITY [OWNER_PID]\n"
                     "       explsched-kerneld unregister SOCKET STEP\n");
        return 2;
    }
    ks::RegisterMsg msg{};
    ks::init_header(msg.h, unregister ? ks::MsgType::unregister_step : ks::MsgType::register_step);
    ks::copy_field(msg.job, sizeof msg.job, argv[3]);
    if (!unregister) {
        msg.uid = static_cast<std::uint32_t>(std::strtoul(argv[4], nullptr, 10));
        msg.priority = std::strtod(argv[5], nullptr);
        msg.owner_pid = argc > 6 ? static_cast<pid_t>(std::strtol(argv[6], nullptr, 10)) : getppid();
    }
    ks::ReplyMsg reply{};
    std::string error;
    if (!ks::exchange(argv[2], &msg, sizeof msg, reply, ks::monotonic_ns() + 1000000000ull, error)) {
        std::fprintf(stderr, "explsched-kerneld: %s\n", error.c_str());
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc > 1 && (std::strcmp(argv[1], "register") == 0 || std::strcmp(argv[1], "unregister") == 0))
            return register_command(argc, argv);
        std::vector<char*> args{argv[0]};
        bool verbose = false;
        for (int i = 1; i < argc; ++i) {
            if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
                std::fputs(explsched::ksched::kerneld_usage(), stdout);
                return 0;
            }
            if (std::strcmp(argv[i], "--verbose") == 0)
                verbose = true;
            else
                args.push_back(argv[i]);
        }
        auto config = explsched::ksched::parse_kerneld_args(static_cast<int>(args.size()), args.data());
        if (!config) {
            std::fprintf(stderr, "explsched-kerneld: %s\n", config.error().message.c_str());
            return 2;
        }
        explsched::StderrLogger log(verbose ? explsched::LogLevel::verbose : explsched::LogLevel::info);
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, nullptr);
        sigaction(SIGINT, &sa, nullptr);
        sigaction(SIGHUP, &sa, nullptr);
        std::signal(SIGPIPE, SIG_IGN);

        if (!drop_privileges(config->user)) return 1;
        explsched::ksched::KernelDaemon daemon(std::move(config).value(), log);
        if (auto s = daemon.start(); !s) {
            std::fprintf(stderr, "explsched-kerneld: %s\n", s.error().message.c_str());
            return 1;
        }
        daemon.run(g_stop);
        daemon.shutdown();
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "explsched-kerneld: internal error: %s\n", e.what());
        return 70;
    }
}
