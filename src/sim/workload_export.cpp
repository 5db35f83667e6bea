#include "sim/workload_export.hpp"

#include <cmath>

#include "sim/simulator.hpp"

namespace explsched::sim {

namespace {

nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

double trial_speed(const SimTrial& trial, const Application& app, const ThroughputTable& throughputs,
                   const std::string& reference_gpu, const std::string& type) {
    const double base = trial.max_step / trial.duration;
    if (app.job_type.empty() || type == reference_gpu) return base;
    const double ratio = throughputs.speed_ratio(app.job_type, reference_gpu, type);
    return base * (std::isfinite(ratio) && ratio > 0.0 ? ratio : 1.0);
}

nlohmann::json workload_json(const Workload& workload, const CurveLibrary& library,
                             const ThroughputTable& throughputs, const ClusterSpec& cluster,
                             const std::string& reference_gpu, std::uint64_t seed) {
    const Cluster shape(cluster);
    nlohmann::json sweeps = nlohmann::json::array();
    for (const SimSweep& s : workload.sweeps) {
        const double best_final = workload.trials[s.best_trial].final_quality;
        sweeps.push_back({{"name", s.name},
                          {"application", library.apps()[s.app].name},
                          {"best_trial", s.best_trial},
                          {"best_quality", s.best_quality},
                          {"target_quality", best_final - kBestTolerance},
                          {"first_arrival", s.first_arrival}});
    }
    nlohmann::json trials = nlohmann::json::array();
    for (const SimTrial& t : workload.trials) {
        const Application& app = library.apps()[t.app];
        nlohmann::json speed = nlohmann::json::object();
        for (const std::string& type : shape.types())
            speed[type] = trial_speed(t, app, throughputs, reference_gpu, type);
        nlohmann::json metrics = nlohmann::json::array(), quality = nlohmann::json::array();
        for (double m : t.metrics) {
            metrics.push_back(number(m));
            quality.push_back(std::isfinite(m) ? nlohmann::json(app.quality(m)) : nlohmann::json(nullptr));
        }
        trials.push_back({{"id", t.id},
                          {"sweep", t.sweep},
                          {"arrival", t.arrival},
                          {"gpus", t.gpus},
                          {"duration", t.duration},
                          {"max_step", t.max_step},
                          {"speed", speed},
                          {"steps", t.steps},
                          {"metrics", metrics},
                          {"quality", quality}});
    }
    nlohmann::json types = nlohmann::json::array();
    for (const std::string& type : shape.types())
        types.push_back({{"type", type}, {"gpus", cluster.gpus_of(type)}});
    return {{"seed", seed}, {"cluster", types}, {"sweeps", sweeps}, {"trials", trials}};
}

}  // namespace explsched::sim
