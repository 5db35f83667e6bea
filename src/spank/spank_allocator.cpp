// Allocator and local contexts (sbatch, salloc, srun): the submit-time check. A bad value fails
// the submission with a message naming the option; a good one is stored in the job record, where
// slurmctld's plugins read it (job_ptr->spank_job_env) for the job's whole life, requeues included.
#include "spank/spank_contexts.hpp"
#include "spank/spank_options.hpp"

namespace explsched::spank {

int allocator_post_opt(spank_t sp, const Settings& /*settings*/) {
    const RawOptions& raw = recorded_options();
    if (!raw.any()) return 0;
    auto spec = validated_spec(raw);
    if (!spec) {
        slurm_error("explsched: %s", spec.error().message.c_str());
        return ESPANK_BAD_ARG;
    }
    for (const auto& [name, value] : explore_env(*spec)) {
        const spank_err_t rc = spank_job_control_setenv(sp, name.c_str(), value.c_str(), 1);
        if (rc != ESPANK_SUCCESS) {
            slurm_error("explsched: cannot store %s in the job record: %s", name.c_str(), spank_strerror(rc));
            return rc;
        }
    }
    return 0;
}

}  // namespace explsched::spank
