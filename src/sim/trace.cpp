#include "sim/trace.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "core/base/strings.hpp"

namespace explsched::sim {

Result<TraceFormat> parse_trace_format(std::string_view text) {
    if (text == "auto") return TraceFormat::automatic;
    if (text == "philly") return TraceFormat::philly;
    if (text == "pollux") return TraceFormat::pollux;
    if (text == "sacct") return TraceFormat::sacct;
    return make_error("trace format: '" + std::string(text) + "' is not one of auto, philly, pollux, sacct");
}

const char* to_string(TraceFormat format) {
    switch (format) {
        case TraceFormat::automatic:
            return "auto";
        case TraceFormat::philly:
            return "philly";
        case TraceFormat::pollux:
            return "pollux";
        case TraceFormat::sacct:
            return "sacct";
    }
    return "?";
}

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
long long days_from_civil(long long y, unsigned m, unsigned d) {
    y -= m <= 2 ? 1 : 0;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<long long>(doe) - 719468;
}

bool parse_fixed_uint(std::string_view text, std::size_t pos, std::size_t len, unsigned& out) {
    if (pos + len > text.size()) return false;
    unsigned value = 0;
    for (std::size_t i = pos; i < pos + len; ++i) {
        if (text[i] < '0' || text[i] > '9') return false;
        value = value * 10 + static_cast<unsigned>(text[i] - '0');
    }
    out = value;
    return true;
}

// One line of a delimited file with its 1-based number.
struct Line {
    std::string_view text;
    std::size_t number = 0;
};

std::vector<Line> split_lines(std::string_view text) {
    std::vector<Line> lines;
    std::size_t pos = 0, number = 0;
    while (pos < text.size()) {
        const std::size_t nl = text.find('\n', pos);
        std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        ++number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (trim(line).empty()) continue;
        lines.push_back({line, number});
    }
    return lines;
}

// Header names → column index; lookups by name so column order does not matter.
class Columns {
public:
    Columns(const std::vector<std::string_view>& header) {
        for (std::size_t i = 0; i < header.size(); ++i) index_[std::string(trim(header[i]))] = i;
        count_ = header.size();
    }
    bool has(const std::string& name) const { return index_.count(name) != 0; }
    std::size_t at(const std::string& name) const { return index_.at(name); }
    std::size_t count() const { return count_; }

private:
    std::map<std::string, std::size_t> index_;
    std::size_t count_ = 0;
};

// Builds "<source>:<line>: <column>: '<value>' <why>".
class RowError {
public:
    RowError(const std::string& source, std::size_t line) : where_(source + ":" + std::to_string(line)) {}
    Error operator()(const std::string& column, std::string_view value, const std::string& why) const {
        return make_error(where_ + ": " + column + ": '" + std::string(value) + "' " + why);
    }
    Error plain(const std::string& why) const { return make_error(where_ + ": " + why); }

private:
    std::string where_;
};

Status require_columns(const Columns& columns, std::initializer_list<const char*> names,
                       const std::string& source, std::size_t line, const char* format) {
    for (const char* name : names) {
        if (!columns.has(name)) {
            return make_error(source + ":" + std::to_string(line) + ": " + format + " header has no '" +
                              name + "' column");
        }
    }
    return {};
}

Result<std::uint32_t> parse_gpu_count(std::string_view cell, const RowError& err, const std::string& column) {
    const auto value = parse_uint64(trim(cell));
    if (!value || *value == 0 || *value > 1000000) {
        return err(column, cell, "is not a GPU count (a whole number from 1 to 1000000)");
    }
    return static_cast<std::uint32_t>(*value);
}

Result<Trace> parse_philly(const std::vector<Line>& lines, const std::string& source) {
    const auto header = split(lines[0].text, ",");
    const Columns columns(header);
    if (auto ok = require_columns(columns, {"timestamp", "duration", "num_gpus"}, source, lines[0].number,
                                  "philly");
        !ok) {
        return ok.error();
    }
    Trace trace;
    trace.format = TraceFormat::philly;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const auto cells = split(lines[i].text, ",");
        const RowError err(source, lines[i].number);
        if (cells.size() != columns.count()) {
            return err.plain(std::to_string(cells.size()) + " cells, header has " +
                             std::to_string(columns.count()));
        }
        TraceJob job;
        job.line = lines[i].number;
        job.name = "philly-" + std::to_string(i);
        const auto ts = cells[columns.at("timestamp")];
        auto when = parse_timestamp(trim(ts));
        if (!when) return err("timestamp", ts, "is not a time (YYYY-MM-DD HH:MM:SS)");
        job.arrival = *when;
        const auto dur_cell = cells[columns.at("duration")];
        const auto duration = parse_finite_double(trim(dur_cell));
        if (!duration || *duration < 0.0)
            return err("duration", dur_cell, "is not a duration in seconds >= 0");
        job.duration = *duration;
        auto gpus = parse_gpu_count(cells[columns.at("num_gpus")], err, "num_gpus");
        if (!gpus) return gpus.error();
        job.gpus = *gpus;
        trace.jobs.push_back(std::move(job));
    }
    return trace;
}

