// The placement decision of a live job (placement=yes, doc/placement.md) for `explsched why`: the
// "placement: ..." text slurmctld wrote into the job's SystemComment.
#pragma once

#include <optional>
#include <string>

namespace explsched::cli {

// The job's state and its placement line, or nothing when scontrol does not know the job or its
// SystemComment holds no placement.
struct LivePlacement {
    std::string state;
    std::string text;  // "placement: nodes n3,n4, predicted 0.97 of isolated"
};
std::optional<LivePlacement> live_placement(const std::string& job);

}  // namespace explsched::cli
