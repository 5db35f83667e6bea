#include "sim/contention_sim.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>

#include "core/device/kernel_key.hpp"

namespace explsched {

const char* to_string(SharingPolicy policy) {
    switch (policy) {
        case SharingPolicy::exclusive:
            return "exclusive";
        case SharingPolicy::unmanaged:
            return "unmanaged";
        case SharingPolicy::time_slicing:
            return "time_slicing";
        case SharingPolicy::orion:
            return "orion";
        case SharingPolicy::explsched:
            return "explsched";
    }
    return "?";
}

Result<SharingPolicy> parse_sharing_policy(std::string_view text) {
    for (SharingPolicy p : {SharingPolicy::exclusive, SharingPolicy::unmanaged, SharingPolicy::time_slicing,
                            SharingPolicy::orion, SharingPolicy::explsched}) {
        if (text == to_string(p)) return p;
    }
    return make_error("sharing policy '" + std::string(text) +
                      "': expected exclusive, unmanaged, time_slicing, orion or explsched");
}

Status validate(const SimParams& p) {
    if (p.device.sm_count == 0) return make_error("simulator sm_count: must be positive");
    if (!(p.device.bandwidth > 0.0)) return make_error("simulator bandwidth: must be positive");
    if (p.device.colocation_penalty < 0.0 || p.device.colocation_penalty >= 1.0)
        return make_error("simulator colocation_penalty: must be in [0, 1)");
    if (p.horizon_ns <= p.warmup_ns) return make_error("simulator horizon: must exceed the warm-up");
    if (p.timeslice_ns == 0) return make_error("simulator timeslice: must be positive");
    AdmissionConfig a = p.admission;
    a.sm_cap = p.device.sm_count;
    return validate(a);
}

std::uint64_t exclusive_request_ns(const SimJobSpec& job) {
    std::uint64_t sum = 0;
    for (const KernelProfile& k : job.kernels) sum += k.demand.duration_ns;
    return sum;
}

namespace {

// Reproducible uniform numbers (std::*_distribution differ between standard libraries).
class SplitMix {
public:
    explicit SplitMix(std::uint64_t seed) : state_(seed) {}
    double uniform() {  // in (0, 1]
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        return (static_cast<double>(z >> 11) + 1.0) / 9007199254740992.0;
    }

private:
    std::uint64_t state_;
};

enum class Cpu { idle, launching, waiting, enqueue, done };

struct StreamKernel {
    std::size_t index = 0;
    double remaining = 0.0;  // exclusive ns of work left
    std::uint64_t seq = 0;
};

struct Job {
    const SimJobSpec* spec = nullptr;
    std::uint32_t id = 0;
    bool gated = false;
    std::vector<std::uint64_t> keys;
    std::vector<std::uint64_t> arrivals;
    std::size_t next_arrival = 0;
    bool in_request = false;
    std::uint64_t request_start = 0;
    std::size_t next_kernel = 0;
    Cpu cpu = Cpu::idle;
    std::uint64_t cpu_t = 0;
    std::uint64_t seq = 0;
    std::deque<StreamKernel> stream;
    std::vector<double> latencies;
    double work_ns = 0.0;
    std::uint64_t kernels_done = 0;
    std::uint64_t iterations = 0;
};

// Admission control of best-effort launches: explsched's algorithm or Orion's rule.
class Gate {
public:
    virtual ~Gate() = default;
    virtual void submit(const Job& j, std::size_t kernel, std::uint64_t seq, std::uint64_t t) = 0;
    virtual void started(const Job& j, std::size_t kernel, std::uint64_t seq, std::uint64_t t) = 0;
    virtual void completed(const Job& j, std::size_t kernel, std::uint64_t seq, std::uint64_t t) = 0;
    virtual void admit(std::uint64_t t, std::vector<Grant>& out) = 0;
    virtual std::optional<std::uint64_t> timer(std::uint64_t) const { return std::nullopt; }
};

class ExplschedGate final : public Gate {
public:
    ExplschedGate(const AdmissionConfig& config, const std::vector<Job>& jobs) : admission_(config) {
        for (const Job& j : jobs) admission_.set_client(j.id, j.spec->priority);
    }
    void submit(const Job& j, std::size_t k, std::uint64_t seq, std::uint64_t t) override {
        admission_.submit(request(j, k, seq, t));
    }
    void started(const Job& j, std::size_t k, std::uint64_t seq, std::uint64_t t) override {
        if (!j.gated) admission_.note_running(request(j, k, seq, t), t);
    }
    void completed(const Job& j, std::size_t, std::uint64_t seq, std::uint64_t t) override {
        (void)admission_.complete(j.id, seq, t);
    }
    void admit(std::uint64_t t, std::vector<Grant>& out) override { admission_.admit(t, out); }
    std::optional<std::uint64_t> timer(std::uint64_t t) const override { return admission_.next_timer_ns(t); }

private:
    static AdmissionRequest request(const Job& j, std::size_t k, std::uint64_t seq, std::uint64_t t) {
        AdmissionRequest r;
        r.client = j.id;
        r.seq = seq;
        r.key = j.keys[k];
        r.demand = j.spec->kernels[k].demand;
        r.submitted_ns = t;
        return r;
    }
    KernelAdmission admission_;
};

class OrionGate final : public Gate {
public:
    OrionGate(double sm_threshold, std::uint64_t dur_threshold)
        : sm_threshold_(sm_threshold), dur_threshold_(dur_threshold) {}
    void submit(const Job& j, std::size_t k, std::uint64_t seq, std::uint64_t t) override {
        waiting_.push_back(Wait{&j, k, seq, t});
    }
    void started(const Job& j, std::size_t k, std::uint64_t seq, std::uint64_t) override {
        if (!j.gated) hp_.push_back(Hp{seq, j.spec->kernels[k].cls, j.id});
    }
    void completed(const Job& j, std::size_t k, std::uint64_t seq, std::uint64_t) override {
        if (!j.gated) {
            auto it = std::find_if(hp_.begin(), hp_.end(),
                                   [&](const Hp& h) { return h.job == j.id && h.seq == seq; });
            if (it != hp_.end()) hp_.erase(it);
        } else {
            be_outstanding_ -= std::min(be_outstanding_, j.spec->kernels[k].demand.duration_ns);
        }
    }
    void admit(std::uint64_t t, std::vector<Grant>& out) override {
        std::stable_sort(waiting_.begin(), waiting_.end(), [](const Wait& a, const Wait& b) {
            return a.job->spec->priority > b.job->spec->priority;
        });
        for (auto it = waiting_.begin(); it != waiting_.end();) {
            const KernelProfile& k = it->job->spec->kernels[it->kernel];
            bool ok = hp_.empty();
            if (!ok) {
                const KernelClass hp_cls = hp_.front().cls;
                ok = k.cls != KernelClass::unknown && hp_cls != KernelClass::unknown && k.cls != hp_cls &&
                     k.demand.sms < sm_threshold_;
            }
            ok = ok && (be_outstanding_ == 0 || be_outstanding_ + k.demand.duration_ns <= dur_threshold_);
            if (!ok) break;  // FIFO in priority order, as Orion's best-effort queue
            be_outstanding_ += k.demand.duration_ns;
            out.push_back(Grant{it->job->id, it->seq, t - it->t});
            it = waiting_.erase(it);
        }
    }

private:
    struct Wait {
        const Job* job;
        std::size_t kernel;
        std::uint64_t seq;
        std::uint64_t t;
    };
    struct Hp {
        std::uint64_t seq;
        KernelClass cls;
        std::uint32_t job;
    };
    double sm_threshold_;
    std::uint64_t dur_threshold_;
    std::uint64_t be_outstanding_ = 0;
    std::deque<Wait> waiting_;
    std::deque<Hp> hp_;
};

std::vector<std::uint64_t> poisson_arrivals(const SimJobSpec& spec, std::uint64_t seed, std::uint32_t salt,
                                            std::uint64_t horizon) {
    std::vector<std::uint64_t> out;
    const double mean_gap = static_cast<double>(exclusive_request_ns(spec)) / std::max(spec.load, 1e-6);
    SplitMix rng(seed * 0x2545F4914F6CDD1DULL + salt + 1);
    double t = 0.0;
    for (;;) {
        t += -std::log(rng.uniform()) * mean_gap;
        if (t >= static_cast<double>(horizon)) return out;
        out.push_back(static_cast<std::uint64_t>(t));
    }
}

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const auto idx = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
    return v[std::min(idx, v.size() - 1)];
}

// The event loop for one set of co-located jobs. `salts` give each job its arrival stream so
// that a job sees the same requests alone and co-located.
std::vector<SimJobResult> run(const std::vector<const SimJobSpec*>& specs,
                              const std::vector<std::uint32_t>& salts, SharingPolicy policy,
                              const SimParams& p) {
    std::vector<Job> jobs(specs.size());
    double top = -std::numeric_limits<double>::infinity();
    for (const SimJobSpec* s : specs) top = std::max(top, s->priority);
    const bool gating = policy == SharingPolicy::orion || policy == SharingPolicy::explsched;
    std::uint64_t hp_request_ns = 0;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        Job& j = jobs[i];
        j.spec = specs[i];
        j.id = static_cast<std::uint32_t>(i);
        j.gated = gating && specs[i]->priority < top;
        if (!j.gated) hp_request_ns = std::max(hp_request_ns, exclusive_request_ns(*specs[i]));
        for (const KernelProfile& k : specs[i]->kernels) j.keys.push_back(kernel_key(k));
        if (specs[i]->open_loop) j.arrivals = poisson_arrivals(*specs[i], p.seed, salts[i], p.horizon_ns);
    }
    std::unique_ptr<Gate> gate;
    if (policy == SharingPolicy::explsched) {
        AdmissionConfig a = p.admission;
        a.sm_cap = p.device.sm_count;
        gate = std::make_unique<ExplschedGate>(a, jobs);
    } else if (policy == SharingPolicy::orion) {
        const double sm_thr = p.orion_sm_threshold > 0.0 ? p.orion_sm_threshold : p.device.sm_count;
        const std::uint64_t dur_thr = p.orion_dur_threshold_ns > 0
                                          ? p.orion_dur_threshold_ns
                                          : std::max<std::uint64_t>(hp_request_ns / 40, 1);
        gate = std::make_unique<OrionGate>(sm_thr, dur_thr);
    }

