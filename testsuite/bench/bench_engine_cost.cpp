// Cost benchmark for the core engine. Prints:
//  1. the cost of one new point for one trial (CurvePredictor::append, which refits fully only
//     when the curve grew by refit_growth and otherwise warm-starts), over every real curve in
//     ../shared/data/curves fed point by point, against a full refit of the same curve (assign)
//     measured in the same run;
//  2. a full re-prioritisation of 10,000 pending + 2,000 running trials (Engine::evaluate):
//     the cold round that fits every curve, steady rounds with nothing new, and rounds where 1%
//     of trials reported a point. Target: steady re-prioritisation <= 10 ms.
#include <time.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/curves/curve_csv.hpp"
#include "core/curves/curve_ensemble.hpp"
#include "core/sched/engine.hpp"

#ifndef EXPLSCHED_DATA_DIR
#define EXPLSCHED_DATA_DIR "../shared/data"
#endif

namespace fs = std::filesystem;
using namespace explsched;
using Clock = std::chrono::steady_clock;

namespace {

double micros(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
}

// CPU time of this thread: on a shared machine (CI, 2 cores for several builds) wall time
// includes waiting for a core; this is the engine's own cost.
double thread_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return std::nan("");
    const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
}

struct Curve {
    Direction direction;
    std::vector<CurvePoint> points;
};

// Deterministic pseudo-random numbers (the benchmark must be reproducible).
struct Lcg {
    std::uint64_t s;
    double next() {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(s >> 11) / 9007199254740992.0;
    }
};

}  // namespace

