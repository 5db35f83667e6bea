// The re-ranking driver shared by priority/explsched and site_factor/explsched: a slurmctld thread
// that copies the job list under read locks, runs the core's engine on the copy without locks,
// and writes the answers back; hopeless trials are held, requeued or cancelled from it in both
// modes. The two plugins differ only in where the answer goes:
//   - priority mode: the whole Slurm priority (and the factors sprio prints), written by the
//     thread under the job write lock;
//   - site_factor mode: only the utility-versus-price term, as each job's site factor, which
//     priority/multifactor adds to its own factors. The thread publishes the round's answers;
//     site_factor_update(), which multifactor calls under the job write lock it already holds
//     every PriorityCalcPeriod, stores them just before multifactor recomputes the priorities.
// Include after slurmctld.h. None of these functions throws.
#pragma once

#include <cstdint>

namespace explsched::rerank {

enum class Mode { priority, site_factor };

// A job's submit time (0 without details): with its id, what names one instance of a job (a
// requeued job is submitted again).
inline int64_t submit_of(const job_record_t* job) {
    return job->details != nullptr ? static_cast<int64_t>(job->details->submit_time) : 0;
}

// Reads the settings (PriorityParameters or PrioritySiteFactorParameters), the action ledger,
// and starts the thread inside slurmctld. SLURM_SUCCESS or SLURM_ERROR (logged).
int init(Mode mode);
int fini();
// Reads the settings again; a bad line keeps the previous ones (logged).
void reconfig();

// priority mode, at submit and requeue (job write lock held): the last round's answer for this
// job instance, or the rank of a job with no curve yet.
uint32_t priority_at_submit(job_record_t* job);

// site_factor mode, from multifactor's priority_p_set (submit, requeue, updates, and the placement
// round's recompute of a job it lifts or stops lifting; job write lock held): the job's site
// factor, provisional for a job no round has seen.
void site_factor_at_submit(job_record_t* job);
// site_factor mode, from priority/multifactor's decay thread (job write lock held): stores the
// latest round's site factors and SystemComments.
void site_factor_update();

}  // namespace explsched::rerank