Result<Trace> parse_pollux(const std::vector<Line>& lines, const std::string& source) {
    const Columns columns(split(lines[0].text, ","));
    if (auto ok = require_columns(columns, {"name", "time", "application", "num_replicas", "batch_size"},
                                  source, lines[0].number, "pollux");
        !ok) {
        return ok.error();
    }
    Trace trace;
    trace.format = TraceFormat::pollux;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const auto cells = split(lines[i].text, ",");
        const RowError err(source, lines[i].number);
        if (cells.size() != columns.count()) {
            return err.plain(std::to_string(cells.size()) + " cells, header has " +
                             std::to_string(columns.count()));
        }
        TraceJob job;
        job.line = lines[i].number;
        job.name = std::string(trim(cells[columns.at("name")]));
        const auto time_cell = cells[columns.at("time")];
        const auto time = parse_finite_double(trim(time_cell));
        if (!time || *time < 0.0) return err("time", time_cell, "is not an arrival second >= 0");
        job.arrival = *time;
        job.application = std::string(trim(cells[columns.at("application")]));
        if (job.application.empty()) return err("application", "", "is empty");
        auto gpus = parse_gpu_count(cells[columns.at("num_replicas")], err, "num_replicas");
        if (!gpus) return gpus.error();
        job.gpus = *gpus;
        const auto bsz_cell = cells[columns.at("batch_size")];
        const auto bsz = parse_uint64(trim(bsz_cell));
        if (!bsz || *bsz == 0) return err("batch_size", bsz_cell, "is not a positive whole number");
        job.variant = std::to_string(*bsz);
        trace.jobs.push_back(std::move(job));
    }
    return trace;
}

// GPUs in a TRES string ("cpu=4,gres/gpu=2,gres/gpu:v100=2,mem=8G") or a GRES string
// ("gpu:2", "gpu:v100:2(IDX:0-1)"). Typed and untyped entries repeat the same GPUs, so the
// untyped one wins and typed ones are summed only when no untyped entry exists.
std::optional<std::uint64_t> gpus_in(std::string_view text, bool tres) {
    std::uint64_t untyped = 0, typed = 0;
    bool have_untyped = false, have_typed = false;
    for (auto item : split(text, ",")) {
        item = trim(item);
        if (tres) {
            const auto eq = item.find('=');
            if (eq == std::string_view::npos) continue;
            const auto key = item.substr(0, eq);
            const auto value = parse_uint64(item.substr(eq + 1));
            if (!value) continue;
            if (key == "gres/gpu") {
                untyped = *value;
                have_untyped = true;
            } else if (key.substr(0, 9) == "gres/gpu:") {
                typed += *value;
                have_typed = true;
            }
        } else {
            if (item.substr(0, 3) != "gpu") continue;
            const auto paren = item.find('(');
            if (paren != std::string_view::npos) item = item.substr(0, paren);
            const auto parts = split(item, ":");
            if (parts.size() < 2) continue;
            const auto value = parse_uint64(parts.back());
            if (!value) continue;
            if (parts.size() == 2) {
                untyped = *value;
                have_untyped = true;
            } else {
                typed += *value;
                have_typed = true;
            }
        }
    }
    if (have_untyped) return untyped;
    if (have_typed) return typed;
    return std::nullopt;
}

bool unknown_time(std::string_view cell) {
    cell = trim(cell);
    return cell.empty() || cell == "Unknown" || cell == "None" || cell == "N/A";
}

