// Prediction-accuracy benchmark: every learning curve in the shared data set (../shared/data/
// curves), observed to 10%, 25% and 50% of its points, predicted to its last step. Prints the mean
// absolute error of the final metric relative to the curve's range, for the ensemble and for two
// baselines run in the same process (last observed value; a single power-law fit), the ratios,
// and the ensemble's interval coverage. Exit status 1 if the ensemble fails to beat both
// baselines at some fraction (so a regression is visible), 2 on a data error.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/curves/curve_budget.hpp"
#include "core/curves/curve_csv.hpp"
#include "core/curves/curve_ensemble.hpp"
#include "core/curves/curve_fit.hpp"
#include "core/sched/engine_settings.hpp"

#ifndef EXPLSCHED_DATA_DIR
#define EXPLSCHED_DATA_DIR "../shared/data"
#endif

namespace fs = std::filesystem;
using namespace explsched;

namespace {

struct Curve {
    std::string app;
    std::string name;
    Direction direction;
    std::vector<CurvePoint> points;
};

// Baseline 2: one power law a - b x^-c, plain least squares (no robust loss, no prior), from the
// same multi-start guesses; the last value when it cannot be fitted (fewer than 3 points).
double power_law_baseline(const std::vector<CurvePoint>& points, std::size_t n, Direction dir,
                          double horizon) {
    const double last = points[n - 1].metric;
    if (n < 3) return last;
    const double sign = dir == Direction::maximize ? 1.0 : -1.0;
    const double x_scale = points[n - 1].step > 0 ? points[n - 1].step : 1.0;
    double lo = sign * points[0].metric, hi = lo;
    for (std::size_t i = 0; i < n; ++i) {
        lo = std::min(lo, sign * points[i].metric);
        hi = std::max(hi, sign * points[i].metric);
    }
    const double off = sign * points[0].metric;
    const double scale = std::max(hi - lo, 1e-9);
    std::vector<double> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = std::max(points[i].step / x_scale, 1e-9);
        y[i] = (sign * points[i].metric - off) / scale;
    }
    std::array<Params, 3> guesses{};
    const std::size_t g = initial_guesses(Family::pow3, x.data(), y.data(), n, guesses);
    FitOptions options;
    options.irls_rounds = 0;
    options.prior_strength = 0.0;
    options.max_evaluations = 400;
    const FamilyFit fit =
        fit_family(Family::pow3, x.data(), y.data(), nullptr, n, guesses.data(), g, options);
    if (!fit.ok) return last;
    const double f = evaluate(Family::pow3, fit.theta, horizon / x_scale);
    if (!std::isfinite(f)) return last;
    return sign * (f * scale + off);
}

struct Tally {
    double ens = 0, last = 0, pow = 0, covered = 0, width = 0;
    int count = 0;
};

// The curve as priority/explsched keeps it in memory under a budget of `max_points`.
std::vector<CurvePoint> bounded(const std::vector<CurvePoint>& points, std::size_t max_points) {
    BoundedCurve c(max_points);
    for (const CurvePoint& p : points) c.push_back(p);
    return c.points();
}

// The curve with `per` evenly spaced points per reported interval (linear between epochs), as a
// job reporting every few steps would send it: long enough for the budget to bin it.
std::vector<CurvePoint> densified(const std::vector<CurvePoint>& points, std::size_t per) {
    std::vector<CurvePoint> out;
    for (std::size_t i = 0; i + 1 < points.size(); ++i) {
        for (std::size_t k = 0; k < per; ++k) {
            const double t = static_cast<double>(k) / static_cast<double>(per);
            CurvePoint p = points[i];
            p.step = points[i].step + t * (points[i + 1].step - points[i].step);
            p.metric = points[i].metric + t * (points[i + 1].metric - points[i].metric);
            out.push_back(p);
        }
    }
    if (!points.empty()) out.push_back(points.back());
    return out;
}

