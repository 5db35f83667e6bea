#include "sim/simulator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

namespace explsched::sim {

namespace {

// What the simulator knows of a trial beyond what its policy may see.
struct Runtime {
    double progress = 0.0;      // steps trained (checkpointed at preemption)
    double penalty_left = 0.0;  // restart cost still to burn before progress resumes
    double rate = 0.0;          // steps per second on the type it holds
    std::size_t reported = 0;   // curve points passed
    Allocation allocation;
};

class Simulation {
public:
    Simulation(const Workload& workload, const CurveLibrary& library, const ThroughputTable& throughputs,
               const ClusterSpec& spec, Policy& policy, const SimSettings& settings)
        : workload_(workload),
          library_(library),
          throughputs_(throughputs),
          cluster_(spec),
          policy_(policy),
          settings_(settings) {}

    Result<SimResult> run();

private:
    Status apply(const RoundPlan& plan, double now);
    void advance(double from, double to);
    double next_event(double now) const;
    void end_trial(std::size_t i, TrialStatus status, double when, const char* what, const std::string& note);
    void vacate(std::size_t i);
    void leave_gpus(std::size_t i, TrialStatus status, double now, const char* what, const RoundPlan& plan,
                    std::uint32_t id);
    void mark(std::size_t i, double now, const char* what, const RoundPlan& plan, std::uint32_t id);
    void report(std::size_t i, double when, double wall);
    double speed(std::size_t i, const std::string& type) const;
    std::vector<double> time_to_best_bounds() const;  // SimResult::sweep_time_to_best_bound
    const std::string* note_for(const RoundPlan& plan, std::uint32_t id) const;

