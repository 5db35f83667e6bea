// explsched: the production engine (src/common/engine.hpp), unchanged, driven the way the
// slurmctld plugins drive it. Every rerank period (PriorityCalcPeriod) every queued and running
// trial is handed to Engine::evaluate; each scheduling round then acts on the last answers as
// Slurm acts on the plugins' (a trial queued since the last re-ranking has the provisional
// assessment priority_p_set gives it at submit):
//  - terminate / requeue_hold (hopeless or diverged trials) → the trial is stopped for good
//    (a held job never runs again in the simulation);
//  - pending trials start in the engine's priority order while GPUs are free (Slurm starts any
//    job that fits; the priority only orders them);
//  - a pending trial that does not fit may preempt running trials the engine allows
//    (Engine::can_preempt, the preempt/explsched plugin's rule), lowest utility first, but only
//    if that frees enough GPUs;
//  - pause (freeze-thaw) → a running trial is checkpointed and held, holding no GPU; a paused
//    trial the engine resumes (decision run) is queued again, one it gives up on is stopped.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "core/sched/engine.hpp"
#include "core/sched/job_summary.hpp"
#include "sim/sim_policy.hpp"

namespace explsched::sim {

namespace {

// The engine treats a start time of 0 as unknown; simulated time starts at 0, so the policy
// hands the engine an epoch-like clock.
constexpr double kEpoch = 1.0e9;

std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    std::ostringstream out;
    out.precision(10);
    out << v;
    return out.str();
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) continue;
        out += c;
    }
    return out + "\"";
}

class ExplschedPolicy final : public Policy {
public:
    ExplschedPolicy(Engine engine, const PolicyContext& context)
        : engine_(std::move(engine)), context_(context) {}
    std::string_view name() const override { return "explsched"; }

    Status schedule(const RoundInput& input, RoundPlan& plan) override {
        now_ = input.now;
        trials_.clear();
        for (ObservedTrial* t : input.running) trials_.push_back(t);
        for (ObservedTrial* t : input.pending) trials_.push_back(t);
        for (ObservedTrial* t : input.waiting) trials_.push_back(t);
        const std::size_t n_queued = trials_.size();
        for (ObservedTrial* t : input.paused) trials_.push_back(t);
        const std::size_t n_running = input.running.size();
        const bool rerank =
            last_rerank_ < 0.0 || input.now - last_rerank_ >= context_.settings.rerank_period_s;
        if (rerank) {
            last_rerank_ = input.now;
            // The trials the last re-ranking saw that have ended since, with their final curves
            // (what the plugin hands over from slurmctld's finished jobs).
            ended_views_.clear();
            for (const ObservedTrial* t : seen_)
                if (t->status == TrialStatus::finished || t->status == TrialStatus::stopped)
                    ended_views_.push_back(view_of(*t, JobState::pending));
            if (!ended_views_.empty()) engine_.record_ended(ended_views_);
            seen_ = trials_;
            views_.clear();
            for (std::size_t j = 0; j < trials_.size(); ++j) {
                views_.push_back(view_of(*trials_[j], j < n_running ? JobState::running : JobState::pending));
                views_.back().paused = j >= n_queued;
            }
            ClusterView cluster;
            cluster.now = kEpoch + input.now;
            cluster.total_gpus = input.cluster->total_gpus();
            if (auto ok = engine_.evaluate(views_, cluster, assessments_); !ok) {
                return make_error("policy explsched: " + ok.error().message);
            }
            if (context_.settings.record) {
                for (std::size_t j = 0; j < trials_.size(); ++j) last_[trials_[j]->id] = assessments_[j];
            }
        } else {
            // Between re-rankings the last round's assessments stand (what the plugins read);
            // a trial queued since gets the provisional assessment priority_p_set gives at submit.
            assessments_.resize(trials_.size());
            for (std::size_t j = 0; j < trials_.size(); ++j) {
                TrialKey key;
                key.job_id = trials_[j]->id;
                if (const Assessment* a = engine_.find(key)) {
                    assessments_[j] = *a;
                } else {
                    JobView v = view_of(*trials_[j], j < n_running ? JobState::running : JobState::pending);
                    v.paused = j >= n_queued;
                    assessments_[j] =
                        provisional_assessment(v, engine_.settings().unknown_value, engine_.settings());
                }
            }
        }

        FreeGpus free(*input.cluster);
        std::vector<char> gone(trials_.size(), 0);  // stopped or preempted this round
        if (rerank) {
            for (std::size_t j = 0; j < trials_.size(); ++j) {
                const Decision d = assessments_[j].decision;
                if (d == Decision::pause && j < n_running) {
                    plan.pause.push_back(trials_[j]->id);
                    note(plan, j);
                    gone[j] = 1;
                    free.give(trials_[j]->gpu_type, trials_[j]->gpus);
                    continue;
                }
                if (d == Decision::run && j >= n_queued) {
                    plan.resume.push_back(trials_[j]->id);  // queued again; starts from next round
                    note(plan, j);
                    continue;
                }
                if (d != Decision::terminate && d != Decision::requeue_hold) continue;
                plan.stop.push_back(trials_[j]->id);
                note(plan, j);
                gone[j] = 1;
                if (j < n_running) free.give(trials_[j]->gpu_type, trials_[j]->gpus);
            }
        }
        // Eligible pending trials by the engine's priority (ties: queued earlier, lower id).
        std::vector<std::size_t> order;
        for (std::size_t j = n_running; j < n_running + input.pending.size(); ++j) {
            if (!gone[j]) order.push_back(j);
        }
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return assessments_[a].priority > assessments_[b].priority;
        });
        for (std::size_t j : order) {
            const ObservedTrial& t = *trials_[j];
            std::string type = free.fitting_type(t.gpus);
            if (type.empty()) type = preempt_for(j, n_running, free, gone, plan);
            if (type.empty()) continue;
            free.take(type, t.gpus);
            plan.start.push_back({t.id, type});
            note(plan, j);
        }
        return {};
    }

    std::string describe_trial(const ObservedTrial& trial) const override {
        const auto it = last_.find(trial.id);
        if (it == last_.end()) return {};
        const Assessment& a = it->second;
        std::string s =
            "{\"priority\":" + std::to_string(a.priority) + ",\"utility\":" + json_number(a.utility) +
            ",\"price\":" + json_number(a.price) + ",\"state\":" + json_string(to_string(a.state)) +
            ",\"decision\":" + json_string(to_string(a.decision)) + ",\"reason\":" + json_string(explain(a)) +
            ",\"prediction\":{\"value\":" + json_number(a.prediction.value) +
            ",\"lower\":" + json_number(a.prediction.lower) +
            ",\"upper\":" + json_number(a.prediction.upper) +
            ",\"horizon\":" + json_number(a.prediction.horizon) +
            ",\"observed\":" + std::to_string(a.prediction.observed) +
            ",\"widened\":" + json_number(a.prediction.widened) +
            ",\"jump\":" + json_number(a.prediction.jump_allowance) +
            ",\"track_lead\":" + json_number(a.prediction.track_lead) +
            ",\"track_chance\":" + json_number(a.prediction.track_chance) +
            ",\"extrapolated\":" + (a.prediction.extrapolated ? "true" : "false") + "}}";
        return s;
    }

