// Calibration benchmark: are the forecast intervals right on curves the engine was not tuned on?
// Reads several curve roots (default: the Pollux curves in ../shared/data/curves and the held-out
// sweeps in contrib/heldout/curves; each <root>/<application>/validation-*.csv is one sweep) and
// forecasts every trial's final metric at 10 %, 25 % and 50 % of its run, by
// leave-one-application-out cross-validation: the interval calibration (the scale that makes the
// 80 % interval cover 80 % of finals) is fitted on the other applications only, pooled over both
// roots. Methods, in the same run:
//   ensemble     the trial's own ensemble forecast, intervals as fitted (scale 1)
//   calibrated   the same, intervals scaled by the left-out calibration
//   sib-waves    + the sibling prior, siblings as a 4-worker sweep sees them (trials in file
//                order, in waves of 4: earlier waves ended, the trial's own wave at its fraction)
//   sib-ended    + the sibling prior with every other trial of the sweep ended (the sweep's last
//                trial, or one resumed after the others)
// Prints per root and pooled: coverage of the 80 % interval and the final-metric MAE relative to
// the curve's range, with the last-value baseline and the ratio; the calibration scales fitted
// on all applications (what the defaults in fit_settings.hpp should be); -v: per application;
// --sibling-weight W: the sibling prior's weight in the sib-* methods (default 1.5; 0 = off);
// --shipped: every interval scaled by the shipped constants of fit_settings.hpp (what `explsched
// predict` and `predict --sibling` report) instead of the left-out fit: on a root none of those
// constants was fitted on (contrib/heldout/fresh), the out-of-sample check of what users see.
// Exit status 2 on a data error, else 0 (figures, not a test).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/curves/curve_csv.hpp"
#include "core/curves/curve_ensemble.hpp"
#include "core/curves/sibling_prior.hpp"
#include "core/sched/engine_settings.hpp"

#ifndef EXPLSCHED_DATA_DIR
#define EXPLSCHED_DATA_DIR "../shared/data"
#endif
#ifndef EXPLSCHED_HELDOUT_DIR
#define EXPLSCHED_HELDOUT_DIR "contrib/heldout/curves"
#endif

namespace fs = std::filesystem;
using namespace explsched;