int main(int argc, char** argv) {
    const std::string data_dir = argc > 1 ? argv[1] : EXPLSCHED_DATA_DIR;
    std::vector<Curve> curves;
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& app : fs::directory_iterator(fs::path(data_dir) / "curves", ec)) {
        if (!app.is_directory()) continue;
        for (const auto& f : fs::directory_iterator(app.path())) {
            if (f.path().filename().string().rfind("validation-", 0) == 0) files.push_back(f.path());
        }
    }
    if (ec || files.empty()) {
        std::fprintf(stderr, "explsched: bench_engine_cost: no curves under %s/curves\n", data_dir.c_str());
        return 2;
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
        auto csv = read_curve_csv(path.string());
        if (!csv) {
            std::fprintf(stderr, "explsched: %s\n", csv.error().message.c_str());
            return 2;
        }
        const bool wer = path.parent_path().filename() == "deepspeech2";
        curves.push_back({wer ? Direction::minimize : Direction::maximize, csv->points});
    }

    // --- 1. one new point -------------------------------------------------------------------
    std::vector<double> incremental, full;
    std::size_t full_refits = 0, points = 0;
    for (const Curve& c : curves) {
        CurvePredictor p(c.direction);
        for (std::size_t i = 0; i < c.points.size(); ++i) {
            const auto t0 = Clock::now();
            if (!p.append(c.points[i].step, c.points[i].metric).ok()) return 2;
            const auto t1 = Clock::now();
            incremental.push_back(micros(t0, t1));
            // baseline: refit the same prefix from scratch
            CleanCurve prefix;
            prefix.steps = p.steps();
            prefix.metrics = p.metrics();
            CurvePredictor q(c.direction);
            const auto t2 = Clock::now();
            q.assign(prefix);
            const auto t3 = Clock::now();
            full.push_back(micros(t2, t3));
        }
        full_refits += p.full_refits();
        points += c.points.size();
    }
    double mean_inc = 0, mean_full = 0;
    for (double v : incremental) mean_inc += v;
    for (double v : full) mean_full += v;
    mean_inc /= static_cast<double>(incremental.size());
    mean_full /= static_cast<double>(full.size());
    std::printf("new point, one trial (%zu points over %zu real curves; %zu full refits):\n", points,
                curves.size(), full_refits);
    std::printf("  %-22s %10s %10s %10s %10s\n", "", "median us", "p90 us", "max us", "mean us");
    std::printf("  %-22s %10.1f %10.1f %10.1f %10.1f\n", "incremental (append)", percentile(incremental, 0.5),
                percentile(incremental, 0.9), percentile(incremental, 1.0), mean_inc);
    std::printf("  %-22s %10.1f %10.1f %10.1f %10.1f\n", "baseline full refit", percentile(full, 0.5),
                percentile(full, 0.9), percentile(full, 1.0), mean_full);
    std::printf("  median ratio incremental/full: %.3f; target median <= 50 us: %s\n",
                percentile(incremental, 0.5) / percentile(full, 0.5),
                percentile(incremental, 0.5) <= 50.0 ? "met" : "NOT met");

    // --- 2. full re-prioritisation ----------------------------------------------------------
    const std::size_t n_pending = 10000, n_running = 2000, group_size = 30;
    Lcg rng{42};
    std::vector<std::vector<CurvePoint>> trial_points(n_pending + n_running);
    std::vector<JobView> jobs(n_pending + n_running);
    // a sweep's trials share an application (one metric, one direction): group g draws its
    // curves from the real curves of one application
    std::vector<std::vector<std::size_t>> by_app;
    for (std::size_t i = 0; i < curves.size(); ++i) {
        const std::string app = files[i].parent_path().filename().string();
        if (i == 0 || app != files[i - 1].parent_path().filename().string()) by_app.emplace_back();
        by_app.back().push_back(i);
    }
    auto base_of = [&](std::size_t j) -> const Curve& {
        const auto& pool = by_app[(j / group_size) % by_app.size()];
        return curves[pool[j % pool.size()]];
    };
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        const Curve& base = base_of(j);
        // a perturbed copy of a real curve, cut at a random length (pending ones were
        // preempted/requeued or never ran: some have no points at all)
        const double scale = 0.9 + 0.2 * rng.next();
        const double cut = rng.next();
        const std::size_t n =
            j < n_pending && cut < 0.3
                ? 0
                : std::max<std::size_t>(
                      1, static_cast<std::size_t>(cut * static_cast<double>(base.points.size())));
        for (std::size_t i = 0; i < n; ++i) {
            CurvePoint p = base.points[i];
            p.metric *= scale;
            p.wall_time = 30.0 * static_cast<double>(i + 1);
            trial_points[j].push_back(p);
        }
        JobView& v = jobs[j];
        v.key = TrialKey{static_cast<std::uint32_t>(1000 + j / 4), static_cast<std::uint32_t>(j % 4)};
        v.group = j % 10 == 9 ? std::string() : "sweep" + std::to_string(j / group_size);
        v.direction = base.direction;
        v.max_steps = base.points.back().step;
        v.gpus = 1 + static_cast<std::uint32_t>(j % 4 == 0);
        v.state = j < n_pending ? JobState::pending : JobState::running;
        v.submit_time = rng.next() * 86400.0;
        v.start_time = v.state == JobState::running ? 86400.0 + rng.next() * 3600.0 : 0.0;
        v.partition_factor = 0.5;
        v.points = trial_points[j];
    }
    std::vector<Assessment> out;
    ClusterView cluster;
    cluster.total_gpus = 2048;
    cluster.now = 90000.0;
    // first round with the default refit budget (what a restarted controller pays)
    auto budgeted = Engine::create(EngineSettings{});
    if (!budgeted) return 2;
    auto t0 = Clock::now();
    if (!budgeted->evaluate(jobs, cluster, out).ok()) return 2;
    const double budgeted_ms = micros(t0, Clock::now()) / 1000.0;
    const std::size_t budget = budgeted->settings().max_refits_per_round;

    EngineSettings unlimited;
    unlimited.max_refits_per_round = 0;  // fit everything in the first round
    auto created = Engine::create(unlimited);
    if (!created) return 2;
    Engine engine = std::move(created.value());
    t0 = Clock::now();
    if (!engine.evaluate(jobs, cluster, out).ok()) return 2;
    const double cold_ms = micros(t0, Clock::now()) / 1000.0;
    const std::size_t fitted_cold = engine.last_round().fitted;

    std::vector<double> steady, changed, steady_cpu, changed_cpu;
    for (int round = 0; round < 20; ++round) {
        cluster.now += 60.0;
        const double c0 = thread_cpu_ms();
        t0 = Clock::now();
        if (!engine.evaluate(jobs, cluster, out).ok()) return 2;
        steady.push_back(micros(t0, Clock::now()) / 1000.0);
        steady_cpu.push_back(thread_cpu_ms() - c0);
    }
    std::size_t refit_total = 0;
    for (int round = 0; round < 20; ++round) {
        // 1% of the running trials report one more point
        for (std::size_t k = 0; k < n_running / 100; ++k) {
            const std::size_t j = n_pending + (static_cast<std::size_t>(round) * 37 + k * 101) % n_running;
            const Curve& base = base_of(j);
            auto& pts = trial_points[j];
            if (pts.size() < base.points.size()) {
                CurvePoint p = base.points[pts.size()];
                p.metric *= pts.empty() ? 1.0 : pts.front().metric / base.points.front().metric;
                p.wall_time = 30.0 * static_cast<double>(pts.size() + 1);
                pts.push_back(p);
                jobs[j].points = pts;
            }
        }
        cluster.now += 60.0;
        const double c0 = thread_cpu_ms();
        t0 = Clock::now();
        if (!engine.evaluate(jobs, cluster, out).ok()) return 2;
        changed.push_back(micros(t0, Clock::now()) / 1000.0);
        changed_cpu.push_back(thread_cpu_ms() - c0);
        refit_total += engine.last_round().fitted;
    }
    std::size_t hopeless = 0, preemptable = 0, running_ok = 0;
    for (const auto& a : out) {
        hopeless += a.state == TrialState::hopeless;
        preemptable += a.decision == Decision::preemptable;
        running_ok += a.decision == Decision::run || a.decision == Decision::keep;
    }
    std::printf("re-prioritisation of %zu pending + %zu running jobs (%zu fitted curves):\n", n_pending,
                n_running, fitted_cold);
    std::printf("  cold round (fits every curve, baseline): %9.1f ms\n", cold_ms);
    std::printf("  first round with the default budget of %zu refits: %7.1f ms\n", budget, budgeted_ms);
    std::printf(
        "  steady round, nothing new:   median %7.2f ms wall, %7.2f ms CPU; max %7.2f ms wall  (ratio to "
        "cold %.4f)\n",
        percentile(steady, 0.5), percentile(steady_cpu, 0.5), percentile(steady, 1.0),
        percentile(steady, 0.5) / cold_ms);
    std::printf(
        "  round with 1%% new points:    median %7.2f ms wall, %7.2f ms CPU; max %7.2f ms wall  (%zu refits "
        "in 20 rounds)\n",
        percentile(changed, 0.5), percentile(changed_cpu, 0.5), percentile(changed, 1.0), refit_total);
    std::printf(
        "  target steady <= 10 ms (wall median): %s; last round: price %.3g (L %.3g, U %.3g), %zu hopeless, "
        "%zu preemptable, %zu run/keep\n",
        percentile(steady, 0.5) <= 10.0 ? "met" : "NOT met", engine.last_round().price_now,
        engine.last_round().price_lower, engine.last_round().price_upper, hopeless, preemptable, running_ok);
    return 0;
}