Result<Trace> parse_sacct(const std::vector<Line>& lines, const std::string& source) {
    const Columns columns(split(lines[0].text, "|"));
    if (auto ok = require_columns(columns, {"JobID", "Submit"}, source, lines[0].number, "sacct -P"); !ok) {
        return ok.error();
    }
    const bool have_elapsed = columns.has("ElapsedRaw") || columns.has("Elapsed");
    if (!have_elapsed && !(columns.has("Start") && columns.has("End"))) {
        return make_error(source + ":" + std::to_string(lines[0].number) +
                          ": sacct -P header needs Elapsed, ElapsedRaw or Start and End");
    }
    const char* gpu_columns[] = {"AllocTRES", "ReqTRES", "AllocGRES", "ReqGRES"};
    bool have_gpu_column = false;
    for (const char* c : gpu_columns) have_gpu_column = have_gpu_column || columns.has(c);
    if (!have_gpu_column) {
        return make_error(source + ":" + std::to_string(lines[0].number) +
                          ": sacct -P header needs AllocTRES, ReqTRES, AllocGRES or ReqGRES (GPU counts)");
    }
    Trace trace;
    trace.format = TraceFormat::sacct;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const auto cells = split(lines[i].text, "|");
        const RowError err(source, lines[i].number);
        // sacct -P ends rows with no separator; tolerate one trailing empty cell (--parsable).
        if (cells.size() != columns.count() &&
            !(cells.size() == columns.count() + 1 && cells.back().empty())) {
            return err.plain(std::to_string(cells.size()) + " cells, header has " +
                             std::to_string(columns.count()));
        }
        const std::string_view id = trim(cells[columns.at("JobID")]);
        if (id.empty()) return err("JobID", id, "is empty");
        // Steps (4711.batch, 4711.0, 4711.extern) repeat their job; a pending array remainder
        // (4711_[3-9]) never ran.
        if (id.find('.') != std::string_view::npos || id.find('[') != std::string_view::npos) {
            ++trace.skipped;
            continue;
        }
        TraceJob job;
        job.line = lines[i].number;
        job.name = std::string(id);
        const auto underscore = id.find('_');
        if (underscore != std::string_view::npos) {
            if (!parse_uint64(id.substr(0, underscore)) || !parse_uint64(id.substr(underscore + 1))) {
                return err("JobID", id, "is not JOBID or JOBID_TASK");
            }
            job.sweep = "array-" + std::string(id.substr(0, underscore));
        } else if (!parse_uint64(id.substr(0, id.find('+')))) {
            return err("JobID", id, "is not a Slurm job id");
        }
        const auto submit_cell = cells[columns.at("Submit")];
        auto submit = parse_timestamp(trim(submit_cell));
        if (!submit) return err("Submit", submit_cell, "is not a time (YYYY-MM-DDTHH:MM:SS)");
        job.arrival = *submit;

        double duration = TraceJob::kUnknown;
        if (columns.has("ElapsedRaw")) {
            const auto cell = cells[columns.at("ElapsedRaw")];
            const auto v = parse_finite_double(trim(cell));
            if (!v || *v < 0) return err("ElapsedRaw", cell, "is not seconds >= 0");
            duration = *v;
        } else if (columns.has("Elapsed")) {
            const auto cell = cells[columns.at("Elapsed")];
            auto v = parse_slurm_elapsed(trim(cell));
            if (!v) return err("Elapsed", cell, v.error().message);
            duration = *v;
        } else {
            const auto start_cell = cells[columns.at("Start")];
            const auto end_cell = cells[columns.at("End")];
            if (!unknown_time(start_cell) && !unknown_time(end_cell)) {
                auto start = parse_timestamp(trim(start_cell));
                if (!start) return err("Start", start_cell, "is not a time");
                auto end = parse_timestamp(trim(end_cell));
                if (!end) return err("End", end_cell, "is not a time");
                if (*end < *start) return err("End", end_cell, "is before Start");
                duration = *end - *start;
            } else {
                duration = 0.0;
            }
        }
        std::optional<std::uint64_t> gpus;
        for (const char* c : gpu_columns) {
            if (gpus || !columns.has(c)) continue;
            gpus = gpus_in(cells[columns.at(c)], std::string_view(c).find("TRES") != std::string_view::npos);
        }
        // CPU-only jobs and jobs that never ran tell a GPU scheduler nothing.
        if (!gpus || *gpus == 0 || duration <= 0.0) {
            ++trace.skipped;
            continue;
        }
        if (*gpus > 1000000) return err("GPUs", std::to_string(*gpus), "is not a plausible GPU count");
        job.gpus = static_cast<std::uint32_t>(*gpus);
        job.duration = duration;
        if (columns.has("JobName")) job.job_name = std::string(trim(cells[columns.at("JobName")]));
        trace.jobs.push_back(std::move(job));
    }
    return trace;
}

}  // namespace