private:
    static JobView view_of(const ObservedTrial& t, JobState state) {
        JobView v;
        v.key.job_id = t.id;
        v.group = *t.group;
        v.direction = t.direction;
        v.max_steps = t.max_step;
        v.lr_drops = t.lr_drops;
        v.has_hopeless_action = true;
        v.hopeless_action = HopelessAction::terminate;
        v.gpus = t.gpus;
        v.pauses = t.pauses;
        v.gpu_type = state == JobState::running ? t.gpu_type : std::string();
        v.job_type = *t.job_type;
        v.state = state;
        v.submit_time = kEpoch + t.queued_at;
        v.start_time = state == JobState::running ? kEpoch + t.started_at : 0.0;
        v.points = PointSpan(t.points);
        return v;
    }

    void note(RoundPlan& plan, std::size_t j) const {
        if (context_.settings.record) plan.notes.emplace_back(trials_[j]->id, explain(assessments_[j]));
    }

    // How long running trial v's current run has lasted (what the preempt plugin reads from the
    // job's start time: a trial preempted and started again since the last re-ranking still
    // carries the verdict it had before).
    double running_s(std::size_t v) const { return now_ - trials_[v]->started_at; }

    // Frees GPUs for pending trial j by preempting running trials the engine lets it preempt,
    // lowest utility first. Returns the type it can start on, or "" (nothing preempted).
    std::string preempt_for(std::size_t j, std::size_t n_running, FreeGpus& free, std::vector<char>& gone,
                            RoundPlan& plan) {
        const ObservedTrial& t = *trials_[j];
        std::vector<std::size_t> victims;
        for (std::size_t v = 0; v < n_running; ++v) {
            if (gone[v]) continue;
            if (engine_.can_preempt(assessments_[j], assessments_[v], running_s(v)).allowed)
                victims.push_back(v);
        }
        if (victims.empty()) return {};
        std::stable_sort(victims.begin(), victims.end(), [&](std::size_t a, std::size_t b) {
            return assessments_[a].utility < assessments_[b].utility;
        });
        for (const std::string& type : free.types()) {
            std::uint32_t have = free.of(type);
            std::vector<std::size_t> chosen;
            for (std::size_t v : victims) {
                if (have >= t.gpus) break;
                if (trials_[v]->gpu_type != type) continue;
                chosen.push_back(v);
                have += trials_[v]->gpus;
            }
            if (have < t.gpus) continue;
            for (std::size_t v : chosen) {
                plan.preempt.push_back(trials_[v]->id);
                if (context_.settings.record) {
                    plan.notes.emplace_back(
                        trials_[v]->id,
                        "preempted by job " + std::to_string(t.id) + ": " +
                            engine_.can_preempt(assessments_[j], assessments_[v], running_s(v)).reason);
                }
                gone[v] = 1;
                free.give(type, trials_[v]->gpus);
            }
            return type;
        }
        return {};
    }

    Engine engine_;
    PolicyContext context_;
    double now_ = 0.0;
    std::vector<JobView> views_;
    std::vector<ObservedTrial*> trials_;
    std::vector<ObservedTrial*> seen_;  // the trials of the last re-ranking
    std::vector<JobView> ended_views_;
    std::vector<Assessment> assessments_;
    std::unordered_map<std::uint32_t, Assessment> last_;
    double last_rerank_ = -1.0;
};

}  // namespace

Result<std::unique_ptr<Policy>> make_explsched_policy(const PolicyContext& context) {
    ThroughputTable table = context.throughputs != nullptr ? *context.throughputs : ThroughputTable{};
    auto engine = Engine::create(context.settings.engine, std::move(table));
    if (!engine) return make_error("policy explsched: " + engine.error().message);
    return std::unique_ptr<Policy>(std::make_unique<ExplschedPolicy>(std::move(engine.value()), context));
}

}  // namespace explsched::sim
