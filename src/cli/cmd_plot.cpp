// explsched plot JOBID | --group G [JOBID...] | --sim RESULT.json  -o FILE.png|.svg
// Draws a trial's curve with the engine's prediction band and the scheduler's decisions, a whole
// sweep, or (from a simulator result alone) the policy comparison. The data is prepared here;
// drawing is done by explsched_plot.py with Debian's python3-matplotlib.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/trial_source.hpp"

#ifndef EXPLSCHED_PKGDATADIR
#define EXPLSCHED_PKGDATADIR "/usr/share/explsched"
#endif
#ifndef EXPLSCHED_SRCDIR
#define EXPLSCHED_SRCDIR "."
#endif

namespace explsched::cli {

namespace {

void plot_usage(FILE* out) {
    std::fprintf(
        out,
        "usage: explsched plot JOBID | --group G [JOBID...] | --sim RESULT.json  -o FILE.png|FILE.svg\n"
        "  JOBID        one trial: its curve, the predicted path with its interval, decisions\n"
        "  --group G    every trial of sweep G (from --sim, or --curve with --sibling); on the\n"
        "               live cluster the trials given as JOBID... (each task's own job id)\n"
        "  --sim FILE   alone: the policy comparison of a simulator result\n"
        "  -o FILE      output; the extension picks PNG or SVG\n"
        "The script is found in $EXPLSCHED_PLOT_SCRIPT, %s, or the source tree.\n%s",
        EXPLSCHED_PKGDATADIR "/explsched_plot.py", source_options_help());
}

nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json trial_json(const std::string& name, const std::string& state,
                          const std::vector<CurvePoint>& points,
                          const std::vector<std::pair<double, double>>& truth,
                          const std::vector<TrialMark>& marks, const std::optional<AssessmentView>& a,
                          const std::vector<std::array<double, 4>>& path, bool highlight) {
    nlohmann::json j;
    j["name"] = name;
    j["state"] = state;
    j["highlight"] = highlight;
    nlohmann::json pts = nlohmann::json::array();
    for (const CurvePoint& p : points) pts.push_back({p.step, num(p.metric)});
    j["points"] = pts;
    nlohmann::json tr = nlohmann::json::array();
    for (const auto& [s, m] : truth) tr.push_back({s, num(m)});
    j["truth"] = tr;
    nlohmann::json pa = nlohmann::json::array();
    for (const auto& row : path) pa.push_back({row[0], num(row[1]), num(row[2]), num(row[3])});
    j["path"] = pa;
    nlohmann::json mk = nlohmann::json::array();
    for (const TrialMark& m : marks) mk.push_back({{"step", m.step}, {"what", m.what}, {"note", m.note}});
    j["marks"] = mk;
    if (a) {
        j["decision"] = a->reason.empty() ? a->decision : a->reason;
        j["prediction"] = {num(a->prediction.value), num(a->prediction.lower), num(a->prediction.upper),
                           num(a->prediction.horizon)};
    }
    return j;
}

std::string find_script() {
    if (const char* env = std::getenv("EXPLSCHED_PLOT_SCRIPT"); env != nullptr && *env != '\0') return env;
    for (const std::string& candidate : {std::string(EXPLSCHED_PKGDATADIR) + "/explsched_plot.py",
                                         std::string(EXPLSCHED_SRCDIR) + "/contrib/explsched_plot.py"}) {
        if (::access(candidate.c_str(), R_OK) == 0) return candidate;
    }
    return {};
}

// Runs /usr/bin/python3 SCRIPT SPEC OUT without a shell (paths may hold anything).
int run_script(const std::string& script, const std::string& spec, const std::string& out) {
    const pid_t pid = ::fork();
    if (pid < 0) {
        std::fprintf(stderr, "explsched plot: fork: %s\n", std::strerror(errno));
        return 1;
    }
    if (pid == 0) {
        const char* argv[] = {"/usr/bin/python3", script.c_str(), spec.c_str(), out.c_str(), nullptr};
        ::execv(argv[0], const_cast<char* const*>(argv));
        std::fprintf(stderr, "explsched plot: cannot run /usr/bin/python3: %s\n", std::strerror(errno));
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return 1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "explsched plot: %s failed (python3-matplotlib installed?)\n", script.c_str());
        return 1;
    }
    return 0;
}

}  // namespace

