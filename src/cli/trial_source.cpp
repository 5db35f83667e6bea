#include "cli/trial_source.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "cli/daemon_curve.hpp"
#include "core/base/strings.hpp"
#include "core/curves/curve_csv.hpp"
#include "core/curves/curve_ensemble.hpp"
#include "core/report/report_feed.hpp"
#include "core/report/report_store.hpp"
#include "core/sched/gpu_types.hpp"
#include "core/sched/job_summary.hpp"
#include "core/sched/settings.hpp"

namespace explsched::cli {

namespace {

constexpr double kEpoch = 1.0e9;  // the offline round's clock (the engine treats 0 as unknown)

Result<double> parse_number(const std::string& option, const std::string& text, double min) {
    const auto v = parse_finite_double(text);
    if (!v || *v < min)
        return make_error(option + ": '" + text + "' is not a number >= " + std::to_string(min));
    return *v;
}

// Falling curves are minimised (loss, error rate), rising ones maximised.
Direction infer_direction(const std::vector<CurvePoint>& points) {
    std::vector<double> finite;
    for (const CurvePoint& p : points) {
        if (std::isfinite(p.metric)) finite.push_back(p.metric);
    }
    if (finite.size() < 2) return Direction::maximize;
    const std::size_t k = std::max<std::size_t>(1, finite.size() / 4);
    double head = 0.0, tail = 0.0;
    for (std::size_t i = 0; i < k; ++i) {
        head += finite[i];
        tail += finite[finite.size() - 1 - i];
    }
    return tail < head ? Direction::minimize : Direction::maximize;
}

AssessmentView view_of(const Assessment& a) {
    AssessmentView v;
    v.priority = a.priority;
    v.utility = a.utility;
    v.price = a.price;
    v.state = to_string(a.state);
    v.decision = to_string(a.decision);
    v.reason = explain(a);
    v.prediction = a.prediction;
    v.engine = a;
    return v;
}

double number_or_nan(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}

// A record's fields as the types they should be; a field of another type (a hand-edited or
// foreign file) reads as absent rather than ending the command.
std::string string_or_empty(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A whole number in [0, limit] under KEY, else FALLBACK.
std::uint64_t count_or(const nlohmann::json& j, const char* key, std::uint64_t fallback,
                       double limit = 4294967295.0) {
    const double v = number_or_nan(j, key);
    return v >= 0.0 && v <= limit ? static_cast<std::uint64_t>(v) : fallback;
}

bool bool_or_false(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::optional<AssessmentView> assessment_from_json(const nlohmann::json& record) {
    const auto it = record.find("assessment");
    if (it == record.end() || !it->is_object()) return std::nullopt;
    const nlohmann::json& a = *it;
    AssessmentView v;
    v.priority = static_cast<std::uint32_t>(count_or(a, "priority", 0));
    v.utility = number_or_nan(a, "utility");
    v.price = number_or_nan(a, "price");
    v.state = string_or_empty(a, "state");
    v.decision = string_or_empty(a, "decision");
    v.reason = string_or_empty(a, "reason");
    if (const auto p = a.find("prediction"); p != a.end() && p->is_object()) {
        v.prediction.value = number_or_nan(*p, "value");
        v.prediction.lower = number_or_nan(*p, "lower");
        v.prediction.upper = number_or_nan(*p, "upper");
        v.prediction.horizon = number_or_nan(*p, "horizon");
        v.prediction.extrapolated = bool_or_false(*p, "extrapolated");
        const double observed = number_or_nan(*p, "observed");
        v.prediction.observed =
            observed >= 0.0 && observed < 1e15 ? static_cast<std::size_t>(observed) : std::size_t{0};
        const double widened = number_or_nan(*p, "widened");
        v.prediction.widened = std::isfinite(widened) ? std::max(1.0, widened) : 1.0;
        const double jump = number_or_nan(*p, "jump");
        v.prediction.jump_allowance = std::isfinite(jump) && jump > 0.0 ? jump : 0.0;
        const double lead = number_or_nan(*p, "track_lead"), chance = number_or_nan(*p, "track_chance");
        const bool on_track = std::isfinite(lead) && lead > 0.0 && chance >= 0.0 && chance <= 1.0;
        v.prediction.track_lead = on_track ? lead : 0.0;
        v.prediction.track_chance = on_track ? chance : 0.0;
    }
    return v;
}

// The array under KEY, or an empty one when the record has none or something else there.
const nlohmann::json& array_or_empty(const nlohmann::json& record, const char* key) {
    static const nlohmann::json empty = nlohmann::json::array();
    const auto it = record.find(key);
    return it != record.end() && it->is_array() ? *it : empty;
}

// A [step, metric, wall_time] row; rows whose step is not a number are skipped.
bool row_step_metric(const nlohmann::json& row, double& step, double& metric) {
    if (!row.is_array() || row.empty() || !row[0].is_number()) return false;
    step = row[0].get<double>();
    metric = row.size() > 1 && row[1].is_number() ? row[1].get<double>() : NAN;
    return true;
}

std::vector<CurvePoint> points_from_json(const nlohmann::json& record) {
    std::vector<CurvePoint> points;
    for (const auto& row : array_or_empty(record, "points")) {
        CurvePoint p;
        if (!row_step_metric(row, p.step, p.metric)) continue;
        p.wall_time = row.size() > 2 && row[2].is_number() ? row[2].get<double>() : NAN;
        points.push_back(p);
    }
    return points;
}

std::vector<TrialMark> marks_from_json(const nlohmann::json& record) {
    std::vector<TrialMark> marks;
    for (const auto& m : array_or_empty(record, "marks")) {
        if (!m.is_object()) continue;
        const double time = number_or_nan(m, "time"), step = number_or_nan(m, "step");
        marks.push_back({std::isfinite(time) ? time : 0.0, std::isfinite(step) ? step : 0.0,
                         string_or_empty(m, "what"), string_or_empty(m, "note")});
    }
    return marks;
}

std::vector<std::pair<double, double>> truth_from_json(const nlohmann::json& record) {
    std::vector<std::pair<double, double>> truth;
    for (const auto& row : array_or_empty(record, "curve")) {
        double step = 0.0, metric = NAN;
        if (row_step_metric(row, step, metric)) truth.emplace_back(step, metric);
    }
    return truth;
}

Result<std::vector<CurvePoint>> read_points(const std::string& path, const SourceOptions& options) {
    auto csv = read_curve_csv(path, options.metric_column);
    if (!csv) return csv.error();
    std::vector<CurvePoint> points = std::move(csv->points);
    if (points.empty()) return make_error(path + ": no points");
    if (options.steps_per_second > 0.0) {
        // A constant speed: each report's run time is its step over the speed.
        for (CurvePoint& p : points) {
            p.wall_time = p.step / options.steps_per_second;
            p.throughput = options.steps_per_second;
        }
    }
    return points;
}

// "Key = Value" / "Key=Value" lines: the value of each of `keys` (matched without case; the last
// line wins), "(null)" read as empty. Comments ('#' to the end of a line) are skipped.
void read_key_values(FILE* in, std::vector<std::pair<std::string, std::string>>& keys) {
    char line[8192];
    while (std::fgets(line, sizeof line, in) != nullptr) {
        std::string_view l = line;
        if (const auto hash = l.find('#'); hash != std::string_view::npos) l = l.substr(0, hash);
        l = trim(l);
        const auto eq = l.find('=');
        if (eq == std::string_view::npos) continue;
        const std::string_view key = trim(l.substr(0, eq));
        std::string value(trim(l.substr(eq + 1)));
        if (value == "(null)") value.clear();
        for (auto& [name, v] : keys) {
            if (key.size() == name.size() &&
                std::equal(key.begin(), key.end(), name.begin(), [](char a, char b) {
                    return std::tolower(static_cast<unsigned char>(a)) ==
                           std::tolower(static_cast<unsigned char>(b));
                }))
                v = value;
        }
    }
}

// The engine settings slurmctld runs with, from `scontrol show config`: PriorityParameters under
// priority/explsched; under priority/multifactor with site_factor/explsched,
// PrioritySiteFactorParameters. Slurm 22.05 and 24.11 report the site factor plugin and its
// parameters as (null) there, so where slurmctld names none they are read from the slurm.conf it
// names (SLURM_CONF; Include files are not followed). The label names the key.
Result<std::pair<EngineSettings, std::string>> slurm_engine_settings() {
    enum { type, site_plugin, priority_params, site_params, conf };
    std::vector<std::pair<std::string, std::string>> keys = {{"PriorityType", ""},
                                                             {"PrioritySiteFactorPlugin", ""},
                                                             {"PriorityParameters", ""},
                                                             {"PrioritySiteFactorParameters", ""},
                                                             {"SLURM_CONF", ""}};
    {
        std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen("scontrol show config 2>/dev/null", "r"),
                                                   ::pclose);
        if (!pipe) return make_error("cannot run scontrol: " + std::string(std::strerror(errno)));
        read_key_values(pipe.get(), keys);
    }
    const std::string& priority_type = keys[type].second;
    if (priority_type.empty()) return make_error("scontrol show config gave no PriorityType");
    const auto parse = [](const std::string& key, const std::string& text,
                          const std::string& from) -> Result<std::pair<EngineSettings, std::string>> {
        auto parsed = parse_settings(text, ",");
        if (!parsed) return make_error(key + ": " + parsed.error().message);
        if (auto ok = validate(parsed->engine); !ok) return make_error(key + ": " + ok.error().message);
        return std::make_pair(parsed->engine, "the site's " + key + from);
    };
    if (priority_type == "priority/explsched")
        return parse("PriorityParameters", keys[priority_params].second, "");
    std::string from;
    if (keys[site_plugin].second.empty() && !keys[conf].second.empty()) {
        std::vector<std::pair<std::string, std::string>> file_keys = {{"PrioritySiteFactorPlugin", ""},
                                                                      {"PrioritySiteFactorParameters", ""}};
        std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(keys[conf].second.c_str(), "re"), std::fclose);
        if (!file)
            return make_error("cannot read " + keys[conf].second +
                              " for PrioritySiteFactorParameters: " + std::strerror(errno));
        read_key_values(file.get(), file_keys);
        keys[site_plugin].second = file_keys[0].second;
        keys[site_params].second = file_keys[1].second;
        from = " (" + keys[conf].second + ")";
    }
    if (keys[site_plugin].second == "site_factor/explsched")
        return parse("PrioritySiteFactorParameters", keys[site_params].second, from);
    return make_error(
        "ExplSched is not this cluster's priority or site factor plugin (PriorityType " + priority_type +
        ", no PrioritySiteFactorPlugin=site_factor/explsched" +
        (from.empty() ? std::string() : " in " + keys[conf].second + "; Include files are not read") + ")");
}

// --params over what the source gave (checked by parse_source_options).
void apply_params(TrialInfo& t, const SourceOptions& options) {
    if (options.params.empty()) return;
    Settings base;
    base.engine = t.settings;
    auto parsed = parse_settings(options.params, ",", base);
    Status ok = parsed ? validate(parsed->engine) : Status(parsed.error());
    if (!ok) {  // valid alone (parse_source_options), not over these settings
        t.settings_from += " (--params not applied over them: " + ok.error().message + ")";
        return;
    }
    t.settings = parsed->engine;
    t.settings_from += " with --params " + options.params;
}

Result<TrialInfo> load_offline(const SourceOptions& options) {
    auto points = read_points(options.curve, options);
    if (!points) return points.error();
    TrialInfo t;
    t.name = options.curve;
    t.source = "curve " + options.curve;
    t.group = options.siblings.empty() ? std::string() : "offline";
    t.state_text = "running";
    t.points = std::move(points.value());
    if (!options.direction.empty()) {
        auto d = parse_direction(options.direction);
        if (!d) return make_error("--direction: " + d.error().message);
        t.direction = *d;
    } else {
        std::string origin;
        auto d = curve_file_direction(options.curve, t.points, origin);
        if (!d) return d.error();
        t.direction = *d;
    }
    t.max_steps = options.max_steps;
    t.gpus = options.gpus;
    t.load = options.load;
    apply_params(t, options);
    std::vector<std::vector<CurvePoint>> sibling_points;
    for (const std::string& path : options.siblings) {
        auto sp = read_points(path, options);
        if (!sp) return sp.error();
        sibling_points.push_back(std::move(sp.value()));
    }
    // One engine round: the trial and its siblings, running, past their grace period, at the
    // given load. With no sibling the trial is its own group (so it is valued and priced).
    auto engine = Engine::create(t.settings);
    if (!engine) return engine.error();
    std::vector<JobView> jobs;
    const auto make_view = [&](std::uint32_t id, const std::vector<CurvePoint>& pts) {
        JobView v;
        v.key.job_id = id;
        v.group = "offline";
        v.direction = t.direction;
        v.max_steps = t.max_steps;
        v.gpus = t.gpus;
        v.state = JobState::running;
        v.submit_time = kEpoch - 7200.0;
        v.start_time = kEpoch - 3600.0;
        v.points = PointSpan(pts);
        return v;
    };
    jobs.push_back(make_view(1, t.points));
    for (std::size_t i = 0; i < sibling_points.size(); ++i) {
        jobs.push_back(make_view(static_cast<std::uint32_t>(i + 2), sibling_points[i]));
    }
    ClusterView cluster;
    cluster.now = kEpoch;
    cluster.total_gpus = std::max<std::uint32_t>(options.total_gpus, 1);
    cluster.busy_gpus =
        static_cast<std::int64_t>(std::lround(std::clamp(options.load, 0.0, 1.0) * cluster.total_gpus));
    std::vector<Assessment> out;
    if (auto ok = engine->evaluate(jobs, cluster, out); !ok) return ok.error();
    t.assessment = view_of(out[0]);
    t.price_lower = engine->last_round().price_lower;
    t.price_upper = engine->last_round().price_upper;
    for (std::size_t i = 0; i < sibling_points.size(); ++i) {
        Sibling s;
        s.name = options.siblings[i];
        s.state_text = "running";
        s.points = sibling_points[i];
        s.assessment = view_of(out[i + 1]);
        t.siblings.push_back(std::move(s));
    }
    return t;
}

// "Key=Value" fields of `scontrol show job` output; SystemComment runs to the end of its line.
struct ScontrolJob {
    std::string state, system_comment;
    std::uint32_t priority = 0;
    std::uint32_t gpus = 0;
    std::optional<std::uint64_t> job_id;      // JobId
    std::optional<std::uint64_t> array_task;  // ArrayTaskId, when a single task (not "2-9")
    bool requeue = true, batch = true;        // Requeue, BatchFlag (0: slurmctld would not requeue it)
};

// One record per job: `scontrol show job ID` of an array's job id prints a record for every task
// of the array (the task that kept the array's id among them), separated by blank lines.
Result<std::vector<ScontrolJob>> scontrol_show_job(const std::string& job) {
    const std::string command = "scontrol show job " + job + " 2>&1";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
    if (!pipe) return make_error("scontrol: cannot run: " + std::string(std::strerror(errno)));
    std::string text;
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, pipe.get()) != nullptr) text += buffer;
    const int status = ::pclose(pipe.release());
    if (status != 0) return make_error("scontrol show job " + job + ": " + std::string(trim(text)));
    std::vector<ScontrolJob> records;
    ScontrolJob out;
    bool any = false;  // a field of the current record was read
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        const std::string_view l = trim(line);
        if (l.empty()) {
            if (any) records.push_back(std::move(out));
            out = ScontrolJob{};
            any = false;
            continue;
        }
        any = true;
        if (l.rfind("SystemComment=", 0) == 0) {
            out.system_comment = std::string(l.substr(14));
            continue;
        }
        for (auto field : split(l, " ")) {
            const auto eq = field.find('=');
            if (eq == std::string_view::npos) continue;
            const auto key = field.substr(0, eq), value = field.substr(eq + 1);
            if (key == "JobState") out.state = std::string(value);
            if (key == "JobId") out.job_id = parse_uint64(value);
            if (key == "ArrayTaskId") out.array_task = parse_uint64(value);
            if (key == "Requeue") out.requeue = value != "0";
            if (key == "BatchFlag") out.batch = value != "0";
            if (key == "Priority") out.priority = static_cast<std::uint32_t>(parse_uint64(value).value_or(0));
            if (key == "TRES" || key == "ReqTRES") {
                for (auto item : split(value, ",")) {
                    if (item.rfind("gres/gpu=", 0) == 0) {
                        out.gpus = static_cast<std::uint32_t>(parse_uint64(item.substr(9)).value_or(0));
                    }
                }
            }
        }
    }
    if (any) records.push_back(std::move(out));
    if (records.empty()) return make_error("scontrol show job " + job + ": no job record");
    return records;
}

