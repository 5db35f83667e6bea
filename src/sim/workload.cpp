#include "sim/workload.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/base/strings.hpp"

namespace explsched::sim {

Result<Variation> parse_variation(std::string_view text) {
    if (text == "none") return Variation::none;
    if (text == "hp") return Variation::hp;
    return make_error("variation: '" + std::string(text) + "' is not one of none, hp");
}

const char* to_string(Variation variation) { return variation == Variation::none ? "none" : "hp"; }

std::uint64_t Rng::next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::size_t Rng::below(std::size_t n) {
    return n == 0 ? 0 : static_cast<std::size_t>(next() % static_cast<std::uint64_t>(n));
}

namespace {

std::uint64_t mix(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
    Rng rng(seed * 0x2545f4914f6cdd1dULL + stream * 0x9e3779b97f4a7c15ULL + index);
    rng.next();
    return rng.next();
}

constexpr std::uint64_t kTrialStream = 1, kSweepStream = 2;

// Metric of the recorded run at step x (linear in between reports; before its first report it
// rises linearly from the untrained level at step 0).
double base_at(const CurveVariant& v, double untrained, double x) {
    if (x <= v.steps.front()) return untrained + (v.metrics.front() - untrained) * (x / v.steps.front());
    if (x >= v.steps.back()) return v.metrics.back();
    const auto hi = std::upper_bound(v.steps.begin(), v.steps.end(), x);
    const auto i = static_cast<std::size_t>(hi - v.steps.begin());
    const double t = (x - v.steps[i - 1]) / (v.steps[i] - v.steps[i - 1]);
    return v.metrics[i - 1] + t * (v.metrics[i] - v.metrics[i - 1]);
}

void apply_variation(SimTrial& trial, const Application& app, const CurveVariant& base, Rng& rng) {
    const double u = rng.uniform();
    if (u < 0.30) {  // strong configuration
        trial.g = rng.uniform(0.985, 1.0);
        trial.r = rng.uniform(1.0, 1.3);
    } else if (u < 0.70) {  // fair
        trial.g = rng.uniform(0.85, 0.985);
        trial.r = rng.uniform(1.0, 2.0);
    } else if (u < 0.90) {  // poor
        trial.g = rng.uniform(0.4, 0.85);
        trial.r = rng.uniform(1.5, 4.0);
    } else {  // diverges (learning rate too high)
        trial.g = rng.uniform(0.85, 1.0);
        trial.r = rng.uniform(1.0, 2.0);
        trial.diverges = true;
    }
    const std::size_t n = base.steps.size();
    for (std::size_t k = 0; k < n; ++k) {
        const double recorded = base_at(base, app.untrained, base.steps[k] / trial.r);
        trial.metrics[k] = app.untrained + trial.g * (recorded - app.untrained);
    }
    if (trial.diverges) {
        const std::size_t last = n >= 6 ? n / 3 : n - 1;
        const std::size_t first = std::min<std::size_t>(2, last);
        const std::size_t at = first + rng.below(last - first + 1);
        for (std::size_t k = at; k < n; ++k) trial.metrics[k] = NAN;
    }
}

Result<double> derived_duration(const Application& app, const CurveVariant& v, std::uint32_t gpus,
                                const TraceJob& row) {
    const auto batch = parse_finite_double(v.name);
    const double step_time = batch ? app.step_times.step_time(gpus, *batch / gpus) : NAN;
    // optimiser steps (a `progress` column counts samples: no step time applies to it)
    if ((v.step_column != "iteration" && v.step_column != "step") || !std::isfinite(step_time)) {
        return make_error("trace line " + std::to_string(row.line) + ": job '" + row.name +
                          "': no duration in the trace and none derivable for " + app.name + "/" + v.name +
                          " (needs a step or iteration column, a numeric batch-size variant "
                          "and placements.csv)");
    }
    return v.steps.back() * step_time;
}

}  // namespace

Result<Workload> build_workload(const Trace& trace, const CurveLibrary& library,
                                const WorkloadOptions& options) {
    if (options.sweep_size == 0) return make_error("workload: sweep size must be at least 1");
    Workload workload;
    const auto& apps = library.apps();
    std::set<std::string> skipped;
    // Rows to simulate, with their application index (-1 = drawn per sweep).
    std::vector<std::pair<const TraceJob*, int>> rows;
    for (const TraceJob& row : trace.jobs) {
        if (options.max_jobs != 0 && rows.size() >= options.max_jobs) break;
        int app = -1;
        if (!row.application.empty()) {
            app = library.find(row.application);
            if (app < 0) {
                if (!options.skip_unknown_applications) {
                    return make_error("trace line " + std::to_string(row.line) + ": application '" +
                                      row.application + "' has no curves in the library");
                }
                skipped.insert(row.application);
                ++workload.skipped_rows;
                continue;
            }
        } else if (!row.job_name.empty()) {
            app = library.find(row.job_name);
        }
        rows.emplace_back(&row, app);
    }
    if (rows.empty()) return make_error("workload: no trace rows left to simulate");
    workload.skipped_applications.assign(skipped.begin(), skipped.end());

    // Group rows into sweeps: the trace's own groups (sacct arrays) first; otherwise consecutive
    // rows, per application where the trace names it, up to sweep_size each.
    std::map<std::string, std::uint32_t> named;  // trace sweep name → sweep index
    std::map<int, std::uint32_t> open_by_app;    // app (or -1) → open sweep index
    std::vector<std::uint32_t> sweep_of(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const TraceJob& row = *rows[i].first;
        const int app = rows[i].second;
        std::uint32_t s = 0;
        if (!row.sweep.empty()) {
            auto it = named.find(row.sweep);
            if (it == named.end()) {
                it = named.emplace(row.sweep, static_cast<std::uint32_t>(workload.sweeps.size())).first;
                SimSweep sweep;
                sweep.name = row.sweep;
                workload.sweeps.push_back(sweep);
            }
            s = it->second;
        } else {
            auto it = open_by_app.find(app);
            if (it == open_by_app.end() || workload.sweeps[it->second].trials.size() >= options.sweep_size) {
                SimSweep sweep;
                sweep.name = "sweep-" + std::to_string(workload.sweeps.size() + 1);
                open_by_app[app] = static_cast<std::uint32_t>(workload.sweeps.size());
                workload.sweeps.push_back(sweep);
                it = open_by_app.find(app);
            }
            s = it->second;
        }
        sweep_of[i] = s;
        workload.sweeps[s].trials.push_back(static_cast<std::uint32_t>(i));
    }
    // Each sweep's application: the trace's (first named row) or drawn from the seed.
    for (std::size_t s = 0; s < workload.sweeps.size(); ++s) {
        SimSweep& sweep = workload.sweeps[s];
        int app = -1;
        for (std::uint32_t i : sweep.trials) {
            if (rows[i].second >= 0) {
                app = rows[i].second;
                break;
            }
        }
        if (app < 0) {
            Rng rng(mix(options.seed, kSweepStream, s));
            app = static_cast<int>(rng.below(apps.size()));
        }
        sweep.app = static_cast<std::uint32_t>(app);
    }

    // Synthesised sweeps (no trace group, application drawn): one model, one size.
    std::vector<const TraceJob*> size_of(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) size_of[i] = rows[i].first;
    if (options.uniform_sweeps) {
        for (const SimSweep& sweep : workload.sweeps) {
            const TraceJob* leader = rows[sweep.trials.front()].first;
            if (!leader->sweep.empty()) continue;
            bool drawn = true;
            for (std::uint32_t i : sweep.trials) drawn = drawn && rows[i].second < 0;
            if (!drawn) continue;
            for (std::uint32_t i : sweep.trials) size_of[i] = leader;
        }
    }

    workload.trials.resize(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const TraceJob& row = *rows[i].first;
        SimTrial& trial = workload.trials[i];
        SimSweep& sweep = workload.sweeps[sweep_of[i]];
        const Application& app = apps[sweep.app];
        Rng rng(mix(options.seed, kTrialStream, i));
        trial.id = static_cast<std::uint32_t>(i + 1);
        trial.sweep = sweep_of[i];
        trial.app = sweep.app;
        trial.trace_name = row.name;
        trial.trace_line = row.line;
        trial.arrival = row.arrival;
        trial.gpus = size_of[i]->gpus;
        const CurveVariant* base = nullptr;
        if (!row.variant.empty() && rows[i].second >= 0) {
            base = app.find_variant(row.variant);
            if (base == nullptr) {
                return make_error("trace line " + std::to_string(row.line) + ": " + app.name +
                                  " has no curve for variant '" + row.variant + "'");
            }
        } else {
            base = &app.variants[rng.below(app.variants.size())];
        }
        trial.variant = base->name;
        trial.steps = base->steps;
        trial.metrics = base->metrics;
        if (options.variation == Variation::hp) apply_variation(trial, app, *base, rng);
        trial.max_step = trial.steps.back();
        if (std::isfinite(size_of[i]->duration)) {
            trial.duration = std::max(size_of[i]->duration, options.min_duration_s);
        } else {
            auto d = derived_duration(app, *base, row.gpus, row);
            if (!d) return d.error();
            trial.duration = std::max(*d, options.min_duration_s);
        }
        trial.best_quality = 0.0;
        for (std::size_t k = 0; k < trial.metrics.size(); ++k) {
            if (!std::isfinite(trial.metrics[k])) break;
            const double q = app.quality(trial.metrics[k]);
            if (q > trial.best_quality || k == 0) {
                trial.best_quality = q;
                trial.best_index = k;
            }
            trial.final_quality = q;
        }
    }
    for (SimSweep& sweep : workload.sweeps) {
        sweep.first_arrival = workload.trials[sweep.trials.front()].arrival;
        sweep.best_trial = sweep.trials.front();
        for (std::uint32_t i : sweep.trials) {
            const SimTrial& t = workload.trials[i];
            const SimTrial& b = workload.trials[sweep.best_trial];
            const double cost = t.duration * t.gpus, best_cost = b.duration * b.gpus;
            if (t.best_quality > b.best_quality || (t.best_quality == b.best_quality && cost < best_cost)) {
                sweep.best_trial = i;
            }
        }
        sweep.best_quality = workload.trials[sweep.best_trial].best_quality;
    }
    return workload;
}

}  // namespace explsched::sim
