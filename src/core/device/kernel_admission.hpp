// Interference-aware kernel admission for one GPU shared by several jobs.
//
// Every client (a process of a job) has a priority that comes from the cluster level (the job's
// utility). The clients at the highest priority present are *protected*: their launches are never
// held. Everyone else is best effort (BE): a BE launch is admitted, in priority order, only when
//   1. its SM demand plus the SMs of BE kernels in flight plus the protected demand predicted
//      over the BE kernel's expected run time fits under the SM cap,
//   2. the same holds for DRAM bandwidth under the bandwidth cap, and
//   3. where the protected demand cannot be predicted for the whole window (the protected job
//      is idle, or its next kernels are not yet known), the BE work outstanding stays within a
//      duration budget (as in Orion), so a protected kernel that arrives unannounced shares the
//      GPU with at most one budget of BE work. A single BE kernel longer than the budget runs
//      only while no protected kernel is in flight, so BE work cannot starve.
// The protected demand is predicted by walking the protected clients' in-flight kernels in
// stream order (launches run ahead of the GPU, so the daemon knows the next kernels) and then
// the kernel sequence learned from earlier iterations (deep-learning jobs repeat the same
// kernel sequence every step), for as long as the window lasts.
//
// The class is pure (time is an argument) so that explsched-kerneld and the contention
// simulator run the very same decisions.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/result.hpp"
#include "core/device/kernel_profile.hpp"

namespace explsched {

struct AdmissionConfig {
    double sm_cap = 132.0;                          // SMs co-running kernels may occupy together
    double bw_cap = 1.0;                            // fraction of DRAM bandwidth
    std::uint64_t be_budget_ns = 100000;            // BE work outstanding under uncertainty
    std::uint64_t protected_idle_ns = 100000;       // a protected client is idle after this long
    std::uint64_t lost_completion_ns = 1000000000;  // release a tracked kernel never completed
    std::size_t lookahead_kernels = 512;            // cap on the predicted-sequence walk
};

// Checks a configuration; the error names the offending field.
Status validate(const AdmissionConfig& config);

struct AdmissionRequest {
    std::uint32_t client = 0;
    std::uint64_t seq = 0;     // increasing per client; grants come back in this order
    std::uint64_t stream = 0;  // kernels of one stream run one after another
    std::uint64_t key = 0;     // kernel identity (name and shape) for sequence learning
    KernelDemand demand;
    std::uint64_t submitted_ns = 0;
    bool tracked = true;  // a completion will be reported; else released at expected end
};

struct Grant {
    std::uint32_t client = 0;
    std::uint64_t seq = 0;
    std::uint64_t waited_ns = 0;
};

// What complete() learned about a finished kernel.
struct Completion {
    std::uint64_t duration_ns = 0;  // from its estimated start on its stream to completion
    std::uint64_t key = 0;
};

struct AdmissionStats {
    std::uint64_t submitted = 0;
    std::uint64_t admitted = 0;  // includes launches that never waited
    std::uint64_t held = 0;      // requests that were not admitted at once
    std::uint64_t completed = 0;
    std::uint64_t expired = 0;  // released without a completion
    std::uint64_t wait_ns_total = 0;
    std::uint64_t wait_ns_max = 0;
};

// Predicted demand of the protected clients over a window.
struct ProtectedForecast {
    double sms = 0.0;
    double bw = 0.0;
    std::uint64_t covered_ns = 0;  // how much of the window the prediction covers
    bool busy = false;             // a protected kernel is in flight
};

class KernelAdmission {
public:
    explicit KernelAdmission(AdmissionConfig config);

    const AdmissionConfig& config() const { return config_; }
    // Resizes the caps (the daemon learns the device's SM count from its first client).
    void set_caps(double sm_cap, double bw_cap) {
        config_.sm_cap = sm_cap;
        config_.bw_cap = bw_cap;
    }
    // Adds a client or changes its priority.
    void set_client(std::uint32_t client, double priority);
    // Forgets a client (it exited): its queued and in-flight kernels free their share.
    void remove_client(std::uint32_t client);
    bool has_client(std::uint32_t client) const { return clients_.count(client) != 0; }
    bool is_protected(std::uint32_t client) const;

    // A launch that waits for admission. The client must have been added.
    void submit(const AdmissionRequest& request);
    // A launch that did not wait (a protected client's bypass): counted as in flight from now.
    void note_running(const AdmissionRequest& request, std::uint64_t now_ns);
    // Admits what the rules allow now; appends grants in admission order.
    void admit(std::uint64_t now_ns, std::vector<Grant>& out);
    // A kernel finished. Returns its observed run time (from its estimated start) if it was in
    // flight, so the caller can teach its profile store.
    std::optional<Completion> complete(std::uint32_t client, std::uint64_t seq, std::uint64_t now_ns);
    // Releases untracked kernels past their expected end and tracked ones whose completion was
    // lost. Returns how many were released.
    std::size_t expire(std::uint64_t now_ns);

    ProtectedForecast forecast(std::uint64_t now_ns, std::uint64_t window_ns) const;
    // Earliest future time at which a decision may change without any call (a protected client
    // turning idle, an untracked kernel's expected end); nullopt if none.
    std::optional<std::uint64_t> next_timer_ns(std::uint64_t now_ns) const;

    AdmissionStats stats(std::uint32_t client) const;
    std::size_t waiting() const;
    std::size_t in_flight() const;
    double in_flight_sms() const;

private:
    struct Inflight {
        std::uint64_t seq = 0;
        std::uint64_t stream = 0;
        std::uint64_t key = 0;
        KernelDemand demand;
        std::uint64_t admitted_ns = 0;
        bool tracked = true;
    };
    struct Queued {
        AdmissionRequest request;
        bool counted_held = false;
    };
    struct Successor {
        std::uint64_t key = 0;
        KernelDemand demand;
    };
    struct Client {
        double priority = 0.0;
        std::deque<Queued> queue;
        std::deque<Inflight> inflight;
        std::unordered_map<std::uint64_t, std::uint64_t> stream_done_ns;
        AdmissionStats stats;
        std::uint64_t last_activity_ns = 0;
        std::uint64_t prev_key = 0;
        std::uint64_t last_key = 0;
        bool has_last = false;
        std::unordered_map<std::uint64_t, Successor> successors;
    };

    struct WindowDemand {
        double sms = 0.0;
        double bw = 0.0;
        std::uint64_t until_ns = 0;  // when the known in-flight work is expected to drain
    };
    // Demand of a client's in-flight kernels over [now, now + window]: per stream the largest
    // kernel expected to run in the window, summed over streams.
    static WindowDemand inflight_demand(const Client& c, std::uint64_t now_ns, std::uint64_t window_ns);
    static std::vector<std::uint64_t> expected_ends(const Client& c);
    void start(Client& c, const AdmissionRequest& r, std::uint64_t now_ns);
    void learn_sequence(Client& c, const AdmissionRequest& r);
    bool fits(const AdmissionRequest& r, std::uint64_t now_ns) const;
    double top_priority() const;
    bool protected_client(const Client& c) const;
    void predict_client(const Client& c, std::uint64_t now_ns, std::uint64_t window_ns,
                        ProtectedForecast& f) const;

    AdmissionConfig config_;
    std::unordered_map<std::uint32_t, Client> clients_;
};

}  // namespace explsched