// The record of job `id` among them (an array's id: the task that kept it), else an error.
Result<ScontrolJob> record_of(const std::vector<ScontrolJob>& records, std::uint64_t id) {
    for (const ScontrolJob& r : records)
        if (r.job_id == id) return r;
    return make_error("scontrol shows no record of job " + std::to_string(id));
}

bool all_digits(std::string_view s) {
    return !s.empty() && s.size() <= 10 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Result<Direction> curve_file_direction(const std::string& path, const std::vector<CurvePoint>& points,
                                       std::string& origin) {
    const std::string dir = std::filesystem::path(path).parent_path().string();
    auto declared = read_direction_file(dir);
    if (!declared) return make_error(declared.error().message + " (or give --direction)");
    if (!*declared) {
        origin = ", inferred";
        return infer_direction(points);
    }
    origin = ", from " + (std::filesystem::path(dir) / "direction").string();
    return **declared;
}

bool is_job_name(std::string_view job) {
    if (all_digits(job)) return true;
    const auto us = job.find('_');
    return us != std::string_view::npos && all_digits(job.substr(0, us)) && all_digits(job.substr(us + 1));
}

namespace {

// A job id, or an array task as ARRAYID_INDEX (what squeue and sacct print): that task's own job
// id, from `scontrol show job` (only digits and one '_' reach the shell). A task that has not
// started has no record of its own yet (scontrol shows the array's pending remainder).
Result<std::uint32_t> live_job_id(const std::string& job) {
    const auto bad = [&] {
        return make_error("job '" + job + "': not a job id or an array task (ARRAYID_INDEX, e.g. 1234_7)");
    };
    if (!is_job_name(job)) return bad();
    if (all_digits(job)) {
        const auto id = parse_uint64(job);
        if (!id || *id == 0 || *id > 0xffffffffULL) return bad();
        return static_cast<std::uint32_t>(*id);
    }
    const auto us = job.find('_');
    auto records = scontrol_show_job(job);
    if (!records) return records.error();
    const auto index = parse_uint64(std::string_view(job).substr(us + 1));  // "07" is task 7
    for (const ScontrolJob& sc : *records)
        if (index && sc.array_task == index && sc.job_id && *sc.job_id > 0 && *sc.job_id <= 0xffffffffULL)
            return static_cast<std::uint32_t>(*sc.job_id);
    return make_error("array task " + job + " has not started: it has no job of its own yet");
}

Result<TrialInfo> load_live(const std::string& job_arg, const SourceOptions& options) {
    const auto id = live_job_id(job_arg);
    if (!id) return id.error();
    const std::string job = std::to_string(*id);
    std::string db = options.db;
    std::string no_store;  // why there is no curve to read (the ranking line may still be there)
    if (db.empty()) {
        auto site = site_settings();  // explschedd.conf names the store
        if (!site) no_store = site.error().message;
        if (site) db = site->report_db;
    }
    std::vector<StoredReport> rows;
    std::string source = "live (" + db + ")";
    if (!no_store.empty()) {
        source = "live (SystemComment only; no curve: " + no_store + ")";
    } else if (auto reader = ReportReader::open(db)) {
        auto read = (*reader)->latest_job_curve(static_cast<std::uint32_t>(*id));
        if (!read) return make_error("report store: " + read.error().message);
        rows = std::move(read).value();
    } else if (::access(db.c_str(), R_OK) != 0 && errno == EACCES) {
        // Only SlurmUser and root may read the store: ask explschedd for the caller's own curve.
        auto remote = cli::read_curve_from_daemon(static_cast<std::uint32_t>(*id));
        if (!remote)
            return make_error("report store: " + reader.error().message +
                              "; asking explschedd instead: " + remote.error().message);
        rows = std::move(remote->rows);
        source = "live (explschedd at " + remote->address + ")";
    } else {
        no_store = "report store: " + reader.error().message;
        source = "live (SystemComment only; no curve: " + no_store + ")";
    }
    TrialInfo t;
    t.name = job_arg == job ? job : job_arg + " (job " + job + ")";
    t.source = source;
    const double t0 = rows.empty() ? 0.0 : rows.front().client_time;
    for (const StoredReport& r : rows) t.points.push_back(curve_point(r, ReportClock::client, t0));
    const auto direction = parse_direction(options.direction);  // checked by parse_source_options
    t.direction = options.direction.empty() || !direction ? infer_direction(t.points) : *direction;
    t.max_steps = options.max_steps;
    if (auto site = slurm_engine_settings()) {
        std::tie(t.settings, t.settings_from) = std::move(site).value();
    } else {
        t.settings_from = "the engine's defaults (the site's are unknown: " + site.error().message + ")";
    }
    apply_params(t, options);
    auto records = scontrol_show_job(job);
    auto sc = records ? record_of(*records, *id) : Result<ScontrolJob>(records.error());
    if (sc) {
        t.state_text = sc->state;
        if (sc->gpus > 0) t.gpus = sc->gpus;
        t.requeueable = sc->requeue && sc->batch;
        if (!sc->system_comment.empty()) {
            auto summary = parse_summary_line(sc->system_comment);
            if (summary) {
                AssessmentView v;
                v.priority = sc->priority;
                v.utility = summary->utility;
                v.price = summary->price;
                v.state = to_string(summary->state);
                v.decision = to_string(summary->decision);
                v.reason = summary->reason;
                v.prediction = summary->prediction;
                if (summary->gpu_known)
                    v.gpu_text = describe_gpu_value(summary->gpu_type, summary->gpu_value.how,
                                                    summary->gpu_value.ratio, summary->measured_gpu_type,
                                                    summary->model);
                t.assessment = v;
                t.load = summary->load;
                if (std::isfinite(v.prediction.horizon) && t.max_steps <= 0.0)
                    t.max_steps = v.prediction.horizon;
            }
        }
    } else {
        t.state_text = "unknown (" + sc.error().message + ")";
    }
    if (t.points.empty() && !t.assessment) {
        if (!no_store.empty()) return make_error(no_store);
        return make_error("job " + job + ": no reports in " + db + " and no assessment from slurmctld");
    }
    return t;
}

}  // namespace

const char* source_options_help() {
    return "Where the trial comes from (default: the live cluster):\n"
           "  JOBID                   live: curve from the report store, assessment from slurmctld;\n"
           "                          a job id, or an array task as ARRAYID_INDEX (1234_7)\n"
           "    --db PATH             report store (default: report_db of $EXPLSCHED_CONF or "
           "/etc/slurm/explschedd.conf)\n"
           "  --curve FILE            offline: a curve CSV, assessed by the engine as one round\n"
           "    --sibling FILE        another trial of its sweep (repeatable)\n"
           "    --direction min|max   metric direction (default: the `direction` file beside FILE,\n"
           "                          else inferred from the curve)\n"
           "    --max-steps N         the step the trial stops at (default: unknown)\n"
           "    --steps-per-second R  its speed (needed for utility and price)\n"
           "    --gpus N --load U --total-gpus N   its GPUs and the cluster load priced (default 1, 1.0, "
           "64)\n"
           "    --metric-column NAME  metric column (default metric)\n"
           "  --sim RESULT.json       a trial of `explsched-sim --output` (JOBID = simulated job id)\n"
           "    --policy NAME --seed S  which run (default explsched, the first seed)\n"
           "  --params 'k=v,...'      engine settings to judge by, over the site's or the run's (what if)\n";
}

Result<SourceOptions> parse_source_options(std::vector<std::string>& args) {
    SourceOptions o;
    std::vector<std::string> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        static const char* const kWithValue[] = {
            "--curve", "--sibling", "--metric-column",    "--direction", "--max-steps",
            "--gpus",  "--load",    "--total-gpus",       "--sim",       "--policy",
            "--seed",  "--db",      "--steps-per-second", "--params"};
        bool known = false;
        for (const char* k : kWithValue) known = known || a == k;
        if (!known) {
            rest.push_back(a);
            continue;
        }
        if (i + 1 >= args.size()) return make_error(a + ": needs a value");
        const std::string v = args[++i];
        if (a == "--curve")
            o.curve = v;
        else if (a == "--sibling")
            o.siblings.push_back(v);
        else if (a == "--metric-column")
            o.metric_column = v;
        else if (a == "--direction") {
            if (!parse_direction(v)) return make_error("--direction: '" + v + "' is neither min nor max");
            o.direction = v;
        } else if (a == "--max-steps") {
            auto n = parse_number(a, v, 0.0);
            if (!n) return n.error();
            o.max_steps = *n;
        } else if (a == "--gpus" || a == "--total-gpus") {
            const auto n = parse_uint64(v);
            if (!n || *n == 0 || *n > 1000000) return make_error(a + ": '" + v + "' is not a GPU count");
            (a == "--gpus" ? o.gpus : o.total_gpus) = static_cast<std::uint32_t>(*n);
        } else if (a == "--load") {
            auto n = parse_number(a, v, 0.0);
            if (!n) return n.error();
            if (*n > 1.0) return make_error("--load: '" + v + "' is not a fraction in [0, 1]");
            o.load = *n;
        } else if (a == "--steps-per-second") {
            auto n = parse_number(a, v, 0.0);
            if (!n) return n.error();
            o.steps_per_second = *n;
        } else if (a == "--sim")
            o.sim = v;
        else if (a == "--policy")
            o.policy = v;
        else if (a == "--seed") {
            const auto n = parse_uint64(v);
            if (!n) return make_error("--seed: '" + v + "' is not a seed");
            o.seed = *n;
            o.have_seed = true;
        } else if (a == "--db") {
            o.db = v;
        } else if (a == "--params") {
            auto parsed = parse_settings(v, ",");
            if (!parsed) return make_error("--params: " + parsed.error().message);
            if (auto ok = validate(parsed->engine); !ok) return make_error("--params: " + ok.error().message);
            o.params = v;
        }
    }
    if (!o.curve.empty() && !o.sim.empty()) return make_error("give --curve or --sim, not both");
    args = std::move(rest);
    return o;
}