    std::uint64_t t = 0;
    std::size_t owner = 0;  // time slicing: the context that owns the GPU
    std::uint64_t slice_end = p.timeslice_ns;
    std::uint64_t switching_until = 0;
    std::vector<Grant> grants;
    std::vector<RunningKernel> running;
    std::vector<std::size_t> running_job;
    std::vector<double> rates;

    auto start_request = [&](Job& j, std::uint64_t at, std::uint64_t arrival) {
        j.in_request = true;
        j.request_start = arrival;
        j.next_kernel = 0;
        j.cpu = Cpu::launching;
        j.cpu_t = at + p.launch_ns;
    };
    auto enqueue = [&](Job& j, std::uint64_t at) {
        const std::size_t k = j.next_kernel;
        j.stream.push_back(
            StreamKernel{k, static_cast<double>(j.spec->kernels[k].demand.duration_ns), j.seq});
        if (gate) gate->started(j, k, j.seq, at);
        ++j.next_kernel;
        if (j.next_kernel < j.spec->kernels.size()) {
            j.cpu = Cpu::launching;
            j.cpu_t = at + p.launch_ns;
        } else {
            j.cpu = Cpu::done;
        }
    };

    while (t < p.horizon_ns) {
        // Host-side actions due now, until nothing changes.
        for (bool changed = true; changed;) {
            changed = false;
            for (Job& j : jobs) {
                if (!j.in_request && j.cpu == Cpu::idle) {
                    if (j.spec->open_loop) {
                        if (j.next_arrival < j.arrivals.size() && j.arrivals[j.next_arrival] <= t) {
                            start_request(j, t, j.arrivals[j.next_arrival]);
                            ++j.next_arrival;
                            changed = true;
                        }
                    } else if (j.cpu_t <= t) {
                        start_request(j, t, t);
                        changed = true;
                    }
                }
                if (j.cpu == Cpu::launching && j.cpu_t <= t) {
                    ++j.seq;
                    if (j.gated) {
                        gate->submit(j, j.next_kernel, j.seq, t);
                        j.cpu = Cpu::waiting;
                    } else {
                        enqueue(j, t);
                    }
                    changed = true;
                }
                if (j.cpu == Cpu::enqueue && j.cpu_t <= t) {
                    enqueue(j, t);
                    changed = true;
                }
            }
            if (gate) {
                grants.clear();
                gate->admit(t, grants);
                for (const Grant& g : grants) {
                    Job& j = jobs[g.client];
                    j.cpu = Cpu::enqueue;
                    j.cpu_t = t + p.admission_rtt_ns;
                    changed = true;
                }
            }
        }

        // Who runs now.
        running.clear();
        running_job.clear();
        if (policy == SharingPolicy::time_slicing) {
            if (t >= switching_until) {
                const bool owner_busy = !jobs[owner].stream.empty();
                if (!owner_busy || t >= slice_end) {
                    std::size_t next = owner;
                    for (std::size_t step = 1; step <= jobs.size(); ++step) {
                        const std::size_t c = (owner + step) % jobs.size();
                        if (c != owner && !jobs[c].stream.empty()) {
                            next = c;
                            break;
                        }
                    }
                    if (next != owner) {
                        owner = next;
                        switching_until = t + p.switch_ns;
                        slice_end = switching_until + p.timeslice_ns;
                    } else if (owner_busy) {
                        slice_end = t + p.timeslice_ns;
                    }
                }
            }
            if (t >= switching_until && !jobs[owner].stream.empty()) {
                const StreamKernel& h = jobs[owner].stream.front();
                const KernelDemand& d = jobs[owner].spec->kernels[h.index].demand;
                running.push_back(RunningKernel{d.sms, d.bw, jobs[owner].id});
                running_job.push_back(owner);
            }
        } else {
            for (std::size_t i = 0; i < jobs.size(); ++i) {
                if (jobs[i].stream.empty()) continue;
                const KernelDemand& d = jobs[i].spec->kernels[jobs[i].stream.front().index].demand;
                running.push_back(RunningKernel{d.sms, d.bw, jobs[i].id});
                running_job.push_back(i);
            }
        }
        progress_rates(p.device, running, rates);

        // The next event.
        std::uint64_t next = p.horizon_ns;
        for (std::size_t r = 0; r < running.size(); ++r) {
            const double rem = jobs[running_job[r]].stream.front().remaining;
            const double dt = std::ceil(std::max(rem, 0.0) / std::max(rates[r], 1e-9));
            next =
                std::min<std::uint64_t>(next, t + std::max<std::uint64_t>(static_cast<std::uint64_t>(dt), 1));
        }
        for (const Job& j : jobs) {
            if (j.cpu == Cpu::launching || j.cpu == Cpu::enqueue)
                next = std::min(next, std::max(j.cpu_t, t + 1));
            if (!j.in_request && j.cpu == Cpu::idle) {
                if (j.spec->open_loop && j.next_arrival < j.arrivals.size())
                    next = std::min(next, std::max(j.arrivals[j.next_arrival], t + 1));
                if (!j.spec->open_loop) next = std::min(next, std::max(j.cpu_t, t + 1));
            }
        }
        if (policy == SharingPolicy::time_slicing) {
            if (switching_until > t) next = std::min(next, switching_until);
            if (slice_end > t) next = std::min(next, slice_end);
        }
        if (gate) {
            if (auto timer = gate->timer(t)) next = std::min(next, *timer);
        }

        const double dt = static_cast<double>(next - t);
        for (std::size_t r = 0; r < running.size(); ++r)
            jobs[running_job[r]].stream.front().remaining -= rates[r] * dt;
        t = next;

        for (std::size_t r = 0; r < running.size(); ++r) {
            Job& j = jobs[running_job[r]];
            StreamKernel& h = j.stream.front();
            if (h.remaining > 1e-6) continue;
            const KernelProfile& k = j.spec->kernels[h.index];
            if (t > p.warmup_ns && t <= p.horizon_ns) {
                j.work_ns += static_cast<double>(k.demand.duration_ns);
                j.kernels_done += 1;
            }
            if (gate) gate->completed(j, h.index, h.seq, t);
            const bool last = h.index + 1 == j.spec->kernels.size();
            j.stream.pop_front();
            if (last) {
                if (j.request_start >= p.warmup_ns) {
                    j.latencies.push_back(static_cast<double>(t - j.request_start));
                    j.iterations += 1;
                }
                j.in_request = false;
                j.cpu = Cpu::idle;
                j.cpu_t = t + j.spec->iteration_gap_ns;
            }
        }
    }