namespace {

struct Curve {
    std::string set, app, name;
    Direction direction = Direction::maximize;
    std::vector<double> steps, metrics;  // cleaned (points after a NaN dropped)
    bool final_finite = true;
    double lo = 0, hi = 0;
};

// numeric order of validation-<k>.csv (the sweep's order)
bool by_number(const fs::path& a, const fs::path& b) {
    auto num = [](const fs::path& p) {
        const std::string s = p.stem().string();
        const auto dash = s.rfind('-');
        return std::atof(s.c_str() + (dash == std::string::npos ? 0 : dash + 1));
    };
    const double x = num(a), y = num(b);
    return x != y ? x < y : a < b;
}

bool load_root(const fs::path& root, const std::string& set, std::vector<Curve>& out) {
    std::error_code ec;
    std::vector<fs::path> apps;
    for (const auto& e : fs::directory_iterator(root, ec)) {
        if (e.is_directory()) apps.push_back(e.path());
    }
    if (ec || apps.empty()) {
        std::fprintf(stderr, "explsched: bench_calibration: %s: no application directories\n", root.c_str());
        return false;
    }
    std::sort(apps.begin(), apps.end());
    for (const fs::path& dir : apps) {
        std::vector<fs::path> files;
        // every trial CSV, as the simulator reads a sweep (src/sim/curve_library.cpp)
        for (const auto& f : fs::directory_iterator(dir)) {
            const std::string name = f.path().filename().string();
            if (f.is_regular_file() && f.path().extension() == ".csv" && name != "placements.csv" &&
                name != "scalability.csv")
                files.push_back(f.path());
        }
        std::sort(files.begin(), files.end(), by_number);
        const std::size_t first = out.size();
        for (const fs::path& path : files) {
            auto csv = read_curve_csv(path.string());
            if (!csv) {
                std::fprintf(stderr, "explsched: %s\n", csv.error().message.c_str());
                return false;
            }
            auto clean = clean_curve(csv->points);
            if (!clean || clean->steps.size() < 2) continue;
            Curve c;
            c.set = set;
            c.app = dir.filename().string();
            c.name = c.app + "/" + path.filename().string();
            c.final_finite = !clean->diverged;
            c.steps = std::move(clean->steps);
            c.metrics = std::move(clean->metrics);
            c.lo = *std::min_element(c.metrics.begin(), c.metrics.end());
            c.hi = *std::max_element(c.metrics.begin(), c.metrics.end());
            out.push_back(std::move(c));
        }
        // The sweep's direction: its `direction` file, else (as the simulator) minimise where its
        // curves fall in sum.
        double rise = 0.0;
        for (std::size_t i = first; i < out.size(); ++i)
            if (out[i].metrics.size() >= 2) rise += out[i].metrics.back() - out[i].metrics.front();
        auto declared = read_direction_file(dir.string());
        if (!declared) {
            std::fprintf(stderr, "explsched: %s\n", declared.error().message.c_str());
            return false;
        }
        const Direction direction = *declared    ? **declared
                                    : rise < 0.0 ? Direction::minimize
                                                 : Direction::maximize;
        for (std::size_t i = first; i < out.size(); ++i) out[i].direction = direction;
    }
    return true;
}

constexpr double kFractions[] = {0.10, 0.25, 0.50};
constexpr const char* kMethods[] = {"ensemble", "calibrated", "sib-waves", "sib-ended"};
constexpr std::size_t kMethodCount = 4;
constexpr std::size_t kWave = 4;

// One forecast, before calibration, in oriented units.
struct Record {
    std::size_t curve = 0, fraction = 0, method = 0;
    bool extrapolated = false, sibling = false;  // sibling: the sibling prior was used
    double mean = 0, sd = 0;                     // oriented, raw (scale 1)
    double lower = 0, upper = 0;                 // metric units, for a forecast not extrapolated
    double truth = 0, last = 0, range = 1;       // metric units
    bool log_space = false;
    double sign = 1;
};

double orient(const Record& r, double m) { return r.log_space ? -std::log(m) : r.sign * m; }
double back(const Record& r, double v) {
    return r.log_space ? std::exp(-std::clamp(v, -700.0, 700.0)) : r.sign * v;
}

// |truth - mean| / sd: the scale at which the interval just covers the truth (in z units)
double need(const Record& r) { return std::fabs(orient(r, r.truth) - r.mean) / std::max(r.sd, 1e-300); }

// The scale s for which z s covers `level` of the records' `need`.
double fit_scale(std::vector<double> needs, double level, double z) {
    if (needs.empty()) return 1.0;
    std::sort(needs.begin(), needs.end());
    const double pos = level * static_cast<double>(needs.size() - 1);
    const std::size_t i = static_cast<std::size_t>(pos);
    const double t = pos - static_cast<double>(i);
    const double q = i + 1 < needs.size() ? needs[i] * (1 - t) + needs[i + 1] * t : needs[i];
    return std::max(q / z, 1e-3);
}

struct Tally {
    double covered = 0, err = 0, last = 0, width = 0;
    int n = 0;
};

}  // namespace

