#!/bin/bash
# Attack: user A's trial, preempted for user B's, ends itself during its preemption's grace to
# come back at once. A trial that ends by itself (COMPLETED or FAILED) in its grace is requeued
# (by the re-ranking under Slurm 22.05, by slurmctld itself from 23.02 on), so A's trial, run by
# srun, exits on the grace's SIGTERM and its script fails (exit 3) at once: ended early, freed the
# GPU early, requeued - and would restart before B's trial if the requeue handed it back.
# Asserted: the GPU goes to B's trial, which then keeps it for 30 s without a restart; A's trial
# is requeued exactly once for the one preemption (no loop of requeues), pending, never running
# while B's runs; and it is not lost either (its owner's training fails open): it resumes from its
# checkpoint once B's trial has ended.
# Two real users, one node, one GPU, grace_time 20; A's trial is a job array's task with nice
# 30000, so that B's newcomer outranks it by preempt_rank_margin and preempts it. min_run 60:
# B's trial, once started, keeps its GPU that long by design; without it A's requeued trial, with
# a better forecast than B's few points give, takes the GPU back on merit a few seconds later -
# as it would have after being requeued at the grace's end (a race of forecasts, not the attack).
set -u
. "$(dirname "$0")/lib.sh"
two_users esh_ge
start_cluster --nodes 1 --gpus 1 --explschedd \
    --params rerank_period=1,min_run=60,grace_time=20,preempt_margin=0.25,preempt_rank_margin=0.5
log=$CLUSTER_DIR/log/slurmctld.log
open_to_users

arr=$(submit_as $A --array=0 --nice=30000 --gres=gpu:1 --explore=asweep --explore-max-steps=6000 \
    -o "$work/a.out" --open-mode=append \
    --wrap "srun $trial --a 0.5 --b 0.2 --steps 6000 --every 0.3 --checkpoint $work/a.ckpt; echo script-exit; exit 3") ||
    fail "sbatch as $A"
a=${arr}_0
wait_until 60 '[ "$(job_state $a)" = RUNNING ] && comment $a | grep -q "decision=\(keep\|preemptable\) utility="' \
    "A's trial $a (run by srun) to run with a forecast (now '\$(comment $a | cut -c1-160)')"
aid=$(job_field "$a" JobId)

# B's trial: a newcomer without a forecast, over 1.5 times A's priority (nice 30000 lowered A's).
b=$(submit_as $B --gres=gpu:1 --explore=bsweep --explore-max-steps=600 -o "$work/b.out" --open-mode=append \
    --wrap "exec $trial --a 0.05 --b 0.5 --steps 600 --every 1.2 --checkpoint $work/b.ckpt") ||
    fail "sbatch as $B"
# (A's trial first runs out its own min_run of 60 s)
wait_until 100 'grep -q "job $b may preempt job $aid\b" "$log"' \
    "B's trial $b ($(prio $b)) to preempt A's $a ($(prio $a))"
began=$(date +%s)
wait_until 25 'grep -q "script-exit" "$work/a.out"' "A's script to end itself in the grace (a.out: '\$(tail -2 $work/a.out)')"
major=$(($(_cluster_slurm_release "$(command -v slurmctld || echo /usr/sbin/slurmctld)") / 100))
ours="requeueing job $aid: it ended (FAILED, exit 3) [0-9]* s into its preemption.s grace of 20 s"
theirs="_job_complete: requeue JobId=${a}($aid) per user/system request"
wait_until 25 'grep -q "$ours" "$log" || grep -qF "$theirs" "$log"' "A's trial, ended in its grace, to be requeued"
if [ "${major:-0}" -lt 23 ]; then
    grep -q "$ours" "$log" || fail "Slurm $major: the re-ranking did not requeue A's trial"
fi
wait_until 20 '[ "$(job_field $a Restarts)" = 1 ]' "A's trial's restart count to show the requeue"
pass "A's trial ended itself in its grace and was requeued $(($(date +%s) - began)) s after the preemption began"

# The GPU is B's: B's trial starts, and keeps it while A's requeued trial waits.
wait_until 30 '[ "$(job_state $b)" = RUNNING ]' "B's trial to take the GPU (A's: $(job_state $a))"
keeps_gpu "B's trial" "$b" "$b" "$aid"
[ "$(job_state "$a")" = PENDING ] || fail "A's trial is $(job_state "$a") while B's runs, want PENDING"
[ "$(job_field "$a" Restarts)" = 1 ] || fail "A's trial was requeued $(job_field "$a" Restarts) times for one preemption"
n=$(grep -c "requeueing job $aid:" "$log")
[ "$n" -le 1 ] || fail "A's trial was requeued by the re-ranking $n times: $(grep -h "requeueing job $aid:" "$log")"
grep -q "resumed from step" "$work/b.out" && fail "B's trial restarted: $(grep -h "resumed from step" "$work/b.out")"
pass "B's trial $b kept the GPU for 30 s; A's $a waited, requeued once"

# Not lost: A's trial resumes from its checkpoint (once B's has ended, or on merit after B's
# min_run).
wait_until 120 'grep -q "resumed from step" "$work/a.out"' "A's trial to resume (B's: $(job_state $b))"
ck=$(grep "checkpointed at step" "$work/a.out" | tail -1 | awk '{print $4}')
rs=$(grep "resumed from step" "$work/a.out" | tail -1 | awk '{print $4}')
[ "${rs:-0}" -gt 0 ] && [ "$rs" -ge "${ck:-0}" ] || fail "A's trial resumed from step $rs, checkpointed at $ck"
pass "A's trial resumed from its checkpoint (step $rs); B's trial: $(state_of "$b")"
scancel "$a" "$b" 2>/dev/null
exit 0
