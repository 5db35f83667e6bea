// explsched predict --curve FILE [--metric-column NAME] [--direction min|max]
//                   (--observed N | --observed-fraction F) [--horizon STEP] [--json]
// Extrapolates a learning curve from its first N points with the engine's ensemble, to check
// what the scheduler would believe about a job (and to evaluate the predictor on saved curves).
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/curves/curve_csv.hpp"
#include "core/curves/curve_ensemble.hpp"
#include "core/sched/engine_settings.hpp"

namespace explsched::cli {

namespace {

void predict_usage(FILE* out) {
    std::fprintf(out,
                 "usage: explsched predict --curve FILE [--metric-column NAME] [--direction min|max]\n"
                 "                         (--observed N | --observed-fraction F) [--horizon STEP] [--json]\n"
                 "Predicts the metric at STEP (default: the file's last step) from the first N points\n"
                 "(or the first fraction F of them) of a CSV learning curve. The step column is the first\n"
                 "of 'step', 'iteration', 'progress' in the header; the metric column defaults to 'metric'.\n"
                 "Without --direction it is inferred from the observed points (falling: min).\n");
}

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
                   arg == "--observed" || arg == "--observed-fraction" || arg == "--horizon") {
            const char* v = value(arg.c_str());
            if (v == nullptr) return 2;
            if (arg == "--curve") {
                curve_path = v;
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
    bool inferred = false;
    if (!direction_text.empty()) {
        auto d = parse_direction(direction_text);
        if (!d) {
            std::fprintf(stderr, "explsched: --%s\n", d.error().message.c_str());
            return 2;
        }
        direction = *d;
    } else {
        inferred = true;
        // the first and last finite observed values say which way the curve is going
        double first = std::nan(""), last = std::nan("");
        for (const CurvePoint& p : seen) {
            if (!std::isfinite(p.metric)) continue;
            if (std::isnan(first)) first = p.metric;
            last = p.metric;
        }
        if (last < first) direction = Direction::minimize;
    }

    // the interval as cross-validated on curves never seen (fit_settings.hpp)
    auto prediction = predict_curve(seen, direction, horizon, calibrated_fit_settings());
    if (!prediction) {
        std::fprintf(stderr, "explsched: %s: %s\n", curve_path.c_str(), prediction.error().message.c_str());
        return 1;
    }
    const Prediction& p = *prediction;
    const EngineSettings defaults;
    if (json) {
        nlohmann::ordered_json out = {{"predicted", number_or_null(p.value)},
                                      {"lower", number_or_null(p.lower)},
                                      {"upper", number_or_null(p.upper)},
                                      {"horizon", number_or_null(p.horizon)},
                                      {"observed", observed},
                                      {"extrapolated", p.extrapolated},
                                      {"direction", to_string(direction)},
                                      {"interval_level", defaults.interval_level}};
        std::printf("%s\n", out.dump().c_str());
        return 0;
    }
    std::printf("curve:      %s (step column '%s', metric '%s', %s%s)\n", curve_path.c_str(),
                csv->step_column.c_str(), metric_column.c_str(), to_string(direction),
                inferred ? ", inferred" : "");
    std::printf("observed:   %zu of %zu points, up to step %.10g (metric %.6g)\n", observed, all.size(),
                seen.back().step, seen.back().metric);
    std::printf("predicted:  %.6g at step %.10g, %.0f%% interval [%.6g, %.6g]%s\n", p.value, p.horizon,
                100.0 * defaults.interval_level, p.lower, p.upper,
                p.extrapolated ? "" : " (too few points to extrapolate: last value)");
    return 0;
}

}  // namespace explsched::cli