int main(int argc, char** argv) {
    bool verbose = false, shipped = false;
    // The sibling prior's weight for the sib-* methods (the engine's default is 0: off; 1.5 is the
    // value doc/algorithm.md reports).
    double sibling_weight = 1.5;
    std::vector<std::pair<std::string, fs::path>> roots;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "-v") == 0) {
            verbose = true;
        } else if (std::strcmp(argv[i], "--shipped") == 0) {
            shipped = true;
        } else if (std::strcmp(argv[i], "--sibling-weight") == 0 && i + 1 < argc) {
            char* end = nullptr;
            sibling_weight = std::strtod(argv[++i], &end);
            if (end == argv[i] || *end != '\0' || !(sibling_weight >= 0.0) ||
                !std::isfinite(sibling_weight)) {
                std::fprintf(stderr, "bench_calibration: --sibling-weight: want a number >= 0, got '%s'\n",
                             argv[i]);
                return 2;
            }
        } else {
            const std::string arg = argv[i];
            const auto eq = arg.find('=');
            if (eq == std::string::npos)
                roots.emplace_back(fs::path(arg).filename().string(), arg);
            else
                roots.emplace_back(arg.substr(0, eq), arg.substr(eq + 1));
        }
    }
    if (roots.empty()) {
        roots.emplace_back("pollux", fs::path(EXPLSCHED_DATA_DIR) / "curves");
        roots.emplace_back("heldout", EXPLSCHED_HELDOUT_DIR);
    }
    std::vector<Curve> curves;
    for (const auto& [set, root] : roots) {
        if (!load_root(root, set, curves)) return 2;
    }
    EngineSettings settings;  // the defaults, with the calibration scales taken out
    const double default_own = kCalibratedInterval, default_sib = settings.sibling_calibration;
    const double default_fb = kCalibratedFallback;  // what explsched predict reports
    settings.interval_calibration = 1.0;
    settings.fallback_calibration = 1.0;
    settings.sibling_calibration = 1.0;
    EngineSettings sib_settings = settings;  // what the sib-* methods mix with
    sib_settings.sibling_prior_weight = sibling_weight;
    const double z = interval_z(settings.interval_level);

    // sweeps: application -> its curves in order
    std::map<std::string, std::vector<std::size_t>> sweeps;
    for (std::size_t i = 0; i < curves.size(); ++i) sweeps[curves[i].set + "/" + curves[i].app].push_back(i);

    std::vector<Record> records;
    std::vector<SiblingCurve> pool;
    for (const auto& [sweep, members] : sweeps) {
        for (std::size_t pos = 0; pos < members.size(); ++pos) {
            const Curve& c = curves[members[pos]];
            if (!c.final_finite) continue;  // a diverged trial has no final metric to forecast
            for (std::size_t fi = 0; fi < 3; ++fi) {
                const std::size_t total = c.steps.size();
                const std::size_t n = std::max<std::size_t>(
                    1,
                    static_cast<std::size_t>(std::ceil(kFractions[fi] * static_cast<double>(total) - 1e-9)));
                const std::vector<double> steps(c.steps.begin(),
                                                c.steps.begin() + static_cast<std::ptrdiff_t>(n));
                const std::vector<double> metrics(c.metrics.begin(),
                                                  c.metrics.begin() + static_cast<std::ptrdiff_t>(n));
                const double horizon = c.steps.back();
                std::vector<CurvePoint> points(n);
                for (std::size_t i = 0; i < n; ++i) points[i] = {steps[i], metrics[i]};
                auto own = predict_curve(points, c.direction, horizon, settings);
                if (!own) {
                    std::fprintf(stderr, "explsched: %s: %s\n", c.name.c_str(), own.error().message.c_str());
                    return 2;
                }
                Record base;
                base.curve = members[pos];
                base.fraction = fi;
                base.extrapolated = own->extrapolated;
                base.truth = c.metrics.back();
                base.last = metrics.back();
                base.range = std::max(std::max(c.hi, base.truth) - std::min(c.lo, base.truth), 1e-12);
                base.sign = c.direction == Direction::maximize ? 1.0 : -1.0;
                base.log_space = c.direction == Direction::minimize &&
                                 *std::min_element(metrics.begin(), metrics.end()) > 0.0;
                base.lower = own->lower;
                base.upper = own->upper;
                base.mean = orient(base, own->value);
                base.sd = std::fabs(orient(base, own->upper) - orient(base, own->lower)) / (2 * z);
                for (std::size_t m = 0; m < kMethodCount; ++m) {
                    Record r = base;
                    r.method = m;
                    if (m >= 2) {
                        pool.clear();
                        for (std::size_t q = 0; q < members.size(); ++q) {
                            if (q == pos) continue;
                            const Curve& s = curves[members[q]];
                            SiblingCurve sib;
                            sib.length = s.steps.back();
                            std::size_t upto = s.steps.size();
                            if (m == 2) {
                                if (q / kWave > pos / kWave) continue;  // not started yet
                                if (q / kWave == pos / kWave) {         // running beside it
                                    upto = std::max<std::size_t>(
                                        1, static_cast<std::size_t>(std::ceil(
                                               kFractions[fi] * static_cast<double>(s.steps.size()) - 1e-9)));
                                }
                            }
                            sib.ended = upto == s.steps.size();
                            const std::vector<double> ss(s.steps.begin(),
                                                         s.steps.begin() + static_cast<std::ptrdiff_t>(upto));
                            const std::vector<double> sm(
                                s.metrics.begin(), s.metrics.begin() + static_cast<std::ptrdiff_t>(upto));
                            thin_curve(ss, sm, kSiblingCurvePoints, sib.steps, sib.metrics);
                            pool.push_back(std::move(sib));
                        }
                        std::vector<const SiblingCurve*> sibs;
                        for (const SiblingCurve& s : pool) sibs.push_back(&s);
                        const SiblingForecast f = sibling_forecast(steps, metrics, c.direction, horizon,
                                                                   r.log_space, sibs, sib_settings);
                        if (own->extrapolated && f.weight > 1e-6) {
                            const Prediction p = prior_forecast(*own, steps, metrics, c.direction, horizon,
                                                                sibs, sib_settings);
                            r.sibling = true;
                            r.mean = orient(r, p.value);
                            r.sd = std::fabs(orient(r, p.upper) - orient(r, p.lower)) / (2 * z);
                        }
                    }
                    records.push_back(r);
                }
            }
        }
    }

    // Leave one application out: the scales for an application come from the others' records.
    std::set<std::string> apps;
    for (const auto& [sweep, members] : sweeps) apps.insert(sweep);
    std::map<std::string, std::array<double, kMethodCount>> own_scale, sib_scale;
    // kind 0: own extrapolation, 1: sibling prior used, 2: data-free fallback
    auto kind = [](const Record& r) { return r.sibling ? 1 : r.extrapolated ? 0 : 2; };
    auto need_fallback = [](const Record& r) {
        return r.truth >= r.last ? (r.truth - r.last) / std::max(r.upper - r.last, 1e-300)
                                 : (r.last - r.truth) / std::max(r.last - r.lower, 1e-300);
    };
    auto fit_excluding = [&](const std::string& left_out, std::size_t method, int which) {
        std::vector<double> needs;
        for (const Record& r : records) {
            const Curve& c = curves[r.curve];
            if (r.method != method || kind(r) != which) continue;
            if (!left_out.empty() && c.set + "/" + c.app == left_out) continue;
            needs.push_back(which == 2 ? need_fallback(r) : need(r));
        }
        return fit_scale(needs, settings.interval_level, which == 2 ? 1.0 : z);
    };
    std::map<std::string, std::array<double, kMethodCount>> fb_scale;
    for (const std::string& app : apps) {
        for (std::size_t m = 0; m < kMethodCount; ++m) {
            own_scale[app][m] = m == 0 ? 1.0 : shipped ? kCalibratedInterval : fit_excluding(app, 1, 0);
            sib_scale[app][m] = m < 2 ? 1.0 : shipped ? kCalibratedSibling : fit_excluding(app, m, 1);
            fb_scale[app][m] = m == 0 ? 1.0 : shipped ? kCalibratedFallback : fit_excluding(app, 1, 2);
        }
    }

    // tallies: [set or ALL][fraction][method], and per application
    std::map<std::string, std::array<std::array<Tally, kMethodCount>, 3>> by_set, by_app;
    for (const Record& r : records) {
        const Curve& c = curves[r.curve];
        const std::string app = c.set + "/" + c.app;
        double lower = r.lower, upper = r.upper, value;
        if (kind(r) != 2) {
            const double s = r.sibling ? sib_scale[app][r.method] : own_scale[app][r.method];
            value = back(r, r.mean);
            const double a = back(r, r.mean - z * s * r.sd), b = back(r, r.mean + z * s * r.sd);
            lower = std::min(a, b);
            upper = std::max(a, b);
        } else {
            const double s = fb_scale[app][r.method];
            value = r.last;
            lower = r.last - s * (r.last - r.lower);
            upper = r.last + s * (r.upper - r.last);
        }
        for (auto* t : {&by_set[c.set][r.fraction][r.method], &by_set["ALL"][r.fraction][r.method],
                        &by_app[app][r.fraction][r.method]}) {
            t->covered += (r.truth >= lower && r.truth <= upper) ? 1 : 0;
            t->err += std::fabs(value - r.truth) / r.range;
            t->last += std::fabs(r.last - r.truth) / r.range;
            t->width += (upper - lower) / r.range;
            t->n += 1;
        }
    }
    std::size_t n_curves = 0;
    for (const Curve& c : curves) n_curves += c.final_finite ? 1 : 0;
    std::printf(
        "calibration: %zu curves (%zu with a final metric) in %zu sweeps; 80%% interval coverage and "
        "final-metric MAE / range, %s; sib-*: sibling_prior_weight %g\n",
        curves.size(), n_curves, sweeps.size(),
        shipped ? "intervals scaled by the shipped constants (--shipped)" : "leave-one-application-out",
        sibling_weight);
    auto print = [&](const std::string& name, const std::array<std::array<Tally, kMethodCount>, 3>& t) {
        for (std::size_t fi = 0; fi < 3; ++fi) {
            std::printf("%-34s %3.0f%%", name.c_str(), 100 * kFractions[fi]);
            for (std::size_t m = 0; m < kMethodCount; ++m) {
                const Tally& x = t[fi][m];
                const double k = std::max(x.n, 1);
                std::printf("  %5.1f%% %6.3f %5.2fx", 100 * x.covered / k, x.err / k,
                            x.last > 0 ? x.err / x.last : 0);
            }
            std::printf("  last %6.3f  n=%d\n", t[fi][0].last / std::max(t[fi][0].n, 1), t[fi][0].n);
        }
    };
    std::printf("%-34s %4s", "set", "obs");
    for (const char* m : kMethods) std::printf("  %-20s", m);
    std::printf("\n%-34s %4s", "", "");
    for (std::size_t m = 0; m < kMethodCount; ++m) std::printf("  %-20s", "cover  MAE  /last");
    std::printf("\n");
    for (const auto& [set, t] : by_set) {
        if (set != "ALL") print(set, t);
    }
    print("ALL", by_set["ALL"]);
    if (verbose) {
        for (const auto& [app, t] : by_app) print(app, t);
        for (const auto& [app, s] : own_scale) {
            std::printf("%-34s scales: own %.3f  fallback %.3f  sib-waves %.3f  sib-ended %.3f\n",
                        app.c_str(), s[1], fb_scale[app][1], sib_scale[app][2], sib_scale[app][3]);
        }
    }
    std::printf(
        "calibration fitted on all applications: interval_calibration %.3f (explsched predict: %.3f); "
        "fallback_calibration %.3f (explsched predict: %.3f); sibling_calibration %.3f on waves, %.3f on "
        "ended (engine default %.3f; explsched predict --sibling: %.3f)\n",
        fit_excluding("", 1, 0), default_own, fit_excluding("", 1, 2), default_fb, fit_excluding("", 2, 1),
        fit_excluding("", 3, 1), default_sib, kCalibratedSibling);
    return 0;
}