// Final-metric MAE (relative to each curve's range) with the observed prefix kept whole and kept
// under the budget, per observed fraction. False when the budget makes the forecast worse by more
// than noise (a regression to look at).
bool bounded_comparison(const std::vector<Curve>& curves, const EngineSettings& settings, std::size_t per,
                        std::size_t max_points) {
    const double fractions[] = {0.10, 0.25, 0.50};
    bool ok = true;
    for (std::size_t fi = 0; fi < 3; ++fi) {
        double e_full = 0, e_bounded = 0;
        std::size_t kept = 0, seen = 0;
        int count = 0;
        for (const Curve& c : curves) {
            const std::vector<CurvePoint> all = per > 1 ? densified(c.points, per) : c.points;
            const std::size_t n = std::max<std::size_t>(
                1,
                static_cast<std::size_t>(std::ceil(fractions[fi] * static_cast<double>(all.size()) - 1e-9)));
            const double truth = all.back().metric;
            const double horizon = all.back().step;
            double lo = truth, hi = truth;
            for (const auto& p : all) {
                lo = std::min(lo, p.metric);
                hi = std::max(hi, p.metric);
            }
            const double range = std::max(hi - lo, 1e-12);
            const std::vector<CurvePoint> observed(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
            const std::vector<CurvePoint> small = bounded(observed, max_points);
            auto a = predict_curve(observed, c.direction, horizon, settings);
            auto b = predict_curve(small, c.direction, horizon, settings);
            if (!a || !b) continue;
            e_full += std::fabs(a->value - truth) / range;
            e_bounded += std::fabs(b->value - truth) / range;
            kept += small.size();
            seen += observed.size();
            ++count;
        }
        const double k = std::max(count, 1);
        std::printf(
            "  %-9s budget %4zu  %4.0f%%  %7.1f points -> %7.1f   full %.4f  bounded %.4f  (ratio %.3f)\n",
            per > 1 ? "densified" : "real", max_points, 100 * fractions[fi], static_cast<double>(seen) / k,
            static_cast<double>(kept) / k, e_full / k, e_bounded / k, e_full > 0 ? e_bounded / e_full : 1.0);
        if (e_bounded / k > e_full / k * 1.10 + 0.005) ok = false;
    }
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    std::string data_dir = EXPLSCHED_DATA_DIR;
    bool verbose = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "-v") == 0)
            verbose = true;
        else
            data_dir = argv[i];
    }
    const fs::path curves_dir = fs::path(data_dir) / "curves";
    std::vector<Curve> curves;
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& app : fs::directory_iterator(curves_dir, ec)) {
        if (!app.is_directory()) continue;
        for (const auto& f : fs::directory_iterator(app.path())) {
            const std::string name = f.path().filename().string();
            if (name.rfind("validation-", 0) == 0 && f.path().extension() == ".csv") {
                files.push_back(f.path());
            }
        }
    }
    if (ec || files.empty()) {
        std::fprintf(stderr, "explsched: bench_prediction: no curves under %s\n", curves_dir.c_str());
        return 2;
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
        auto csv = read_curve_csv(path.string());
        if (!csv) {
            std::fprintf(stderr, "explsched: %s\n", csv.error().message.c_str());
            return 2;
        }
        Curve c;
        c.app = path.parent_path().filename().string();
        c.name = c.app + "/" + path.filename().string();
        // WER falls, accuracy and hit rate rise (data/README.md)
        c.direction = c.app == "deepspeech2" ? Direction::minimize : Direction::maximize;
        c.points = std::move(csv->points);
        curves.push_back(std::move(c));
    }

    const double fractions[] = {0.10, 0.25, 0.50};
    EngineSettings settings;
    std::map<std::string, Tally> by_app[3];
    Tally overall[3];
    for (std::size_t fi = 0; fi < 3; ++fi) {
        for (const Curve& c : curves) {
            const std::size_t total = c.points.size();
            const std::size_t n = std::max<std::size_t>(
                1, static_cast<std::size_t>(std::ceil(fractions[fi] * static_cast<double>(total) - 1e-9)));
            const double truth = c.points.back().metric;
            const double horizon = c.points.back().step;
            double lo = truth, hi = truth;
            for (const auto& p : c.points) {
                lo = std::min(lo, p.metric);
                hi = std::max(hi, p.metric);
            }
            const double range = std::max(hi - lo, 1e-12);
            std::vector<CurvePoint> observed(c.points.begin(),
                                             c.points.begin() + static_cast<std::ptrdiff_t>(n));
            auto pred = predict_curve(observed, c.direction, horizon, settings);
            if (!pred) {
                std::fprintf(stderr, "explsched: %s: %s\n", c.name.c_str(), pred.error().message.c_str());
                return 2;
            }
            const double e_ens = std::fabs(pred->value - truth) / range;
            const double e_last = std::fabs(observed.back().metric - truth) / range;
            const double e_pow =
                std::fabs(power_law_baseline(c.points, n, c.direction, horizon) - truth) / range;
            const bool cov = truth >= pred->lower && truth <= pred->upper;
            for (Tally* t : {&overall[fi], &by_app[fi][c.app]}) {
                t->ens += e_ens;
                t->last += e_last;
                t->pow += e_pow;
                t->covered += cov ? 1 : 0;
                t->width += (pred->upper - pred->lower) / range;
                t->count += 1;
            }
            if (verbose) {
                std::printf(
                    "%-32s %3.0f%% n=%3zu truth=%8.4f pred=%8.4f [%8.4f,%8.4f] "
                    "ens=%.3f last=%.3f pow=%.3f\n",
                    c.name.c_str(), 100 * fractions[fi], n, truth, pred->value, pred->lower, pred->upper,
                    e_ens, e_last, e_pow);
            }
        }
    }
    std::printf("prediction accuracy: %zu curves from %s, final metric, MAE relative to range\n",
                curves.size(), curves_dir.c_str());
    std::printf("%-12s %5s %9s %9s %9s %10s %10s %9s %9s\n", "app", "obs", "ensemble", "last", "powerlaw",
                "ens/last", "ens/pow", "coverage", "width");
    bool beats = true;
    for (std::size_t fi = 0; fi < 3; ++fi) {
        auto row = [&](const std::string& name, const Tally& t) {
            const double k = t.count;
            std::printf("%-12s %4.0f%% %9.4f %9.4f %9.4f %10.3f %10.3f %8.1f%% %9.3f\n", name.c_str(),
                        100 * fractions[fi], t.ens / k, t.last / k, t.pow / k, t.ens / t.last, t.ens / t.pow,
                        100 * t.covered / k, t.width / k);
        };
        for (const auto& [app, t] : by_app[fi]) row(app, t);
        row("ALL", overall[fi]);
        if (!(overall[fi].ens < overall[fi].last && overall[fi].ens < overall[fi].pow)) beats = false;
    }
    std::printf("interval level %.0f%%; ensemble beats both baselines at every fraction: %s\n",
                100 * settings.interval_level, beats ? "yes" : "NO");

    // The in-memory budget (max_curve_points): forecasts from the whole observed prefix against
    // forecasts from the prefix as the plugin keeps it. The real curves (one point per epoch) fit
    // in the default budget untouched, so they are also read under the smallest budget (64
    // points), and densified (300 points per epoch, ~20,000 per curve, as a job reporting every
    // iteration sends) under the default and smaller budgets. The default is the one that must
    // keep the forecasts; the smaller ones show the margin.
    std::printf("curve budget: final-metric MAE relative to range, full curve vs kept in memory\n");
    bool bounded_ok = bounded_comparison(curves, settings, 1, kDefaultMaxCurvePoints);
    bounded_ok = bounded_comparison(curves, settings, 300, kDefaultMaxCurvePoints) && bounded_ok;
    bounded_comparison(curves, settings, 1, kMinCurvePoints);
    bounded_comparison(curves, settings, 300, 500);
    std::printf("forecasts under the default budget (%zu) within 10%% (+0.005) of the full ones: %s\n",
                kDefaultMaxCurvePoints, bounded_ok ? "yes" : "NO");
    return beats && bounded_ok ? 0 : 1;
}