Result<nlohmann::json> read_sim_result(const std::string& path) {
    std::ifstream in(path);
    if (!in) return make_error(path + ": cannot open: " + std::strerror(errno));
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return make_error(path + ": not a JSON object (an explsched-sim --output file?)");
    if (!j.contains("results") && !j.contains("mean")) {
        return make_error(path + ": no 'results' or 'mean': not an explsched-sim result");
    }
    return j;
}

Result<const nlohmann::json*> find_run(const nlohmann::json& result, const std::string& policy,
                                       std::uint64_t seed, bool have_seed) {
    const auto it = result.find("results");
    if (it == result.end() || !it->is_array() || it->empty()) {
        return make_error("simulator result has no per-trial records (run explsched-sim with --output FILE)");
    }
    std::string runs;
    for (const auto& run : *it) {
        const std::string p = string_or_empty(run, "policy");
        const std::uint64_t s = count_or(run, "seed", 0, 1.8e19);
        runs += (runs.empty() ? "" : ", ") + p + "/" + std::to_string(s);
        if (p == policy && (!have_seed || s == seed)) return &run;
    }
    return make_error("no run of policy '" + policy + "'" +
                      (have_seed ? " seed " + std::to_string(seed) : "") + " in the result (it has " + runs +
                      ")");
}

