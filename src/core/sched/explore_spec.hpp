// What a job asked of ExplSched with the sbatch/srun options of the SPANK plugin:
//   --explore=GROUP  --explore-metric=NAME[:min|max]  --explore-max-steps=N
//   --explore-on-hopeless=requeue|cancel|none  --explore-milestones=LIST  --kernel-sched=MODE
//   --explore-lr-drops=LIST (the steps at which its learning-rate schedule drops)
//   --explore-model=NAME (a job-type row of the site's throughput table)
// The SPANK plugin validates each value with the parsers below at submit time and stores the
// canonical text in the job record (spank_job_control_setenv) under the kEnv* names; slurmctld
// plugins read it back from the job's spank_job_env with parse_explore_env(). One parser on both
// sides means a value accepted at submit is always understood by the controller.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"
#include "core/sched/settings.hpp"

namespace explsched {

enum class MetricDirection { min, max };
std::string_view to_string(MetricDirection direction);

struct ExploreSpec {
    std::string group;            // the sweep; empty: not an exploratory job
    std::string metric = "loss";  // what the job reports
    MetricDirection direction = MetricDirection::min;
    std::optional<uint64_t> max_steps;          // when known: the curve's horizon
    std::optional<HopelessAction> on_hopeless;  // unset: the site default (hopeless_action)
    std::vector<uint64_t> milestones;           // ASHA rungs in steps, increasing
    // Steps at which its learning rate drops (a step schedule: MultiStepLR's milestones in the
    // steps it reports), increasing: no stopping rule's verdict on it is final before it has run
    // past the first one (engine: StopEvidence::first_drop).
    std::vector<uint64_t> lr_drops;
    std::optional<KernelSchedMode> kernel_sched;
    // The throughput table's job type (--explore-model); empty: its speed is not scaled by GPU type.
    std::string model;

    bool exploratory() const { return !group.empty(); }
};

// Names under which the job record stores the options (NAME=value in spank_job_env).
inline constexpr std::string_view kEnvGroup = "EXPLSCHED_GROUP";
inline constexpr std::string_view kEnvMetric = "EXPLSCHED_METRIC";
inline constexpr std::string_view kEnvMaxSteps = "EXPLSCHED_MAX_STEPS";
inline constexpr std::string_view kEnvOnHopeless = "EXPLSCHED_ON_HOPELESS";
inline constexpr std::string_view kEnvMilestones = "EXPLSCHED_MILESTONES";
inline constexpr std::string_view kEnvKernelSched = "EXPLSCHED_KERNEL_SCHED";
inline constexpr std::string_view kEnvModel = "EXPLSCHED_MODEL";
inline constexpr std::string_view kEnvLrDrops = "EXPLSCHED_LR_DROPS";

// Value parsers; each error names the option, e.g. "--explore: 'a b' is not a valid group name".
Result<std::string> parse_explore_group(std::string_view text);
Result<std::pair<std::string, MetricDirection>> parse_explore_metric(std::string_view text);
Result<uint64_t> parse_explore_max_steps(std::string_view text);
Result<HopelessAction> parse_explore_on_hopeless(std::string_view text);
Result<std::vector<uint64_t>> parse_explore_milestones(std::string_view text);
Result<std::vector<uint64_t>> parse_explore_lr_drops(std::string_view text);
Result<KernelSchedMode> parse_kernel_sched_option(std::string_view text);
// A job-type name as the throughput table spells it ("ResNet-50 (batch size 64)"): 1-96
// characters of A-Z a-z 0-9 space _ - . ( ) + / , starting with a letter or digit and not ending
// with a space. Not checked against a table here: the submit host has none (see
// core/sched/gpu_types.hpp for what a name missing from the table means).
Result<std::string> parse_explore_model(std::string_view text);
// The model name as one space-free word for the summary line (spaces written as '~', which a
// valid name never contains), and back.
std::string model_word(std::string_view model);
std::string model_from_word(std::string_view word);

// The options that depend on --explore are errors without it (they would silently do nothing).
Status validate_explore_spec(const ExploreSpec& spec);

// NAME=value pairs to store in the job record for a validated spec (canonical values).
std::vector<std::pair<std::string, std::string>> explore_env(const ExploreSpec& spec);
// Reads the spec back from "NAME=value" strings (other names are ignored). A value that fails to
// parse is an error naming the variable: the job record was altered behind our back.
Result<ExploreSpec> parse_explore_env(const std::vector<std::string_view>& env);

}  // namespace explsched

namespace explsched {
// What a trial is, for the start of its SystemComment:
// "group=G metric=NAME:DIR [max_steps=N] [model=WORD]" (WORD: model_word()).
std::string explore_trial_text(const ExploreSpec& spec);
}  // namespace explsched
