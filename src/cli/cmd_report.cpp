// explsched report --step N --metric V [--throughput X] [--job ID] [--address HOST:PORT]
//                  [--munge-socket PATH] [--timeout SECONDS] [--retries N] [-v]
// Sends one point of the job's learning curve to explschedd through libexplsched_report, so a
// training script in any language can report with one command. The job and the address come
// from the environment the SPANK plugin sets (EXPLSCHED_JOB_ID, EXPLSCHED_REPORT_ADDR).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "cli/commands.hpp"
#include "core/base/strings.hpp"
#include "explsched/report.h"

namespace explsched::cli {

namespace {

constexpr int kExitTempFail = 75;  // sysexits.h EX_TEMPFAIL: the server could not decide now

void report_usage(FILE* out) {
    std::fprintf(out,
                 "usage: explsched report --step N --metric V [--throughput X] [--job ID]\n"
                 "                        [--address HOST:PORT] [--munge-socket PATH]\n"
                 "                        [--timeout SECONDS] [--retries N] [-v]\n"
                 "Sends one learning-curve point of a job to explschedd, signed with munge.\n"
                 "  --step N            training step (non-negative integer, never decreasing)\n"
                 "  --metric V          the metric the job declared with --explore-metric\n"
                 "  --throughput X      training speed in steps per second (optional)\n"
                 "  --job ID            default: $EXPLSCHED_JOB_ID, else $SLURM_JOB_ID\n"
                 "  --address HOST:PORT default: $EXPLSCHED_REPORT_ADDR, else report_host:report_port\n"
                 "                      of $EXPLSCHED_CONF or /etc/slurm/explschedd.conf\n"
                 "  --munge-socket PATH default: $EXPLSCHED_MUNGE_SOCKET, else munge_socket, else munged's\n"
                 "  --timeout SECONDS   per attempt (default 10)\n"
                 "  --retries N         attempts after a 'retry' reply or a connection failure (default 3)\n"
                 "Exit status: 0 stored (or already stored), 1 refused or failed, 2 bad usage,\n"
                 "75 the server asked to retry and the retries ran out.\n");
}

// A number as C reads it, NaN and inf included: the library refuses those with the same message
// explschedd would give; only text that is no number at all is a usage error here.
bool parse_any_double(const char* text, double& out) {
    if (text == nullptr || *text == '\0') return false;
    char* end = nullptr;
    out = std::strtod(text, &end);
    return end != nullptr && *end == '\0';
}

}  // namespace

int cmd_report(int argc, char** argv) {
    const char* step_text = nullptr;
    const char* metric_text = nullptr;
    const char* throughput_text = nullptr;
    const char* job_text = nullptr;
    const char* address = nullptr;
    const char* munge_socket = nullptr;
    double timeout = 10.0;
    uint64_t retries = 3;
    bool verbose = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "explsched report: %s needs a value\n", arg.c_str());
                return nullptr;
            }
            return argv[++i];
        };
        const char** slot = arg == "--step"           ? &step_text
                            : arg == "--metric"       ? &metric_text
                            : arg == "--throughput"   ? &throughput_text
                            : arg == "--job"          ? &job_text
                            : arg == "--address"      ? &address
                            : arg == "--munge-socket" ? &munge_socket
                                                      : nullptr;
        if (slot != nullptr) {
            if ((*slot = value()) == nullptr) return 2;
        } else if (arg == "--timeout") {
            const char* v = value();
            auto d = v != nullptr ? parse_finite_double(v) : std::nullopt;
            if (!d || *d <= 0.0 || *d > 86400.0) {
                std::fprintf(stderr,
                             "explsched report: --timeout '%s': not a number of seconds in (0, 86400]\n",
                             v != nullptr ? v : "");
                return 2;
            }
            timeout = *d;
        } else if (arg == "--retries") {
            const char* v = value();
            auto n = v != nullptr ? parse_uint64(v) : std::nullopt;
            if (!n || *n > 100) {
                std::fprintf(stderr, "explsched report: --retries '%s': not an integer in [0, 100]\n",
                             v != nullptr ? v : "");
                return 2;
            }
            retries = *n;
        } else if (arg == "-v" || arg == "--verbose") {
            verbose = true;
        } else if (arg == "-h" || arg == "--help") {
            report_usage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "explsched report: unknown option '%s'\n", arg.c_str());
            report_usage(stderr);
            return 2;
        }
    }
    if (step_text == nullptr || metric_text == nullptr) {
        std::fprintf(stderr, "explsched report: --step and --metric are required\n");
        report_usage(stderr);
        return 2;
    }
    const auto step = parse_uint64(step_text);
    if (!step) {
        std::fprintf(stderr, "explsched report: --step '%s': not a non-negative integer\n", step_text);
        return 2;
    }
    double metric = 0.0, throughput = NAN;
    if (!parse_any_double(metric_text, metric)) {
        std::fprintf(stderr, "explsched report: --metric '%s': not a number\n", metric_text);
        return 2;
    }
    if (throughput_text != nullptr && (!parse_any_double(throughput_text, throughput) || throughput < 0.0)) {
        std::fprintf(stderr, "explsched report: --throughput '%s': not a non-negative number\n",
                     throughput_text);
        return 2;
    }
    uint32_t job = explsched_report_job_id();
    if (job_text != nullptr) {
        const auto n = parse_uint64(job_text);
        if (!n || *n == 0 || *n > 0xfffffffdULL) {
            std::fprintf(stderr, "explsched report: --job '%s': not a Slurm job id\n", job_text);
            return 2;
        }
        job = static_cast<uint32_t>(*n);
    }
    if (job == 0) {
        std::fprintf(
            stderr,
            "explsched report: no job: pass --job, or run inside a job (EXPLSCHED_JOB_ID, SLURM_JOB_ID)\n");
        return 2;
    }

    char err[512] = "";
    std::unique_ptr<explsched_reporter, void (*)(explsched_reporter*)> reporter(
        explsched_reporter_open(address, munge_socket, err, sizeof err), explsched_reporter_close);
    if (!reporter) {
        std::fprintf(stderr, "%s\n", err);
        return 1;
    }
    explsched_reporter_set_timeout(reporter.get(), timeout);
    explsched_report_result res{};
    int status = EXPLSCHED_REPORT_ERROR;
    for (uint64_t attempt = 0;; ++attempt) {
        status = explsched_reporter_send(reporter.get(), job, *step, metric, throughput, &res);
        const bool transient =
            status == EXPLSCHED_REPORT_RETRY ||
            (status == EXPLSCHED_REPORT_ERROR && std::strstr(res.message, "munge") == nullptr);
        if (!transient || attempt >= retries) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(250LL << std::min<uint64_t>(attempt, 5)));
    }
    switch (status) {
        case EXPLSCHED_REPORT_STORED:
        case EXPLSCHED_REPORT_DUPLICATE:
            if (verbose)
                std::printf("%s job=%u step=%llu\n", explsched_report_status_name(status), job,
                            static_cast<unsigned long long>(*step));
            return 0;
        case EXPLSCHED_REPORT_REFUSED:
            std::fprintf(stderr, "%s\n", res.message);
            if (res.has_last_step)
                std::printf("last_step=%llu\n", static_cast<unsigned long long>(res.last_step));
            return 1;
        case EXPLSCHED_REPORT_RETRY:
            std::fprintf(stderr, "%s\n", res.message);
            return kExitTempFail;
        default:
            std::fprintf(stderr, "%s\n", res.message);
            return 1;
    }
}

}  // namespace explsched::cli