TrialInfo trial_from_record(const nlohmann::json& record, const nlohmann::json& run,
                            const std::string& source) {
    TrialInfo t;
    t.name = std::to_string(count_or(record, "id", 0));
    t.source = source;
    t.group = string_or_empty(record, "sweep");
    t.state_text = string_or_empty(record, "status");
    t.direction = string_or_empty(record, "direction") == "min" ? Direction::minimize : Direction::maximize;
    const double max_step = number_or_nan(record, "max_step");
    t.max_steps = std::isfinite(max_step) && max_step > 0.0 ? max_step : 0.0;
    t.gpus = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, count_or(record, "gpus", 1, 1e6)));
    t.points = points_from_json(record);
    t.truth = truth_from_json(record);
    t.assessment = assessment_from_json(record);
    t.marks = marks_from_json(record);
    for (const auto& other : array_or_empty(run, "trials")) {
        if (string_or_empty(other, "sweep") != t.group ||
            count_or(other, "id", 0) == count_or(record, "id", 0))
            continue;
        Sibling s;
        s.name = std::to_string(count_or(other, "id", 0));
        s.state_text = string_or_empty(other, "status");
        s.points = points_from_json(other);
        s.truth = truth_from_json(other);
        s.assessment = assessment_from_json(other);
        s.marks = marks_from_json(other);
        t.siblings.push_back(std::move(s));
    }
    return t;
}

