// The SPANK plugin's one option table. Callbacks only record the raw text (Slurm may call them
// twice, and in several contexts); every check happens in init_post_opt, where the whole set of
// options is known and one error can name the option that is wrong.
#pragma once

#include <optional>
#include <string>

#include "core/base/result.hpp"
#include "core/sched/explore_spec.hpp"

namespace explsched::spank {

struct RawOptions {
    std::optional<std::string> explore;
    std::optional<std::string> metric;
    std::optional<std::string> max_steps;
    std::optional<std::string> on_hopeless;
    std::optional<std::string> milestones;
    std::optional<std::string> lr_drops;
    std::optional<std::string> kernel_sched;
    std::optional<std::string> model;

    bool any() const {
        return explore || metric || max_steps || on_hopeless || milestones || kernel_sched || model ||
               lr_drops;
    }
};

// The recorded values of this process (one job or step per process).
RawOptions& recorded_options();

// Registers every option with Slurm. Returns 0 or a SPANK error code.
int register_options(void* spank_handle);

// Validates the recorded text into a spec; errors name the option.
Result<ExploreSpec> validated_spec(const RawOptions& raw);

}  // namespace explsched::spank
