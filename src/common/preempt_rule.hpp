// Whether one job may preempt another, and in which order preemption candidates are taken.
// The slurmctld shim copies the two jobs into PreemptFacts and asks here.
#pragma once

#include <cstdint>
#include <string>

#include "config.hpp"

namespace explsched {

struct PreemptFacts {
    uint32_t job_id = 0;
    uint32_t priority = 0;
    bool exploratory = false;
    uint16_t partition_tier = 0;
    bool partition_preempt_off = false;
};

struct PreemptAnswer {
    bool allowed = false;
    std::string reason;
};

PreemptAnswer may_preempt(const PreemptFacts& preemptor, const PreemptFacts& preemptee,
                           const Settings& settings);

// Slurm preempts candidates in increasing order of this value.
uint32_t preemptee_order(const PreemptFacts& job);

}  // namespace explsched
