// GPU counts from Slurm's text forms, so the shims can hand the engine plain numbers:
//   a node's configured GRES:   "gpu:4", "gpu:v100:2,gpu:a100:2", "gpu:4(S:0-1)"
//   a job's TRES requests:      "gres:gpu:1", "gres/gpu:a100=2", "gres:gpu:v100:2,license/x:1"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace explsched {

struct GpuCount {
    uint64_t count = 0;
    std::string type;  // the first named type ("v100"), empty when untyped
};

// Sum of the GPUs a node's GRES string configures.
GpuCount node_gpus(std::string_view gres);
// Sum of the GPUs in a TRES request string (tres_per_job / per_node / per_task).
GpuCount tres_gpus(std::string_view tres);

// GPUs a job asks for or holds from already-counted requests: per_job + per_node x nodes +
// per_task x tasks (nodes and tasks count at least 1).
uint64_t job_gpus(uint64_t per_job, uint64_t per_node, uint64_t per_task, uint64_t nodes, uint64_t tasks);

// The same from the TRES request strings.
uint64_t job_gpus(std::string_view per_job, std::string_view per_node, std::string_view per_task,
                  uint64_t nodes, uint64_t tasks);

}  // namespace explsched