Result<double> parse_timestamp(std::string_view text) {
    // YYYY-MM-DD[ T]HH:MM:SS
    unsigned y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    const bool shape = text.size() == 19 && text[4] == '-' && text[7] == '-' &&
                       (text[10] == ' ' || text[10] == 'T') && text[13] == ':' && text[16] == ':';
    if (!shape || !parse_fixed_uint(text, 0, 4, y) || !parse_fixed_uint(text, 5, 2, mo) ||
        !parse_fixed_uint(text, 8, 2, d) || !parse_fixed_uint(text, 11, 2, h) ||
        !parse_fixed_uint(text, 14, 2, mi) || !parse_fixed_uint(text, 17, 2, s)) {
        return make_error("timestamp: '" + std::string(text) + "' is not YYYY-MM-DD HH:MM:SS");
    }
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) {
        return make_error("timestamp: '" + std::string(text) + "' has a field out of range");
    }
    const long long days = days_from_civil(y, mo, d);
    return static_cast<double>(days * 86400 + h * 3600 + mi * 60 + s);
}

Result<double> parse_slurm_elapsed(std::string_view text) {
    const auto bad = [&] { return make_error("is not an elapsed time ([D-]HH:MM:SS)"); };
    double days = 0.0;
    const auto dash = text.find('-');
    if (dash != std::string_view::npos) {
        const auto d = parse_uint64(text.substr(0, dash));
        if (!d) return bad();
        days = static_cast<double>(*d);
        text = text.substr(dash + 1);
    }
    const auto parts = split(text, ":");
    if (parts.empty() || parts.size() > 3) return bad();
    double seconds = 0.0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const bool last = i + 1 == parts.size();
        std::optional<double> v;
        if (last) {
            v = parse_finite_double(parts[i]);
        } else if (auto u = parse_uint64(parts[i])) {
            v = static_cast<double>(*u);
        }
        if (!v || *v < 0) return bad();
        seconds = seconds * 60.0 + *v;
    }
    return days * 86400.0 + seconds;
}

Result<Trace> parse_trace(std::string_view text, const std::string& source, TraceFormat format) {
    const auto lines = split_lines(text);
    if (lines.empty()) return make_error(source + ": empty trace, expected a header line");
    if (format == TraceFormat::automatic) {
        const std::string_view header = lines[0].text;
        if (header.find('|') != std::string_view::npos && header.find("JobID") != std::string_view::npos) {
            format = TraceFormat::sacct;
        } else if (header.find("num_replicas") != std::string_view::npos &&
                   header.find("application") != std::string_view::npos) {
            format = TraceFormat::pollux;
        } else if (header.find("timestamp") != std::string_view::npos &&
                   header.find("num_gpus") != std::string_view::npos) {
            format = TraceFormat::philly;
        } else {
            return make_error(source + ":" + std::to_string(lines[0].number) + ": header '" +
                              std::string(header.substr(0, 80)) +
                              "' is not a philly, pollux or sacct -P header");
        }
    }
    Result<Trace> parsed = format == TraceFormat::philly   ? parse_philly(lines, source)
                           : format == TraceFormat::pollux ? parse_pollux(lines, source)
                                                           : parse_sacct(lines, source);
    if (!parsed) return parsed;
    Trace& trace = parsed.value();
    if (trace.jobs.empty()) return make_error(source + ": no jobs in trace");
    std::stable_sort(trace.jobs.begin(), trace.jobs.end(),
                     [](const TraceJob& a, const TraceJob& b) { return a.arrival < b.arrival; });
    const double origin = trace.jobs.front().arrival;
    for (TraceJob& job : trace.jobs) job.arrival -= origin;
    return parsed;
}

Result<Trace> read_trace(const std::string& path, TraceFormat format) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path + ": cannot open: " + std::strerror(errno));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) return make_error(path + ": read failed");
    return parse_trace(buffer.str(), path, format);
}

}  // namespace explsched::sim
