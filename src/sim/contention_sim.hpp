// GPU contention simulator: replays the kernel profiles of jobs co-located on one GPU under a
// sharing policy and reports each job's latency and throughput.
//
// Each job has one CPU thread that launches its kernels one after another (launch_ns of host
// time each) into one stream, and synchronises at the end of every request (inference) or
// iteration (training). Inference jobs are open loop: requests arrive as a Poisson process at a
// given fraction of the job's exclusive capacity. Training jobs are closed loop. The GPU runs
// every job's stream head under the fluid model of gpu_contention_model.hpp. Policies:
//   exclusive     the job alone on the GPU (the baseline)
//   unmanaged     co-location without control (MPS): every stream head runs at once
//   time_slicing  no MPS: one job's context owns the GPU for a time slice, then the next
//   orion         Orion (EuroSys'24): high-priority launches go at once; a best-effort launch
//                 goes if no high-priority kernel is in flight or the in-flight one has the
//                 other profile class and the BE kernel needs fewer SMs than the threshold,
//                 while outstanding BE work stays under a duration threshold
//   explsched     KernelAdmission (kernel_admission.hpp), the algorithm explsched-kerneld runs
// Under orion and explsched, a held best-effort launch blocks its CPU thread, and every
// best-effort launch pays the admission round trip (as in enforce mode).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"
#include "core/device/kernel_admission.hpp"
#include "core/device/kernel_profile.hpp"
#include "sim/gpu_contention_model.hpp"

namespace explsched {

enum class SharingPolicy { exclusive, unmanaged, time_slicing, orion, explsched };

const char* to_string(SharingPolicy policy);
Result<SharingPolicy> parse_sharing_policy(std::string_view text);

struct SimJobSpec {
    std::string name;
    std::vector<KernelProfile> kernels;  // one request or iteration, in issue order
    double priority = 0.0;               // the highest present is protected / high priority
    bool open_loop = false;              // Poisson requests (inference) vs back-to-back (training)
    double load = 0.3;                   // open loop: arrival rate / exclusive capacity
    std::uint64_t iteration_gap_ns = 0;  // closed loop: host work between iterations
};

struct SimParams {
    ContentionParams device;                   // SMs, bandwidth, co-location penalty
    std::uint64_t launch_ns = 4000;            // host time per kernel launch (framework + driver)
    std::uint64_t horizon_ns = 2000000000;     // simulated time
    std::uint64_t warmup_ns = 200000000;       // requests arriving earlier are not measured
    std::uint64_t timeslice_ns = 2000000;      // time slicing: slice length
    std::uint64_t switch_ns = 25000;           // time slicing: context-switch cost
    std::uint64_t admission_rtt_ns = 2000;     // enforce-mode round trip per BE launch
    std::uint64_t orion_dur_threshold_ns = 0;  // 0: 2.5% of the HP job's exclusive request time
    double orion_sm_threshold = 0.0;           // 0: the device's SM count
    AdmissionConfig admission;                 // explsched; sm_cap 0 means the SM count
    std::uint64_t seed = 1;
};

Status validate(const SimParams& params);

struct SimJobResult {
    std::string name;
    std::uint64_t requests = 0;    // measured requests / iterations completed
    double mean_latency_ns = 0.0;  // request (or iteration) latency incl. queueing
    double p99_latency_ns = 0.0;
    double work_rate = 0.0;  // exclusive-ns of kernels completed per ns, after warm-up
    double iterations_per_s = 0.0;
    std::uint64_t kernels_completed = 0;
};

struct SimResult {
    SharingPolicy policy = SharingPolicy::exclusive;
    std::vector<SimJobResult> jobs;
};

// Runs the jobs together under `policy` (for `exclusive`, each job alone with the same arrival
// times). The result lists the jobs in the order given.
Result<SimResult> simulate(const std::vector<SimJobSpec>& jobs, SharingPolicy policy,
                           const SimParams& params);

// Exclusive run time of one request / iteration: the sum of its kernels' durations.
std::uint64_t exclusive_request_ns(const SimJobSpec& job);

}  // namespace explsched
