// explsched predict --curve FILE [--metric-column NAME] [--direction min|max]
//                   (--observed N | --observed-fraction F) [--horizon STEP] [--sibling FILE]... [--json]
// Extrapolates a learning curve from its first N points with the engine's ensemble, to check
// what the scheduler would believe about a job (and to evaluate the predictor on saved curves).
// With --sibling, the curves of the sweep's other trials that ended (whole: a curve's last step is
// taken as its run's length) are mixed in as a prior for the trial's shape
// (core/curves/sibling_prior.hpp), as bench_calibration's sib-ended method measures it.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/trial_source.hpp"
#include "core/curves/curve_csv.hpp"
#include "core/curves/curve_ensemble.hpp"
#include "core/curves/sibling_prior.hpp"
#include "core/sched/engine_settings.hpp"

namespace explsched::cli {

namespace {

void predict_usage(FILE* out) {
    std::fprintf(out,
                 "usage: explsched predict --curve FILE [--metric-column NAME] [--direction min|max]\n"
                 "                         (--observed N | --observed-fraction F) [--horizon STEP]\n"
                 "                         [--sibling FILE]... [--json]\n"
                 "Predicts the metric at STEP (default: the file's last step) from the first N points\n"
                 "(or the first fraction F of them) of a CSV learning curve. The step column is the first\n"
                 "of 'step', 'iteration', 'progress' in the header; the metric column defaults to 'metric'.\n"
                 "Without --direction: the `direction` file (min or max) beside FILE, as the\n"
                 "simulator and the benchmarks read a sweep's directory; else inferred from the\n"
                 "observed points (falling: min).\n"
                 "--sibling FILE (up to 64): the whole curve of another trial of the same sweep that\n"
                 "ended (same columns; its last step is its run's length); what similar siblings did\n"
                 "from the same fraction of their runs is mixed into the forecast of the trial's last\n"
                 "step (STEP is then its run's length).\n");
}

// Siblings one prediction reads at most (each thinned to kSiblingCurvePoints points).
constexpr std::size_t kMaxSiblingFiles = 64;

bool parse_positive_count(const char* text, std::size_t& out) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || v == 0 || text[0] == '-') return false;
    out = static_cast<std::size_t>(v);
    return true;
}

bool parse_double(const char* text, double& out) {
    char* end = nullptr;
    errno = 0;
    out = std::strtod(text, &end);
    return end != text && *end == '\0' && errno == 0 && std::isfinite(out);
}

nlohmann::ordered_json number_or_null(double v) {
    return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

}  // namespace

