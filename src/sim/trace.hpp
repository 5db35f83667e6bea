// Arrival traces the simulator replays: the Philly-derived trace (philly.csv), the Pollux
// workloads (which name each job's application and batch size, tying it to a real curve), and
// `sacct -P` output from a real Slurm, so a site can replay its own history. All three reduce to
// the same TraceJob rows; what a format does not say (application, sweep) stays empty and the
// workload builder fills it from the seed.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"

namespace explsched::sim {

enum class TraceFormat { automatic, philly, pollux, sacct };

Result<TraceFormat> parse_trace_format(std::string_view text);
const char* to_string(TraceFormat format);

struct TraceJob {
    static constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

    std::string name;        // trace's own job name/id ("cifar10-0", "4711_3"); may be empty
    double arrival = 0.0;    // seconds since the trace's first arrival (>= 0)
    std::uint32_t gpus = 1;  // GPUs requested
    // Seconds the job ran in the trace (its whole curve takes this long on the reference GPU
    // type); NaN when the trace does not say (Pollux: derived from the step-time tables).
    double duration = kUnknown;
    std::string application;  // curve directory name ("cifar10"); empty = drawn by seed
    std::string variant;      // curve within the application ("2048"); empty = drawn by seed
    std::string sweep;        // sweep the trace puts it in (sacct array job); empty = grouped later
    std::string job_name;     // sacct JobName: taken as the application when it names one
    std::size_t line = 0;     // line in the trace file (for messages)
};

struct Trace {
    TraceFormat format = TraceFormat::philly;
    std::vector<TraceJob> jobs;  // sorted by arrival (stable: ties keep file order)
    std::size_t skipped = 0;     // rows deliberately skipped (sacct job steps, CPU-only jobs)
};

// Parsers take the whole text; `source` names it in errors, which read
// "<source>:<line>: <column>: '<value>' <why>". The first non-empty line is the header; the
// format is recognised from it when `format` is automatic.
Result<Trace> parse_trace(std::string_view text, const std::string& source,
                          TraceFormat format = TraceFormat::automatic);
Result<Trace> read_trace(const std::string& path, TraceFormat format = TraceFormat::automatic);

// "2017-10-09 07:01:55" or "2017-10-09T07:01:55" → seconds since 1970 (UTC, no zone).
Result<double> parse_timestamp(std::string_view text);
// Slurm elapsed times: "[D-]HH:MM:SS", "MM:SS", "SS" (optionally with ".frac") → seconds.
Result<double> parse_slurm_elapsed(std::string_view text);

}  // namespace explsched::sim
