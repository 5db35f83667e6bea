// gavel (Narayanan et al., OSDI'20): heterogeneity-aware max-min fairness. An LP (GLPK) finds the
// fraction of time X[j][k] each trial should spend on each GPU type so that the smallest
// normalised effective throughput Σ_k T[j][k]·X[j][k] / T_eq[j] is as large as possible
// (T_eq: its throughput if it were spread over the cluster's types in proportion to their size),
// within each type's GPUs and one unit of time per trial. Gavel's round mechanism then realises
// X: at every slice boundary (settings.slice_s) trials are placed in order of
// X[j][k] / (share of its time in the system it has already had on k), preempting or migrating
// the rest; between boundaries free GPUs are filled in the same order (work conservation).
// Trials are never stopped early.
#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/sim_policy.hpp"

namespace explsched::sim {

namespace {

class GavelPolicy final : public Policy {
public:
    explicit GavelPolicy(const PolicyContext& context) : context_(context), types_(context.cluster->types()) {
        for (const std::string& t : types_) capacity_.push_back(context.cluster->gpus_of(t));
    }
    std::string_view name() const override { return "gavel"; }

    Status schedule(const RoundInput& input, RoundPlan& plan) override {
        account(input);
        std::vector<ObservedTrial*> jobs = input.running;
        jobs.insert(jobs.end(), input.pending.begin(), input.pending.end());
        const bool boundary = input.now - last_boundary_ >= context_.settings.slice_s;
        if (boundary) {
            last_boundary_ = input.now;
            std::vector<ObservedTrial*> all = jobs;
            all.insert(all.end(), input.waiting.begin(), input.waiting.end());
            solve(all);
        }
        // Candidate (trial, type) pairs by Gavel's priority.
        struct Pair {
            ObservedTrial* trial;
            std::size_t type;
            double priority;
        };
        std::vector<Pair> pairs;
        for (ObservedTrial* t : jobs) {
            const auto it = allocation_.find(t->id);
            const double elapsed = std::max(1.0, input.now - t->arrival);
            for (std::size_t k = 0; k < types_.size(); ++k) {
                // Trials the last LP did not see get an equal share on every type.
                const double x =
                    it != allocation_.end() ? it->second[k] : 1.0 / static_cast<double>(types_.size());
                if (x <= 1e-9) continue;
                const double had = received_[t->id].size() > k ? received_[t->id][k] / elapsed : 0.0;
                pairs.push_back({t, k, x / std::max(had, 1e-6)});
            }
        }
        std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) {
            if (a.priority != b.priority) return a.priority > b.priority;
            return a.trial->id < b.trial->id;
        });
        if (boundary) {
            // Re-place everything: running trials keep their GPUs only if chosen on their type.
            std::vector<std::uint32_t> room = capacity_;
            std::map<std::uint32_t, std::size_t> chosen;
            for (const Pair& p : pairs) {
                if (chosen.count(p.trial->id) != 0 || room[p.type] < p.trial->gpus) continue;
                room[p.type] -= p.trial->gpus;
                chosen[p.trial->id] = p.type;
            }
            FreeGpus free(*input.cluster);
            for (ObservedTrial* t : input.running) {
                const auto c = chosen.find(t->id);
                if (c == chosen.end() || types_[c->second] != t->gpu_type) {
                    plan.preempt.push_back(t->id);
                    free.give(t->gpu_type, t->gpus);
                }
            }
            for (const Pair& p : pairs) {
                const auto c = chosen.find(p.trial->id);
                if (p.trial->status != TrialStatus::pending || c == chosen.end() || c->second != p.type)
                    continue;
                if (free.take(types_[p.type], p.trial->gpus))
                    plan.start.push_back({p.trial->id, types_[p.type]});
            }
            return {};
        }
        FreeGpus free(*input.cluster);
        std::map<std::uint32_t, bool> started;
        for (const Pair& p : pairs) {
            if (p.trial->status != TrialStatus::pending || started.count(p.trial->id) != 0) continue;
            if (free.take(types_[p.type], p.trial->gpus)) {
                plan.start.push_back({p.trial->id, types_[p.type]});
                started[p.trial->id] = true;
            }
        }
        return {};
    }

