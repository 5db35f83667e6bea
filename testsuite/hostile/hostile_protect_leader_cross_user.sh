#!/bin/bash
# protect_leader (the default): a running trial below the GPU price that holds its sweep's best
# reported metric, another member having reported, is marked code=leads_sweep and gives way to
# another sweep's trial only if it is worth its GPUs (utility at least its own price); its own
# sweep's trials and plain jobs preempt it as any trial.
# The power a user gets from it, and its bound (doc/security.md): user A's leader keeps its GPU
# against user B's trial without a forecast in a sweep B names as A's, whose priority is over
# twice A's (the rank margin alone would let it preempt: hostile_rank_margin*.sh), while A's own trial of the same sweep
# takes it by that margin; B's trial is not starved, it runs once the GPU is free. Who else may
# preempt a leader (a trial worth its GPUs, a plain job by rank) is checked by unit tests
# (test_sched_policy, test_sched_engine).
# Two real users, one node, one GPU, priority/explsched and preempt/explsched, min_run=0.
set -u
. "$(dirname "$0")/lib.sh"
two_users esh_pl
start_cluster --nodes 1 --gpus 1 --explschedd --params rerank_period=1,min_run=0,grace_time=5
log=$CLUSTER_DIR/log/slurmctld.log
open_to_users

# 1. A's sweep is a job array (sbatch --array, as sweeps are run): task 0 reports a worse curve
#    (loss above 0.5) and ends; task 1, the leader, a better and flat one (loss near 0.1), below
#    the price on the full cluster.
arr=$(submit_as $A --nice=50000 --array=0-1 --gres=gpu:1 --explore=asweep --explore-max-steps=3000 \
    --wrap "if [ \$SLURM_ARRAY_TASK_ID = 0 ]; then exec $trial --a 0.5 --b 0.2 --steps 200 --stride 20 --every 0.2 --checkpoint $work/sib.ckpt; else exec $trial --a 0.1 --b 0.02 --steps 3000 --stride 10 --every 0.4 --checkpoint $work/lead.ckpt; fi") ||
    fail "sbatch as $A"
wait_until 90 '[ "$(squeue -h -j ${arr}_0 2>/dev/null | wc -l)" = 0 ]' "A's task 0 to end"
[ "$(cat "$work/sib.ckpt" 2>/dev/null)" = 200 ] || fail "A's task 0 did not reach step 200"

# 2. Task 1 leads the sweep (slurmctld's log names it by its own job id).
lead=${arr}_1
wait_until 40 '[ "$(job_state $lead)" = RUNNING ] && comment $lead | grep -q "decision=preemptable .*code=leads_sweep"' \
    "A's trial to run and lead its sweep below the price (now '\$(comment $lead)')"
lead_id=$(job_field "$lead" JobId)
[ -n "$lead_id" ] || fail "no job id for array task $lead"
pass "A's leader $lead (job $lead_id): $(comment "$lead" | grep -o 'decision=.*' | cut -c1-200)"

# 3. B's trial without a forecast (it never reports), over twice the leader's priority, in a
#    sweep B names as A's ("asweep"): sweeps are per user, so it is another sweep all the same.
b=$(submit_as $B --gres=gpu:1 --explore=asweep --explore-max-steps=3000 --wrap 'sleep 600') || fail "sbatch as $B"
wait_until 20 'comment $b | grep -q "code=too_few_points"' "B's trial to be ranked without a forecast (now '\$(comment $b)')"
pa=$(job_field "$lead" Priority)
pb=$(job_field "$b" Priority)
[ "$pb" -gt $((2 * pa)) ] 2>/dev/null ||
    fail "B's trial ($pb) is not above twice A's leader ($pa): the rank margin alone would keep A's GPU, the test cannot tell"

# 4. For 30 s A's leader keeps its GPU.
keeps_gpu "A's leader" "$lead" "$lead_id" "$b"
[ "$(job_state "$b")" = PENDING ] || fail "B's trial $b is $(job_state "$b"), want PENDING"
pass "A's leader $lead (priority $pa) kept its GPU for 30 s against B's trial $b without a forecast ($pb)"
why_says "$lead" "of other sweeps, only a waiting"
why=$("$top_builddir/src/cli/explsched" why "$lead" 2>&1)
# the rank rule for trials without a forecast is stated for its own sweep's trials only
echo "$why" | grep -q "^ *A waiting trial takes its GPUs" &&
    fail "explsched why says any waiting trial may take the leader's GPUs: $(echo "$why" | tail -6)"
echo "$why" | grep -q "Of its own sweep, a waiting trial takes its GPUs" ||
    fail "explsched why does not say its own sweep's trials are judged as for any trial: $(echo "$why" | tail -6)"

# 5. The mark shields the leader from other sweeps only: a trial of its own sweep without a
#    forecast, over twice its priority, takes its GPU by the rank margin (preempt/explsched reads
#    both sweeps from the jobs' --explore).
sib=$(submit_as $A --gres=gpu:1 --explore=asweep --explore-max-steps=3000 --wrap 'sleep 600') || fail "sbatch as $A"
wait_until 30 'grep -q "job $sib may preempt job $lead_id\b" "$log"' \
    "A's own trial $sib to preempt its sweep's leader $lead (leader: '\$(job_state $lead)')"
# The requeue comes after grace_time (5 s), which slurmctld checks on its 30-s background pass
# (37 s after the decision on a loaded CI machine): wait up to 75 s.
wait_until 75 '[ "$(job_state $lead)" != RUNNING ]' "A's leader $lead to be requeued for its own sweep's trial"
pass "A's trial $sib of the same sweep preempted its leader: $(grep -h "job $sib may preempt job $lead_id" "$log" | head -1 | sed 's/.*may preempt/may preempt/')"
grep -q "job $b may preempt" "$log" && fail "slurmctld logged B's trial $b preempting a job of A's"

# 6. Not starved: once the GPU is free, B's trial runs (the first waiting at the top priority,
#    which A's new trial shares; should that one start first, it is cancelled).
wait_until 60 '[ "$(job_state $b)" = RUNNING ] || [ "$(job_state $sib)" = RUNNING ]' \
    "a trial to run on the freed GPU (B's: '\$(job_state $b)', A's: '\$(job_state $sib)')"
[ "$(job_state "$sib")" = RUNNING ] && scancel "$sib"
wait_until 60 '[ "$(job_state $b)" = RUNNING ]' "B's trial to run once the GPU is free (A's leader: '\$(job_state $lead)')"
pass "B's trial $b ran once the GPU was free"
scancel "$sib" 2>/dev/null
scancel "$b" 2>/dev/null
