#include "core/sched/engine.hpp"

#include <memory>
#include <utility>

#include "core/sched/engine_impl.hpp"

namespace explsched {

Engine::Impl::Impl(const EngineSettings& s, ThroughputTable t, Logger* l)
    : settings(s),
      throughputs(std::move(t)),
      logger(l),
      bounds(s.price_lower_quantile, s.price_upper_quantile, s.price_smoothing, s.price_min_ratio),
      z(interval_z(s.interval_level)) {}

Result<Engine> Engine::create(const EngineSettings& settings, ThroughputTable throughputs, Logger* logger) {
    if (auto s = validate(settings); !s) return s.error();
    return Engine(std::make_unique<Impl>(settings, std::move(throughputs), logger));
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;
Engine::~Engine() = default;

const RoundSummary& Engine::last_round() const { return impl_->summary; }
const EngineSettings& Engine::settings() const { return impl_->settings; }
std::size_t Engine::cached_trials() const { return impl_->cache.size(); }

const Assessment* Engine::find(const TrialKey& key) const {
    const auto it = impl_->index.find(key);
    return it == impl_->index.end() ? nullptr : &impl_->last[it->second];
}

PreemptVerdict Engine::can_preempt(const Assessment& preemptor, const Assessment& preemptee,
                                   double preemptee_running_s) const {
    return preempt_verdict(preemptor, preemptee, impl_->settings, preemptee_running_s);
}

PreemptVerdict Engine::can_preempt(const TrialKey& preemptor, const TrialKey& preemptee) const {
    const Assessment* a = find(preemptor);
    const Assessment* b = find(preemptee);
    if (a == nullptr) return {false, "job " + to_string(preemptor) + " was not assessed"};
    if (b == nullptr) return {false, "job " + to_string(preemptee) + " was not assessed"};
    return can_preempt(*a, *b);
}

void Engine::record_ended(const std::vector<JobView>& ended) { impl_->record_ended(ended); }

// A round, phase by phase: check and index the input, retire the trials that left, sync the fit
// caches and sweep statistics, classify (utilities, stopping rules), price, then decide and
// prioritise every job.
Status Engine::evaluate(const std::vector<JobView>& jobs, const ClusterView& cluster,
                        std::vector<Assessment>& out) {
    Impl& m = *impl_;
    bool same_keys = false;
    if (Status status = m.index_jobs(jobs, same_keys); !status) return status;
    Impl::RoundLoad load;
    if (Status status = m.measure_load(jobs, cluster, load); !status) return status;
    ++m.round;
    if (!same_keys) m.retire_departed();  // with the same keys as last round, nobody left
    const Impl::RoundCounts counts = m.sync_fit_cache(jobs, same_keys);
    m.classify(jobs, out);
    const Impl::RoundPrice price = m.update_price(load);
    m.decide(jobs, cluster, load, price, out);
    m.pause_and_resume(jobs, cluster, load, out);
    m.finish_round(out, cluster, load, price, counts);
    return {};
}

}  // namespace explsched
