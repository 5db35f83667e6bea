#define BOOST_TEST_MODULE sim_workload
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <set>
#include <string>

#include "sim_test_support.hpp"
#include "temp_dir.hpp"

using namespace simtest;

namespace {

const std::string kData = EXPLSCHED_DATA_DIR;

Trace philly_like(std::size_t n) {
    std::vector<Row> rows;
    for (std::size_t i = 0; i < n; ++i) {
        rows.push_back({10.0 * static_cast<double>(i), static_cast<std::uint32_t>(1 + i % 3),
                        100.0 + static_cast<double>(i), "", ""});
    }
    Trace t = make_trace(rows);
    for (TraceJob& j : t.jobs) {
        j.application.clear();  // like philly: no application, drawn by seed
        j.variant.clear();
    }
    return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sim_workload)

BOOST_AUTO_TEST_CASE(consecutive_rows_form_sweeps_of_the_given_size) {
    const CurveLibrary lib = toy_library();
    WorkloadOptions options;
    options.sweep_size = 4;
    auto w = build_workload(philly_like(10), lib, options);
    BOOST_REQUIRE(w.ok());
    BOOST_REQUIRE_EQUAL(w->sweeps.size(), 3u);  // 4 + 4 + 2
    BOOST_TEST(w->sweeps[0].trials.size() == 4u);
    BOOST_TEST(w->sweeps[2].trials.size() == 2u);
    BOOST_TEST(w->trials[5].sweep == 1u);
    BOOST_TEST(w->trials[0].id == 1u);
    for (const SimSweep& s : w->sweeps) {
        // the sweep's best trial has the largest best quality of its members
        for (std::uint32_t i : s.trials) BOOST_TEST(w->trials[i].best_quality <= s.best_quality);
        BOOST_TEST(w->trials[s.best_trial].best_quality == s.best_quality);
    }
    // one model per synthesised sweep: the first row's GPUs and duration, the rows' own arrivals
    BOOST_TEST(w->trials[5].gpus == 2u);  // row 4 (the sweep's first) asks for 2
    BOOST_TEST(w->trials[5].duration == 104.0);
    BOOST_TEST(w->trials[5].arrival == 50.0);
    options.uniform_sweeps = false;
    auto own = build_workload(philly_like(10), lib, options);
    BOOST_REQUIRE(own.ok());
    BOOST_TEST(own->trials[5].gpus == 3u);
    BOOST_TEST(own->trials[5].duration == 105.0);
    options.uniform_sweeps = true;
    options.max_jobs = 3;
    auto few = build_workload(philly_like(10), lib, options);
    BOOST_REQUIRE(few.ok());
    BOOST_TEST(few->trials.size() == 3u);
}

BOOST_AUTO_TEST_CASE(same_seed_same_workload_other_seed_differs) {
    const CurveLibrary lib = toy_library();
    WorkloadOptions options;
    options.seed = 7;
    auto a = build_workload(philly_like(40), lib, options);
    auto b = build_workload(philly_like(40), lib, options);
    options.seed = 8;
    auto c = build_workload(philly_like(40), lib, options);
    BOOST_REQUIRE(a.ok() && b.ok() && c.ok());
    bool differs = false;
    for (std::size_t i = 0; i < a->trials.size(); ++i) {
        BOOST_TEST(a->trials[i].variant == b->trials[i].variant);
        BOOST_TEST(a->trials[i].g == b->trials[i].g);
        BOOST_TEST(a->trials[i].r == b->trials[i].r);
        differs = differs || a->trials[i].g != c->trials[i].g;
    }
    BOOST_TEST(differs);
}

BOOST_AUTO_TEST_CASE(hp_variation_scales_improvement_and_slows_learning) {
    const CurveLibrary lib = toy_library();
    const Application& app = lib.apps()[0];
    WorkloadOptions options;
    options.seed = 3;
    auto w = build_workload(philly_like(200), lib, options);
    BOOST_REQUIRE(w.ok());
    std::size_t diverging = 0;
    for (const SimTrial& t : w->trials) {
        BOOST_TEST(t.g <= 1.0);
        BOOST_TEST(t.g >= 0.4);
        BOOST_TEST(t.r >= 1.0);
        BOOST_TEST(t.steps.size() == 10u);
        const CurveVariant& base = *app.find_variant(t.variant);
        // never better than the recorded run it is drawn from
        for (std::size_t k = 0; k < t.metrics.size(); ++k) {
            if (std::isfinite(t.metrics[k]) && std::isfinite(base.metrics[k]))
                BOOST_TEST(t.metrics[k] <= base.metrics[k] + 1e-12);
        }
        if (t.diverges) {
            ++diverging;
            BOOST_TEST(std::isnan(t.metrics.back()));
            BOOST_TEST(std::isfinite(t.metrics.front()));
        }
    }
    // 10% of trials diverge: allow sampling noise
    BOOST_TEST(diverging >= 8u);
    BOOST_TEST(diverging <= 35u);
}

BOOST_AUTO_TEST_CASE(variation_none_keeps_recorded_curves) {
    const CurveLibrary lib = toy_library();
    const Workload w = make_workload(lib, {{0, 1, 100, "good", ""}, {5, 1, 100, "bad", ""}});
    BOOST_TEST(w.trials[0].metrics == lib.apps()[0].find_variant("good")->metrics);
    BOOST_TEST(w.trials[0].final_quality == 1.0);
    BOOST_TEST(w.trials[1].final_quality < 0.3);
    BOOST_TEST(w.trials[0].max_step == 10.0);
}

BOOST_AUTO_TEST_CASE(unknown_application_skipped_or_error) {
    const CurveLibrary lib = toy_library();
    Trace t = make_trace({{0, 1, 100, "good", ""}, {1, 1, 100, "good", ""}});
    t.jobs[1].application = "bert";
    WorkloadOptions options;
    auto skipped = build_workload(t, lib, options);
    BOOST_REQUIRE(skipped.ok());
    BOOST_TEST(skipped->trials.size() == 1u);
    BOOST_TEST(skipped->skipped_rows == 1u);
    BOOST_TEST(skipped->skipped_applications.front() == "bert");
    options.skip_unknown_applications = false;
    auto strict = build_workload(t, lib, options);
    BOOST_REQUIRE(!strict.ok());
    BOOST_TEST(strict.error().message.find("trace line 3: application 'bert'") != std::string::npos,
               strict.error().message);
    Trace v = make_trace({{0, 1, 100, "great", ""}});
    auto bad_variant = build_workload(v, lib, options);
    BOOST_REQUIRE(!bad_variant.ok());
    BOOST_TEST(bad_variant.error().message.find("variant 'great'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(pollux_durations_come_from_step_times) {
    auto lib = CurveLibrary::load(kData + "/curves");
    auto trace = read_trace(kData + "/traces/pollux-workloads/workload-1.csv");
    BOOST_REQUIRE(lib.ok() && trace.ok());
    auto w = build_workload(trace.value(), lib.value(), WorkloadOptions{});
    BOOST_REQUIRE_MESSAGE(w.ok(), (w.ok() ? std::string() : w.error().message));
    BOOST_TEST(w->skipped_rows > 0u);  // bert and yolov3 have no curves
    std::set<std::string> apps;
    for (const SimTrial& t : w->trials) {
        BOOST_TEST(t.duration > 0.0);
        BOOST_TEST(std::isfinite(t.duration));
        apps.insert(lib->apps()[t.app].name);
    }
    BOOST_TEST(apps.size() == 4u);
    // every sweep holds one application
    for (const SimSweep& s : w->sweeps) {
        for (std::uint32_t i : s.trials) BOOST_TEST(w->trials[i].app == s.app);
    }
}

// A sweep kept as `step,metric` CSVs (contrib/heldout/sim_scenario.py, contrib/bench_curves.sh):
// its steps are optimiser steps, as an `iteration` column's, so placements.csv's step time gives the
// duration; a `progress` column counts samples, and no step time applies to it.
BOOST_AUTO_TEST_CASE(durations_from_a_step_column_not_from_progress) {
    TempDir dir;
    dir.write("lm/validation-1.csv", "step,metric\n10,0.5\n20,0.6\n40,0.7\n");
    dir.write("lm/validation-2.csv", "progress,metric\n10,0.5\n20,0.6\n40,0.7\n");
    dir.write("lm/placements.csv", "placement,local_bsz,step_time\n1,1,2.5\n1,2,2.5\n");
    auto lib = CurveLibrary::load(dir.path.string());
    BOOST_REQUIRE_MESSAGE(lib.ok(), (lib.ok() ? std::string() : lib.error().message));
    const std::string header = "name,time,application,num_replicas,batch_size\n";
    auto steps = parse_trace(header + "a,0,lm,1,1\n", "trace.csv", TraceFormat::pollux);
    BOOST_REQUIRE(steps.ok());
    auto w = build_workload(steps.value(), lib.value(), WorkloadOptions{});
    BOOST_REQUIRE_MESSAGE(w.ok(), (w.ok() ? std::string() : w.error().message));
    BOOST_TEST(w->trials[0].duration == 100.0);  // 40 steps of 2.5 s
    auto samples = parse_trace(header + "b,0,lm,1,2\n", "trace.csv", TraceFormat::pollux);
    BOOST_REQUIRE(samples.ok());
    auto none = build_workload(samples.value(), lib.value(), WorkloadOptions{});
    BOOST_REQUIRE(!none.ok());
    BOOST_TEST(none.error().message.find("none derivable for lm/2 (needs a step or iteration column") !=
               std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