int cmd_plot(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    for (const std::string& a : args) {
        if (a == "-h" || a == "--help") {
            plot_usage(stdout);
            return 0;
        }
    }
    auto options = parse_source_options(args);
    if (!options) {
        std::fprintf(stderr, "explsched plot: %s\n", options.error().message.c_str());
        return 2;
    }
    std::string job, group, out;
    std::vector<std::string> more_jobs;  // --group on the live cluster: the sweep's other trials
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "-o" || a == "--output" || a == "--group") {
            if (i + 1 >= args.size()) {
                std::fprintf(stderr, "explsched plot: %s needs a value\n", a.c_str());
                return 2;
            }
            (a == "--group" ? group : out) = args[++i];
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "explsched plot: unknown option '%s'\n", a.c_str());
            plot_usage(stderr);
            return 2;
        } else if (job.empty()) {
            job = a;
        } else if (options->sim.empty() && options->curve.empty()) {
            more_jobs.push_back(a);  // one trial, unless --group (checked below)
        } else {
            std::fprintf(stderr, "explsched plot: one JOBID at a time\n");
            return 2;
        }
    }
    if (!more_jobs.empty() && group.empty()) {
        std::fprintf(stderr, "explsched plot: one JOBID at a time (several only with --group)\n");
        return 2;
    }
    const auto dot = out.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : out.substr(dot + 1);
    if (out.empty() || (ext != "png" && ext != "svg")) {
        std::fprintf(stderr, "explsched plot: -o FILE.png or FILE.svg is required\n");
        return 2;
    }
    nlohmann::json spec;
    if (!options->sim.empty() && job.empty() && group.empty()) {
        auto result = read_sim_result(options->sim);
        if (!result) {
            std::fprintf(stderr, "explsched plot: %s\n", result.error().message.c_str());
            return 1;
        }
        spec["kind"] = "compare";
        const auto slash = options->sim.rfind('/');
        spec["title"] = "policy comparison: " +
                        (slash == std::string::npos ? options->sim : options->sim.substr(slash + 1));
        spec["runs"] = result->value("runs", nlohmann::json::array());
        spec["mean"] = result->value("mean", nlohmann::json::object());
        spec["config"] = result->value("config", nlohmann::json::object());
    } else if (!group.empty()) {
        TrialInfo first;
        if (!options->sim.empty()) {
            auto result = read_sim_result(options->sim);
            if (!result) {
                std::fprintf(stderr, "explsched plot: %s\n", result.error().message.c_str());
                return 1;
            }
            auto run = find_run(*result, options->policy, options->seed, options->have_seed);
            if (!run) {
                std::fprintf(stderr, "explsched plot: %s\n", run.error().message.c_str());
                return 1;
            }
            bool found = false;
            const auto trials = (*run)->find("trials");
            for (const auto& record :
                 trials != (*run)->end() && trials->is_array() ? *trials : nlohmann::json::array()) {
                const auto sweep = record.is_object() ? record.find("sweep") : record.end();
                if (sweep != record.end() && sweep->is_string() && *sweep == group) {
                    first = trial_from_record(record, **run, options->sim);
                    found = true;
                    break;
                }
            }
            if (!found) {
                std::fprintf(stderr, "explsched plot: sweep '%s' is not in %s\n", group.c_str(),
                             options->sim.c_str());
                return 1;
            }
        } else {
            auto t = load_trial(job, *options);
            if (!t) {
                std::fprintf(stderr, "explsched plot: %s\n", t.error().message.c_str());
                return 1;
            }
            first = std::move(t.value());
        }
        spec["kind"] = "group";
        spec["title"] = "sweep " + group;
        spec["direction"] = to_string(first.direction);
        spec["trials"].push_back(trial_json(first.name, first.state_text, first.points, first.truth,
                                            first.marks, first.assessment, {}, false));
        for (const Sibling& s : first.siblings) {
            spec["trials"].push_back(
                trial_json(s.name, s.state_text, s.points, s.truth, s.marks, s.assessment, {}, false));
        }
        for (const std::string& other : more_jobs) {
            auto t = load_trial(other, *options);
            if (!t) {  // a trial cancelled before its first report has nothing to draw
                std::fprintf(stderr, "explsched plot: skipping %s: %s\n", other.c_str(),
                             t.error().message.c_str());
                continue;
            }
            spec["trials"].push_back(
                trial_json(t->name, t->state_text, t->points, t->truth, t->marks, t->assessment, {}, false));
        }
    } else {
        auto t = load_trial(job, *options);
        if (!t) {
            std::fprintf(stderr, "explsched plot: %s\n", t.error().message.c_str());
            return 1;
        }
        spec["kind"] = "trial";
        spec["title"] = "job " + t->name + (t->group.empty() ? "" : " (sweep " + t->group + ")");
        spec["direction"] = to_string(t->direction);
        spec["trials"].push_back(trial_json(t->name, t->state_text, t->points, t->truth, t->marks,
                                            t->assessment, predicted_path(*t), true));
        for (const Sibling& s : t->siblings) {
            spec["trials"].push_back(
                trial_json(s.name, s.state_text, s.points, {}, {}, s.assessment, {}, false));
        }
    }
    const std::string script = find_script();
    if (script.empty()) {
        std::fprintf(stderr, "explsched plot: explsched_plot.py not found (set EXPLSCHED_PLOT_SCRIPT)\n");
        return 1;
    }
    char spec_path[] = "/tmp/explsched-plot-XXXXXX";
    const int fd = ::mkstemp(spec_path);
    if (fd < 0) {
        std::fprintf(stderr, "explsched plot: temporary file: %s\n", std::strerror(errno));
        return 1;
    }
    ::close(fd);
    {
        std::ofstream spec_out(spec_path);
        spec_out << spec.dump();
    }
    const int rc = run_script(script, spec_path, out);
    ::unlink(spec_path);
    if (rc == 0) std::printf("%s\n", out.c_str());
    return rc;
}

}  // namespace explsched::cli