    void on_end(const ObservedTrial& trial) override {
        if (trial.status == TrialStatus::finished || trial.status == TrialStatus::stopped) {
            received_.erase(trial.id);
            allocation_.erase(trial.id);
        }
    }

private:
    // Time each running trial spent on its type since the last round.
    void account(const RoundInput& input) {
        const double dt = last_now_ < 0.0 ? 0.0 : input.now - last_now_;
        last_now_ = input.now;
        for (ObservedTrial* t : input.running) {
            auto& r = received_[t->id];
            r.resize(types_.size(), 0.0);
            for (std::size_t k = 0; k < types_.size(); ++k) {
                if (types_[k] == t->gpu_type) r[k] += std::min(dt, input.now - t->started_at);
            }
        }
    }

    void solve(const std::vector<ObservedTrial*>& jobs) {
        allocation_.clear();
        if (jobs.empty()) return;
        const std::size_t n = jobs.size(), m = types_.size();
        double total_capacity = 0.0;
        for (std::uint32_t c : capacity_) total_capacity += c;
        glp_prob* lp = glp_create_prob();
        glp_set_obj_dir(lp, GLP_MAX);
        // Rows: n fairness (Σ_k T X / T_eq - t >= 0), n time (Σ_k X <= 1), m capacity.
        glp_add_rows(lp, static_cast<int>(2 * n + m));
        for (std::size_t j = 0; j < n; ++j) {
            glp_set_row_bnds(lp, static_cast<int>(j + 1), GLP_LO, 0.0, 0.0);
            glp_set_row_bnds(lp, static_cast<int>(n + j + 1), GLP_UP, 0.0, 1.0);
        }
        for (std::size_t k = 0; k < m; ++k) {
            glp_set_row_bnds(lp, static_cast<int>(2 * n + k + 1), GLP_UP, 0.0, capacity_[k]);
        }
        // Columns: X[j][k] at 1 + j*m + k, then t.
        const int t_col = static_cast<int>(n * m + 1);
        glp_add_cols(lp, t_col);
        for (int c = 1; c < t_col; ++c) glp_set_col_bnds(lp, c, GLP_DB, 0.0, 1.0);
        glp_set_col_bnds(lp, t_col, GLP_LO, 0.0, 0.0);
        glp_set_obj_coef(lp, t_col, 1.0);
        std::vector<int> ia(1), ja(1);
        std::vector<double> ar(1);
        const auto put = [&](std::size_t row, int col, double v) {
            ia.push_back(static_cast<int>(row));
            ja.push_back(col);
            ar.push_back(v);
        };
        for (std::size_t j = 0; j < n; ++j) {
            std::vector<double> speed(m);
            double eq = 0.0;
            for (std::size_t k = 0; k < m; ++k) {
                speed[k] = type_speed(context_, *jobs[j], types_[k]);
                eq += speed[k] * capacity_[k] / total_capacity;
            }
            for (std::size_t k = 0; k < m; ++k) {
                const int col = static_cast<int>(1 + j * m + k);
                put(j + 1, col, speed[k] / eq);
                put(n + j + 1, col, 1.0);
                put(2 * n + k + 1, col, jobs[j]->gpus);
            }
            put(j + 1, t_col, -1.0);
        }
        glp_load_matrix(lp, static_cast<int>(ia.size() - 1), ia.data(), ja.data(), ar.data());
        glp_smcp parm;
        glp_init_smcp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.presolve = GLP_ON;
        const bool ok = glp_simplex(lp, &parm) == 0 && glp_get_status(lp) == GLP_OPT;
        for (std::size_t j = 0; j < n; ++j) {
            std::vector<double> x(m, 1.0 / static_cast<double>(m));  // equal share if the LP failed
            if (ok) {
                for (std::size_t k = 0; k < m; ++k)
                    x[k] = glp_get_col_prim(lp, static_cast<int>(1 + j * m + k));
            }
            allocation_[jobs[j]->id] = x;
        }
        glp_delete_prob(lp);
    }

    PolicyContext context_;
    std::vector<std::string> types_;
    std::vector<std::uint32_t> capacity_;
    std::map<std::uint32_t, std::vector<double>> allocation_;
    std::map<std::uint32_t, std::vector<double>> received_;
    double last_boundary_ = -1e300;
    double last_now_ = -1.0;
};

}  // namespace

Result<std::unique_ptr<Policy>> make_gavel_policy(const PolicyContext& context) {
    if (context.cluster == nullptr || context.cluster->total_gpus() == 0) {
        return make_error("policy gavel: no cluster");
    }
    return std::unique_ptr<Policy>(std::make_unique<GavelPolicy>(context));
}

}  // namespace explsched::sim
