// The policy registry and the helpers every policy shares.
#include "sim/sim_policy.hpp"

#include "explsched_config.h"  // HAVE_GLPK

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace explsched::sim {

const char* to_string(TrialStatus status) {
    switch (status) {
        case TrialStatus::future:
            return "future";
        case TrialStatus::pending:
            return "pending";
        case TrialStatus::running:
            return "running";
        case TrialStatus::finished:
            return "finished";
        case TrialStatus::stopped:
            return "stopped";
        case TrialStatus::paused:
            return "paused";
    }
    return "?";
}

FreeGpus::FreeGpus(const Cluster& cluster) : types_(cluster.types()) {
    for (const std::string& t : types_) free_.push_back(cluster.free_gpus(t));
}

std::uint32_t FreeGpus::of(std::string_view type) const {
    for (std::size_t i = 0; i < types_.size(); ++i) {
        if (types_[i] == type) return free_[i];
    }
    return 0;
}

std::uint32_t FreeGpus::total() const {
    std::uint32_t sum = 0;
    for (std::uint32_t f : free_) sum += f;
    return sum;
}

std::string FreeGpus::fitting_type(std::uint32_t gpus) const {
    for (std::size_t i = 0; i < types_.size(); ++i) {
        if (free_[i] >= gpus) return types_[i];
    }
    return {};
}

bool FreeGpus::take(std::string_view type, std::uint32_t gpus) {
    for (std::size_t i = 0; i < types_.size(); ++i) {
        if (types_[i] == type) {
            if (free_[i] < gpus) return false;
            free_[i] -= gpus;
            return true;
        }
    }
    return false;
}

void FreeGpus::give(std::string_view type, std::uint32_t gpus) {
    for (std::size_t i = 0; i < types_.size(); ++i) {
        if (types_[i] == type) free_[i] += gpus;
    }
}

void RoundPlan::clear() {
    stop.clear();
    preempt.clear();
    start.clear();
    pause.clear();
    resume.clear();
    notes.clear();
}

void start_in_order(const std::vector<ObservedTrial*>& order, FreeGpus& free, RoundPlan& plan) {
    for (ObservedTrial* t : order) {
        if (free.total() == 0) break;
        const std::string type = free.fitting_type(t->gpus);
        if (type.empty()) continue;
        free.take(type, t->gpus);
        plan.start.push_back({t->id, type});
    }
}

void plan_by_rank(const RoundInput& input, const std::vector<ObservedTrial*>& ranked,
                  const std::vector<ObservedTrial*>& pinned, RoundPlan& plan) {
    std::uint32_t capacity = input.cluster->total_gpus();
    std::unordered_set<std::uint32_t> keep;
    for (const ObservedTrial* t : pinned) {
        keep.insert(t->id);
        capacity -= t->gpus;
    }
    std::vector<ObservedTrial*> to_start;
    for (ObservedTrial* t : ranked) {
        if (keep.count(t->id) != 0 || t->gpus > capacity) continue;
        capacity -= t->gpus;
        if (t->status == TrialStatus::running) {
            keep.insert(t->id);
        } else {
            to_start.push_back(t);
        }
    }
    FreeGpus free(*input.cluster);
    if (!to_start.empty()) {
        for (ObservedTrial* t : input.running) {
            if (keep.count(t->id) == 0) {
                plan.preempt.push_back(t->id);
                free.give(t->gpu_type, t->gpus);
            }
        }
    }
    start_in_order(to_start, free, plan);
}

double type_speed(const PolicyContext& context, const ObservedTrial& trial, std::string_view type) {
    if (context.throughputs == nullptr || trial.job_type == nullptr || trial.job_type->empty()) return 1.0;
    const double r =
        context.throughputs->speed_ratio(*trial.job_type, context.reference_gpu, std::string(type));
    return std::isfinite(r) && r > 0.0 ? r : 1.0;
}

const std::vector<std::string>& policy_names() {
#ifdef HAVE_GLPK
    static const std::vector<std::string> names = {"fifo", "tiresias", "gandiva",   "gavel", "asha",
                                                   "slaq", "oasis",    "explsched", "oracle"};
#else
    // gavel solves LPs with GLPK, which this build was configured without.
    static const std::vector<std::string> names = {"fifo", "tiresias", "gandiva",   "asha",
                                                   "slaq", "oasis",    "explsched", "oracle"};
#endif
    return names;
}

Result<std::unique_ptr<Policy>> make_policy(std::string_view name, const PolicyContext& context,
                                            const Workload& workload) {
    if (name == "fifo") return make_fifo_policy(context);
    if (name == "tiresias") return make_tiresias_policy(context);
    if (name == "gandiva") return make_gandiva_policy(context);
#ifdef HAVE_GLPK
    if (name == "gavel") return make_gavel_policy(context);
#else
    if (name == "gavel")
        return make_error(
            "policy 'gavel': not built: configure found no GLPK (install libglpk-dev and rebuild)");
#endif
    if (name == "asha") return make_asha_policy(context);
    if (name == "slaq") return make_slaq_policy(context);
    if (name == "oasis") return make_oasis_policy(context);
    if (name == "explsched") return make_explsched_policy(context);
    if (name == "oracle") return make_oracle_policy(context, workload);
    std::string known;
    for (const std::string& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
    return make_error("policy: '" + std::string(name) + "' is not one of " + known);
}

}  // namespace explsched::sim