Result<TrialInfo> load_trial(const std::string& job, const SourceOptions& options) {
    if (!options.curve.empty()) return load_offline(options);
    if (!options.sim.empty()) {
        if (job.empty()) return make_error("--sim needs a JOBID (a simulated job id)");
        auto result = read_sim_result(options.sim);
        if (!result) return result.error();
        auto run = find_run(*result, options.policy, options.seed, options.have_seed);
        if (!run) return run.error();
        for (const auto& record : array_or_empty(**run, "trials")) {
            if (std::to_string(count_or(record, "id", 0)) == job || string_or_empty(record, "name") == job) {
                const std::string source = "sim " + options.sim + " (" + string_or_empty(**run, "policy") +
                                           ", seed " + std::to_string(count_or(**run, "seed", 0, 1.8e19)) +
                                           ")";
                TrialInfo t = trial_from_record(record, **run, source);
                // the run's --params (its min_run_s: --min-run wins over a min_run in them)
                static const nlohmann::json no_config = nlohmann::json::object();
                const auto c = result->find("config");
                const nlohmann::json& config = c != result->end() && c->is_object() ? *c : no_config;
                const std::string params = string_or_empty(config, "params");
                if (auto parsed = parse_settings(params, ",")) {
                    t.settings = parsed->engine;
                    if (!params.empty()) t.settings_from = "the run's --params " + params;
                } else {
                    t.settings_from = "the engine's defaults (the run's --params are unreadable: " +
                                      parsed.error().message + ")";
                }
                const double min_run = number_or_nan(config, "min_run_s");
                if (std::isfinite(min_run) && min_run >= 0.0) t.settings.min_run_s = min_run;
                apply_params(t, options);
                return t;
            }
        }
        return make_error("job " + job + ": not in " + options.sim);
    }
    if (job.empty()) return make_error("give a JOBID, --curve FILE or --sim RESULT.json JOBID");
    return load_live(job, options);
}

std::vector<std::array<double, 4>> predicted_path(const TrialInfo& trial, std::size_t samples) {
    std::vector<std::array<double, 4>> path;
    auto curve = clean_curve(PointSpan(trial.points));
    if (!curve || curve->steps.empty() || curve->diverged) return path;
    CurvePredictor predictor(trial.direction);
    predictor.assign(*curve);
    if (!predictor.fitted()) return path;
    const double s0 = predictor.last_step();
    const double s1 = trial.max_steps > s0 ? trial.max_steps : 2.0 * s0;
    for (std::size_t i = 0; i <= samples; ++i) {
        const double s = s0 + (s1 - s0) * static_cast<double>(i) / static_cast<double>(samples);
        const Prediction p = predictor.predict(s);
        path.push_back({s, p.value, p.lower, p.upper});
    }
    return path;
}

}  // namespace explsched::cli
