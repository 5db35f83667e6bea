// `explsched`: the command for users and admins. One dispatcher; each subcommand lives in its own
// cmd_<name>.cpp and registers in the table below.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>

#include "cli/commands.hpp"

namespace {

struct Command {
    const char* name;
    int (*run)(int argc, char** argv);  // argv[0] is the subcommand's name
    const char* summary;
};

// Keep sorted by name. One line per subcommand.
const Command kCommands[] = {
    {"config", explsched::cli::cmd_config,
     "check and print settings (PriorityParameters, plugstack.conf, explschedd.conf)"},
    {"kstat", explsched::cli::cmd_kstat,
     "per-job kernel scheduling statistics of this node's GPUs (explsched-kerneld)"},
    {"plot", explsched::cli::cmd_plot,
     "draw a trial's curve and prediction, a sweep, or a simulator comparison (PNG/SVG)"},
    {"predict", explsched::cli::cmd_predict,
     "extrapolate a learning curve from a CSV file (what the scheduler would predict)"},
    {"report", explsched::cli::cmd_report,
     "send a learning-curve point (step, metric) of a job to explschedd"},
    {"show", explsched::cli::cmd_show,
     "a trial's curve, prediction with interval, utility, price, state and decision"},
    {"why", explsched::cli::cmd_why,
     "why a trial ranks where it does in its sweep and what would change that"},
};

void usage(FILE* out) {
    std::fprintf(out, "usage: explsched <command> [options]\n\ncommands:\n");
    for (const Command& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
    std::fprintf(out, "\nRun 'explsched <command> --help' for a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const std::string_view name = argv[1];
    if (name == "-h" || name == "--help" || name == "help") {
        usage(stdout);
        return 0;
    }
    if (name == "--version") {
        std::printf("explsched %s\n", explsched::cli::version());
        return 0;
    }
    for (const Command& c : kCommands) {
        if (name == c.name) {
            try {
                return c.run(argc - 1, argv + 1);
            } catch (const std::exception& e) {
                // A bug, not an expected failure: say so plainly rather than abort with a trace.
                std::fprintf(stderr, "explsched %s: internal error: %s\n", c.name, e.what());
                return 70;
            }
        }
    }
    std::fprintf(stderr, "explsched: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