    std::vector<SimJobResult> out;
    const double window = static_cast<double>(p.horizon_ns - p.warmup_ns);
    for (const Job& j : jobs) {
        SimJobResult r;
        r.name = j.spec->name;
        r.requests = j.latencies.size();
        double sum = 0.0;
        for (double l : j.latencies) sum += l;
        r.mean_latency_ns = j.latencies.empty() ? 0.0 : sum / static_cast<double>(j.latencies.size());
        r.p99_latency_ns = percentile(j.latencies, 0.99);
        r.work_rate = j.work_ns / window;
        r.iterations_per_s = static_cast<double>(j.iterations) / (window * 1e-9);
        r.kernels_completed = j.kernels_done;
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace

Result<SimResult> simulate(const std::vector<SimJobSpec>& jobs, SharingPolicy policy,
                           const SimParams& params) {
    if (auto s = validate(params); !s) return s.error();
    if (jobs.empty()) return make_error("simulator: no jobs to simulate");
    for (const SimJobSpec& j : jobs) {
        if (j.kernels.empty()) return make_error("simulator job '" + j.name + "': has no kernels");
        if (j.open_loop && !(j.load > 0.0))
            return make_error("simulator job '" + j.name + "': load must be positive");
    }
    SimResult result;
    result.policy = policy;
    if (policy == SharingPolicy::exclusive) {
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            auto r = run({&jobs[i]}, {static_cast<std::uint32_t>(i)}, policy, params);
            result.jobs.push_back(std::move(r.front()));
        }
        return result;
    }
    std::vector<const SimJobSpec*> specs;
    std::vector<std::uint32_t> salts;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        specs.push_back(&jobs[i]);
        salts.push_back(static_cast<std::uint32_t>(i));
    }
    result.jobs = run(specs, salts, policy, params);
    return result;
}

}  // namespace explsched
