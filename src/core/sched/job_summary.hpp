// A trial's assessment as one line of text: what `scontrol show job` shows in SystemComment, and
// what preempt/explsched reads back (it runs in another module of slurmctld, and the line is
// saved with the job, so it also survives a slurmctld restart). Format, keys in this order:
//
//   explsched: group=lr metric=loss:min max_steps=2000
//              state=promising decision=keep utility=3.1e-06 price=2.0e-06 load=0.94
//              pred=0.412 [0.398,0.431]@2000 points=14 extrapolated=yes
//              gpu=k80 gpu_value=scaled:0.1412:v100 code=above_price reason=<free text to the end>
//
// pred is the predicted final metric, its interval and the step it is for ("pred=none" without
// a prediction). gpu is the GPU type the trial was valued on ("unknown"), gpu_value how its speed
// was scaled to it (GpuValuation; "scaled:RATIO:MEASURED_ON" when scaled, "no-row:1:MEASURED_ON"
// when the table lacks a figure). code is the rule that decided (ReasonCode, as to_string names
// it; absent from lines written before it was added): the preemption rule reads it back. The
// reason is last because it is free text. What precedes
// state= describes the trial (explore_trial_text); of it only model= is read back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/result.hpp"
#include "core/sched/decision.hpp"
#include "core/sched/engine_types.hpp"

namespace explsched {

std::string summary_line(const Assessment& assessment, double load, std::string_view trial = {});

struct JobSummary {
    TrialState state = TrialState::unknown;
    Decision decision = Decision::wait;
    double utility = 0.0;
    double price = 0.0;
    double load = 0.0;
    Prediction prediction;
    std::string reason;
    // the rule that decided (code=); nullopt in a line written without it
    std::optional<ReasonCode> reason_code;
    // GPU type (absent from lines written before types were known: gpu_known false)
    bool gpu_known = false;
    std::string gpu_type;  // "" unknown
    GpuValue gpu_value;
    std::string measured_gpu_type;
    std::string model;  // --explore-model, "" none
};

// Parses a line made by summary_line; an error names the first key that is missing or bad.
Result<JobSummary> parse_summary_line(std::string_view line);

// The assessment the preemption rule needs, rebuilt from a job's summary line (exploratory) or
// from its priority alone (no line: a non-exploratory job).
Assessment assessment_for_preemption(const TrialKey& key, uint32_t priority, const JobSummary* summary);

// The weighted terms of a job's priority, as sprio shows them: age and partition as in Slurm's
// multifactor, value = what the utility-versus-price term (and nice) add.
struct PriorityTerms {
    double age = 0.0;
    double partition = 0.0;
    double value = 0.0;
};
PriorityTerms priority_terms(const JobView& view, const Assessment& assessment, double now,
                             const EngineSettings& settings);

// The assessment of a job no round has seen yet (at submit): value factor `value` (the settings'
// unknown_value for a trial, nonexploratory_value otherwise), no age, the job's partition and nice.
Assessment provisional_assessment(const JobView& view, double value, const EngineSettings& settings);

}  // namespace explsched