    const Workload& workload_;
    const CurveLibrary& library_;
    const ThroughputTable& throughputs_;
    Cluster cluster_;
    Policy& policy_;
    SimSettings settings_;
    std::vector<ObservedTrial> observed_;
    std::vector<Runtime> runtime_;
    std::vector<std::uint32_t> running_;  // indices, kept sorted
    std::vector<std::uint32_t> queued_;   // pending indices
    std::vector<std::uint32_t> paused_;   // paused indices, kept sorted
    std::size_t idle_paused_rounds_ = 0;  // rounds with only paused trials left and nothing done
    SimResult result_;
};

// Called before the first round, while every GPU is free.
std::vector<double> Simulation::time_to_best_bounds() const {
    std::vector<double> bound(workload_.sweeps.size(), NAN);
    for (std::size_t i = 0; i < workload_.trials.size(); ++i) {
        const SimTrial& t = workload_.trials[i];
        const SimSweep& sweep = workload_.sweeps[t.sweep];
        const double target = workload_.trials[sweep.best_trial].final_quality - kBestTolerance;
        const Application& app = library_.apps()[t.app];
        double fastest = 0.0;
        for (const std::string& type : cluster_.types()) {
            if (cluster_.free_gpus(type) >= t.gpus) fastest = std::max(fastest, speed(i, type));
        }
        if (!(fastest > 0.0)) continue;
        for (std::size_t k = 0; k < t.steps.size(); ++k) {
            if (std::isfinite(t.metrics[k]) && app.quality(t.metrics[k]) >= target) {
                const double when = t.arrival - sweep.first_arrival + t.steps[k] / fastest;
                double& b = bound[t.sweep];
                if (std::isnan(b) || when < b) b = when;
                break;
            }
        }
    }
    return bound;
}

double Simulation::speed(std::size_t i, const std::string& type) const {
    const SimTrial& t = workload_.trials[i];
    const double base = t.max_step / t.duration;
    const std::string& job_type = library_.apps()[t.app].job_type;
    if (job_type.empty() || type == settings_.reference_gpu) return base;
    const double ratio = throughputs_.speed_ratio(job_type, settings_.reference_gpu, type);
    return base * (std::isfinite(ratio) && ratio > 0.0 ? ratio : 1.0);
}

const std::string* Simulation::note_for(const RoundPlan& plan, std::uint32_t id) const {
    for (const auto& [who, note] : plan.notes) {
        if (who == id) return &note;
    }
    return nullptr;
}

void Simulation::report(std::size_t i, double when, double wall) {
    const SimTrial& t = workload_.trials[i];
    Runtime& rt = runtime_[i];
    ObservedTrial& o = observed_[i];
    TrialOutcome& out = result_.trials[i];
    CurvePoint p;
    p.step = t.steps[rt.reported];
    p.metric = t.metrics[rt.reported];
    p.wall_time = wall;
    p.throughput = rt.rate;
    o.points.push_back(p);
    ++rt.reported;
    out.reported = rt.reported;
    const Application& app = library_.apps()[t.app];
    if (std::isfinite(p.metric)) {
        const double q = app.quality(p.metric);
        if (q > out.best_quality || !std::isfinite(out.best_metric)) {
            out.best_quality = std::max(out.best_quality, q);
            out.best_metric = p.metric;
        }
        const SimSweep& sweep = workload_.sweeps[t.sweep];
        const double target = workload_.trials[sweep.best_trial].final_quality - kBestTolerance;
        double& reached = result_.sweep_time_to_best[t.sweep];
        if (std::isnan(reached) && q >= target) reached = when - sweep.first_arrival;
    }
}

// Frees running trial i's GPUs.
void Simulation::vacate(std::size_t i) {
    Runtime& rt = runtime_[i];
    cluster_.release(rt.allocation);
    rt.allocation = {};
    running_.erase(std::find(running_.begin(), running_.end(), static_cast<std::uint32_t>(i)));
}

// Running trial i leaves its GPUs for `status` (pending after a preemption, paused): its mark
// `what` recorded, the policy told. The caller has put it in its queue.
void Simulation::leave_gpus(std::size_t i, TrialStatus status, double now, const char* what,
                            const RoundPlan& plan, std::uint32_t id) {
    ObservedTrial& o = observed_[i];
    vacate(i);
    o.status = status;
    o.gpu_type.clear();
    mark(i, now, what, plan, id);
    policy_.on_end(o);
}

// Records `what` on trial i's timeline (with the policy's note for job `id`) when recording.
void Simulation::mark(std::size_t i, double now, const char* what, const RoundPlan& plan, std::uint32_t id) {
    if (!settings_.record) return;
    const std::string* note = note_for(plan, id);
    result_.trials[i].marks.push_back({now, runtime_[i].progress, what, note ? *note : std::string()});
}

void Simulation::end_trial(std::size_t i, TrialStatus status, double when, const char* what,
                           const std::string& note) {
    ObservedTrial& o = observed_[i];
    Runtime& rt = runtime_[i];
    TrialOutcome& out = result_.trials[i];
    if (o.status == TrialStatus::running) {
        vacate(i);
    } else if (o.status == TrialStatus::pending) {
        queued_.erase(std::find(queued_.begin(), queued_.end(), static_cast<std::uint32_t>(i)));
    } else if (o.status == TrialStatus::paused) {
        paused_.erase(std::find(paused_.begin(), paused_.end(), static_cast<std::uint32_t>(i)));
    }
    o.status = status;
    out.status = status;
    out.end = when;
    out.progress = rt.progress;
    out.gpu_seconds = o.gpu_seconds;
    if (settings_.record) out.marks.push_back({when, rt.progress, what, note});
    policy_.on_end(o);
}

Status Simulation::apply(const RoundPlan& plan, double now) {
    const auto bad = [&](std::uint32_t id, const char* why) {
        return make_error("policy " + std::string(policy_.name()) + ": job " + std::to_string(id) + ": " +
                          why);
    };
    const auto index_of = [&](std::uint32_t id) -> long {
        return id >= 1 && id <= observed_.size() ? static_cast<long>(id) - 1 : -1;
    };
    for (std::uint32_t id : plan.stop) {
        const long i = index_of(id);
        if (i < 0) return bad(id, "stop of an unknown job");
        const auto s = observed_[static_cast<std::size_t>(i)].status;
        if (s != TrialStatus::running && s != TrialStatus::pending && s != TrialStatus::paused)
            return bad(id, "stop of a job that is not queued, running or paused");
        const std::string* note = settings_.record ? note_for(plan, id) : nullptr;
        end_trial(static_cast<std::size_t>(i), TrialStatus::stopped, now, "stop",
                  note ? *note : std::string());
    }
    for (std::uint32_t id : plan.preempt) {
        const long i = index_of(id);
        if (i < 0 || observed_[static_cast<std::size_t>(i)].status != TrialStatus::running) {
            return bad(id, "preemption of a job that is not running");
        }
        const auto k = static_cast<std::size_t>(i);
        ObservedTrial& o = observed_[k];
        queued_.push_back(static_cast<std::uint32_t>(k));
        o.queued_at = now;
        o.eligible_at = now + settings_.requeue_delay_s;
        ++result_.trials[k].preemptions;
        leave_gpus(k, TrialStatus::pending, now, "preempt", plan, id);
    }
    for (std::uint32_t id : plan.pause) {
        const long i = index_of(id);
        if (i < 0 || observed_[static_cast<std::size_t>(i)].status != TrialStatus::running)
            return bad(id, "pause of a job that is not running");
        const auto k = static_cast<std::size_t>(i);
        paused_.insert(std::lower_bound(paused_.begin(), paused_.end(), static_cast<std::uint32_t>(k)),
                       static_cast<std::uint32_t>(k));
        ++observed_[k].pauses;
        ++result_.trials[k].pauses;
        leave_gpus(k, TrialStatus::paused, now, "pause", plan, id);
    }
    for (std::uint32_t id : plan.resume) {
        const long i = index_of(id);
        if (i < 0 || observed_[static_cast<std::size_t>(i)].status != TrialStatus::paused)
            return bad(id, "resume of a job that is not paused");
        const auto k = static_cast<std::size_t>(i);
        ObservedTrial& o = observed_[k];
        paused_.erase(std::find(paused_.begin(), paused_.end(), static_cast<std::uint32_t>(k)));
        queued_.push_back(static_cast<std::uint32_t>(k));
        o.status = TrialStatus::pending;
        o.queued_at = now;
        // the requeue delay ran while it was paused
        o.eligible_at = now;
        ++result_.trials[k].resumes;
        mark(k, now, "resume", plan, id);
    }
    for (const StartOrder& order : plan.start) {
        const long i = index_of(order.id);
        if (i < 0) return bad(order.id, "start of an unknown job");
        const auto k = static_cast<std::size_t>(i);
        ObservedTrial& o = observed_[k];
        if (o.status != TrialStatus::pending) return bad(order.id, "start of a job that is not pending");
        if (o.eligible_at > now) return bad(order.id, "start during its requeue delay");
        std::string type = order.gpu_type;
        if (type.empty()) {
            for (const std::string& t : cluster_.types()) {
                if (cluster_.free_gpus(t) >= o.gpus) {
                    type = t;
                    break;
                }
            }
        }
        Allocation allocation = type.empty() ? Allocation{} : cluster_.allocate(type, o.gpus);
        if (allocation.empty()) return bad(order.id, "start without enough free GPUs");
        Runtime& rt = runtime_[k];
        rt.allocation = std::move(allocation);
        rt.rate = speed(k, type);
        rt.penalty_left = o.first_started_at >= 0.0 ? settings_.restart_cost_s : 0.0;
        if (o.first_started_at >= 0.0) ++o.restarts;
        if (o.first_started_at < 0.0) {
            o.first_started_at = now;
            result_.trials[k].first_start = now;
        }
        o.status = TrialStatus::running;
        o.started_at = now;
        o.gpu_type = type;
        queued_.erase(std::find(queued_.begin(), queued_.end(), static_cast<std::uint32_t>(k)));
        running_.insert(std::lower_bound(running_.begin(), running_.end(), static_cast<std::uint32_t>(k)),
                        static_cast<std::uint32_t>(k));
        mark(k, now, "start", plan, order.id);
    }
    return {};
}

void Simulation::advance(double from, double to) {
    const double dt = to - from;
    // Copy: finishing trials leave running_.
    const std::vector<std::uint32_t> running = running_;
    for (std::uint32_t i : running) {
        const SimTrial& t = workload_.trials[i];
        ObservedTrial& o = observed_[i];
        Runtime& rt = runtime_[i];
        const double penalty = std::min(rt.penalty_left, dt);
        rt.penalty_left -= penalty;
        const double progress0 = rt.progress;
        const double run0 = o.run_seconds;
        const double available = dt - penalty;
        const double need = (t.max_step - progress0) / rt.rate;
        // Floating-point progress: a finish within a hair of the round boundary happens in it.
        const bool finishes = need <= available + 1e-9 * (t.max_step / rt.rate);
        const double used = finishes ? penalty + need : dt;
        rt.progress = finishes ? t.max_step : progress0 + available * rt.rate;
        o.run_seconds += used;
        o.gpu_seconds += used * o.gpus;
        // Progress accumulates in floating point: a report within a hair of it counts as passed.
        const double slack = 1e-9 * t.max_step;
        while (rt.reported < t.steps.size() && t.steps[rt.reported] <= rt.progress + slack) {
            const double offset = penalty + std::max(0.0, t.steps[rt.reported] - progress0) / rt.rate;
            report(i, from + offset, run0 + offset);
        }
        if (finishes) end_trial(i, TrialStatus::finished, from + used, "finish", std::string());
    }
}

double Simulation::next_event(double now) const {
    double next = INFINITY;
    for (std::uint32_t i : running_) {
        const SimTrial& t = workload_.trials[i];
        const Runtime& rt = runtime_[i];
        const double target = rt.reported < t.steps.size() ? t.steps[rt.reported] : t.max_step;
        next = std::min(next, now + rt.penalty_left + std::max(0.0, target - rt.progress) / rt.rate);
    }
    for (std::uint32_t i : queued_) next = std::min(next, std::max(now, observed_[i].eligible_at));
    return next;
}

Result<SimResult> Simulation::run() {
    const auto wall_start = std::chrono::steady_clock::now();
    const std::size_t n = workload_.trials.size();
    result_.policy = std::string(policy_.name());
    result_.trials.assign(n, TrialOutcome{});
    result_.sweep_time_to_best.assign(workload_.sweeps.size(), NAN);
    result_.sweep_time_to_best_bound = time_to_best_bounds();
    observed_.resize(n);
    runtime_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const SimTrial& t = workload_.trials[i];
        ObservedTrial& o = observed_[i];
        o.id = t.id;
        o.index = static_cast<std::uint32_t>(i);
        o.sweep = t.sweep;
        o.group = &workload_.sweeps[t.sweep].name;
        o.app = t.app;
        o.direction = library_.apps()[t.app].direction;
        o.job_type = &library_.apps()[t.app].job_type;
        o.gpus = t.gpus;
        o.max_step = t.max_step;
        o.lr_drops.clear();
        for (double f : library_.apps()[t.app].lr_drop_fractions) o.lr_drops.push_back(f * t.max_step);
        o.time_limit_s = t.duration;
        o.arrival = t.arrival;
        // A job runs on one GPU type: one that no type can hold would wait forever.
        std::uint32_t largest = 0;
        for (const std::string& type : cluster_.types())
            largest = std::max(largest, cluster_.free_gpus(type));
        if (t.gpus > largest) {
            return make_error("trace line " + std::to_string(t.trace_line) + ": job '" + t.trace_name +
                              "' asks for " + std::to_string(t.gpus) + " GPUs, the cluster has " +
                              (cluster_.types().size() > 1
                                   ? "at most " + std::to_string(largest) + " of one type"
                                   : std::to_string(cluster_.total_gpus())));
        }
    }
    const double period = settings_.period_s;
    std::size_t next_arrival = 0;
    double now = n > 0 ? workload_.trials[0].arrival : 0.0;
    RoundInput input;
    input.cluster = &cluster_;
    input.period_s = period;
    RoundPlan plan;
    while (true) {
        while (next_arrival < n && workload_.trials[next_arrival].arrival <= now) {
            ObservedTrial& o = observed_[next_arrival];
            o.status = TrialStatus::pending;
            o.queued_at = o.eligible_at = o.arrival;
            result_.trials[next_arrival].status = TrialStatus::pending;
            queued_.push_back(static_cast<std::uint32_t>(next_arrival));
            ++next_arrival;
        }
        if (running_.empty() && queued_.empty() && paused_.empty()) {
            if (next_arrival == n) break;
            // Idle cluster: jump to the round in which the next trial arrives.
            const double gap = workload_.trials[next_arrival].arrival - now;
            now += std::ceil(gap / period) * period;
            continue;
        }
        if (settings_.max_time_s > 0.0 && now >= settings_.max_time_s) break;
        input.now = now;
        input.pending.clear();
        input.waiting.clear();
        input.running.clear();
        for (std::uint32_t i : queued_) {
            (observed_[i].eligible_at <= now ? input.pending : input.waiting).push_back(&observed_[i]);
        }
        const auto by_queue = [](const ObservedTrial* a, const ObservedTrial* b) {
            return a->queued_at != b->queued_at ? a->queued_at < b->queued_at : a->id < b->id;
        };
        std::sort(input.pending.begin(), input.pending.end(), by_queue);
        std::sort(input.waiting.begin(), input.waiting.end(), by_queue);
        for (std::uint32_t i : running_) input.running.push_back(&observed_[i]);
        input.paused.clear();
        for (std::uint32_t i : paused_) input.paused.push_back(&observed_[i]);
        plan.clear();
        const auto t0 = std::chrono::steady_clock::now();
        if (auto ok = policy_.schedule(input, plan); !ok) return ok.error();
        const auto t1 = std::chrono::steady_clock::now();
        result_.decision_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        ++result_.rounds;
        if (auto ok = apply(plan, now); !ok) return ok.error();
        // A policy that leaves only paused trials and never resumes nor stops them would loop for
        // ever: after a day of such rounds they count as stopped.
        const bool only_paused = running_.empty() && queued_.empty() && !paused_.empty() && next_arrival == n;
        idle_paused_rounds_ = only_paused ? idle_paused_rounds_ + 1 : 0;
        if (static_cast<double>(idle_paused_rounds_) * period > 86400.0) {
            const std::vector<std::uint32_t> left = paused_;
            for (std::uint32_t i : left) end_trial(i, TrialStatus::stopped, now, "stop", "never resumed");
            continue;
        }

        bool eligible_left = false;
        for (std::uint32_t i : queued_) eligible_left = eligible_left || observed_[i].eligible_at <= now;
        double next = now + period;
        if (!eligible_left) {
            double event = next_event(now);
            if (next_arrival < n) event = std::min(event, workload_.trials[next_arrival].arrival);
            if (std::isfinite(event) && event > next) next = now + std::ceil((event - now) / period) * period;
        }
        if (settings_.max_time_s > 0.0) next = std::min(next, std::max(settings_.max_time_s, now));
        advance(now, next);
        now = next;
    }
    result_.end_time = now;
    for (std::size_t i = 0; i < n; ++i) {
        TrialOutcome& out = result_.trials[i];
        const ObservedTrial& o = observed_[i];
        if (o.status == TrialStatus::running || o.status == TrialStatus::pending ||
            o.status == TrialStatus::paused) {
            out.status = o.status;
            out.progress = runtime_[i].progress;
            out.gpu_seconds = o.gpu_seconds;
            if (settings_.record) out.marks.push_back({now, runtime_[i].progress, "unfinished", ""});
        }
        if (settings_.record) {
            out.points = o.points;
            out.detail = policy_.describe_trial(o);
        }
    }
    result_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return std::move(result_);
}

}  // namespace

Result<SimResult> simulate(const Workload& workload, const CurveLibrary& library,
                           const ThroughputTable& throughputs, const ClusterSpec& cluster, Policy& policy,
                           const SimSettings& settings) {
    if (!(settings.period_s > 0.0)) return make_error("simulator: period must be > 0 s");
    if (settings.restart_cost_s < 0.0) return make_error("simulator: restart cost must be >= 0 s");
    if (settings.requeue_delay_s < 0.0) return make_error("simulator: requeue delay must be >= 0 s");
    Simulation simulation(workload, library, throughputs, cluster, policy, settings);
    return simulation.run();
}

}  // namespace explsched::sim
