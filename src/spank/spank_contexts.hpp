// One entry point per SPANK context; each lives in its own file with its own state.
#pragma once

#include "spank/spank_api.hpp"

#include "core/sched/settings.hpp"

namespace explsched::spank {

// sbatch, salloc and srun (local): validate the options, store them in the job record.
int allocator_post_opt(spank_t sp, const Settings& settings);
// slurmstepd, in every task of batch and srun steps: export what the trial's code needs.
int remote_user_init(spank_t sp, const Settings& settings);
// slurmstepd, once per step, as root, options known: registers the step (its user and its
// priority from slurmctld) with each GPU's kernel scheduler.
int remote_post_opt(spank_t sp, const Settings& settings);
// slurmstepd, in each task before exec, as root: the device level's environment for the task.
int remote_task_init_privileged(spank_t sp, const Settings& settings);
int remote_exit(spank_t sp, const Settings& settings);

}  // namespace explsched::spank