int cmd_predict(int argc, char** argv) {
    std::string curve_path, metric_column = "metric", direction_text;
    std::vector<std::string> sibling_paths;
    std::size_t observed = 0;
    double fraction = 0.0, horizon = std::nan("");
    bool have_observed = false, have_fraction = false, have_horizon = false, json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&](const char* opt) -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "explsched predict: %s needs a value\n", opt);
                return nullptr;
            }
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h") {
            predict_usage(stdout);
            return 0;
        } else if (arg == "--json") {
            json = true;
        } else if (arg == "--curve" || arg == "--metric-column" || arg == "--direction" ||
                   arg == "--observed" || arg == "--observed-fraction" || arg == "--horizon" ||
                   arg == "--sibling") {
            const char* v = value(arg.c_str());
            if (v == nullptr) return 2;
            if (arg == "--curve") {
                curve_path = v;
            } else if (arg == "--sibling") {
                if (sibling_paths.size() >= kMaxSiblingFiles) {
                    std::fprintf(stderr, "explsched predict: --sibling: at most %zu siblings\n",
                                 kMaxSiblingFiles);
                    return 2;
                }
                sibling_paths.emplace_back(v);
            } else if (arg == "--metric-column") {
                metric_column = v;
            } else if (arg == "--direction") {
                direction_text = v;
            } else if (arg == "--observed") {
                if (!parse_positive_count(v, observed)) {
                    std::fprintf(stderr, "explsched: --observed: '%s' is not a positive integer\n", v);
                    return 2;
                }
                have_observed = true;
            } else if (arg == "--observed-fraction") {
                if (!parse_double(v, fraction) || !(fraction > 0.0) || fraction > 1.0) {
                    std::fprintf(stderr, "explsched: --observed-fraction: '%s' is not in (0, 1]\n", v);
                    return 2;
                }
                have_fraction = true;
            } else {
                if (!parse_double(v, horizon) || horizon < 0.0) {
                    std::fprintf(stderr, "explsched: --horizon: '%s' is not a finite step >= 0\n", v);
                    return 2;
                }
                have_horizon = true;
            }
        } else {
            std::fprintf(stderr, "explsched predict: unknown option '%s'\n", arg.c_str());
            predict_usage(stderr);
            return 2;
        }
    }
    if (curve_path.empty()) {
        std::fprintf(stderr, "explsched predict: --curve FILE is required\n");
        predict_usage(stderr);
        return 2;
    }
    if (have_observed == have_fraction) {
        std::fprintf(stderr,
                     "explsched predict: give exactly one of --observed N and --observed-fraction F\n");
        return 2;
    }

    auto csv = read_curve_csv(curve_path, metric_column);
    if (!csv) {
        std::fprintf(stderr, "explsched: %s\n", csv.error().message.c_str());
        return 1;
    }
    const std::vector<CurvePoint>& all = csv->points;
    if (all.empty()) {
        std::fprintf(stderr, "explsched: %s: no data rows after the header\n", curve_path.c_str());
        return 1;
    }
    if (have_fraction) {
        observed = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(all.size()) - 1e-9));
        observed = std::max<std::size_t>(observed, 1);
    }
    if (observed > all.size()) {
        std::fprintf(stderr, "explsched: --observed: %zu points asked, %s has %zu\n", observed,
                     curve_path.c_str(), all.size());
        return 1;
    }
    if (!have_horizon) horizon = all.back().step;
    const std::vector<CurvePoint> seen(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(observed));

    Direction direction = Direction::maximize;
    std::string origin;  // how the direction was chosen, when not given
    if (!direction_text.empty()) {
        auto d = parse_direction(direction_text);
        if (!d) {
            std::fprintf(stderr, "explsched: --%s\n", d.error().message.c_str());
            return 2;
        }
        direction = *d;
    } else {
        auto d = cli::curve_file_direction(curve_path, seen, origin);
        if (!d) {
            std::fprintf(stderr, "explsched: %s\n", d.error().message.c_str());
            return 1;
        }
        direction = *d;
    }

    // the interval as cross-validated on curves never seen (fit_settings.hpp)
    auto prediction = predict_curve(seen, direction, horizon, calibrated_fit_settings());
    if (!prediction) {
        std::fprintf(stderr, "explsched: %s: %s\n", curve_path.c_str(), prediction.error().message.c_str());
        return 1;
    }
    Prediction p = *prediction;

    // The siblings: each read whole (a bad file is an error naming it), thinned like the engine's.
    std::vector<SiblingCurve> siblings;
    for (const std::string& path : sibling_paths) {
        auto sib = read_curve_csv(path, metric_column);
        if (!sib) {
            std::fprintf(stderr, "explsched: --sibling: %s\n", sib.error().message.c_str());
            return 1;
        }
        if (sib->points.size() < 2) {
            std::fprintf(stderr, "explsched: --sibling: %s: a sibling needs at least 2 points, it has %zu\n",
                         path.c_str(), sib->points.size());
            return 1;
        }
        std::vector<double> steps, metrics;
        for (const CurvePoint& q : sib->points) {
            steps.push_back(q.step);
            metrics.push_back(q.metric);
        }
        SiblingCurve c;
        c.length = steps.back();
        c.ended = true;
        thin_curve(steps, metrics, kSiblingCurvePoints, c.steps, c.metrics);
        siblings.push_back(std::move(c));
    }
    double sibling_weight = 0.0;
    if (!siblings.empty()) {
        FitSettings s;  // the trial's own interval as fitted, mixed, then scaled as cross-validated
        s.sibling_prior_weight = kSiblingPriorWeight;
        s.sibling_calibration = kCalibratedSibling;
        auto own = predict_curve(seen, direction, horizon, s);
        std::vector<double> steps, metrics;
        for (const CurvePoint& q : seen) {
            steps.push_back(q.step);
            metrics.push_back(q.metric);
        }
        bool log_space = direction == Direction::minimize;
        for (double m : metrics) log_space = log_space && m > 0.0;
        std::vector<const SiblingCurve*> sibs;
        for (const SiblingCurve& c : siblings) sibs.push_back(&c);
        if (own && own->extrapolated) {
            const SiblingForecast f =
                sibling_forecast(steps, metrics, direction, horizon, log_space, sibs, s);
            if (f.weight > 1e-6) {
                sibling_weight = f.weight;
                p = prior_forecast(*own, steps, metrics, direction, horizon, sibs, s);
            }
        }
    }
    const EngineSettings defaults;
    if (json) {
        nlohmann::ordered_json out = {{"predicted", number_or_null(p.value)},
                                      {"lower", number_or_null(p.lower)},
                                      {"upper", number_or_null(p.upper)},
                                      {"horizon", number_or_null(p.horizon)},
                                      {"observed", observed},
                                      {"extrapolated", p.extrapolated},
                                      {"direction", to_string(direction)},
                                      {"interval_level", defaults.interval_level},
                                      {"siblings", siblings.size()},
                                      {"sibling_weight", sibling_weight}};
        std::printf("%s\n", out.dump().c_str());
        return 0;
    }
    std::printf("curve:      %s (step column '%s', metric '%s', %s%s)\n", curve_path.c_str(),
                csv->step_column.c_str(), metric_column.c_str(), to_string(direction), origin.c_str());
    std::printf("observed:   %zu of %zu points, up to step %.10g (metric %.6g)\n", observed, all.size(),
                seen.back().step, seen.back().metric);
    std::printf("predicted:  %.6g at step %.10g, %.0f%% interval [%.6g, %.6g]%s\n", p.value, p.horizon,
                100.0 * defaults.interval_level, p.lower, p.upper,
                p.extrapolated ? "" : " (too few points to extrapolate: last value)");
    if (!siblings.empty()) {
        if (sibling_weight > 0.0) {
            std::printf("siblings:   %zu given; those like it so far weigh %.3g against its own fit's %.3g\n",
                        siblings.size(), sibling_weight, kSiblingPriorWeight);
        } else {
            std::printf(
                "siblings:   %zu given; none ran further from a curve like its own (its own fit alone)\n",
                siblings.size());
        }
    }
    return 0;
}

}  // namespace explsched::cli
