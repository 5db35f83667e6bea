// explsched-kerneld entry point: parse options, serve until SIGTERM/SIGINT, write statistics.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#include "kernel_sched/kerneld.hpp"

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

}  // namespace

int main(int argc, char** argv) {
    try {
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
