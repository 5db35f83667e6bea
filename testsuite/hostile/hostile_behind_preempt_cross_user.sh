#!/bin/bash
# Attack: user B's trial reports rarely, so it passes a milestone of B's sweep behind its ended
# siblings while it still has too few points for a forecast. Such a trial is worth half an unknown
# trial (a priority about 35001), far above a running trial below the GPU price: by the rank
# margin alone it would take user A's GPU, then, running and with no utility, give it back to the
# next trial with one, then take it again once pending (philly seed 0: three trials preempted
# 177-282 times each). What the design guarantees (policy.cpp, preempt_verdict): a trial behind
# its sweep at a milestone, too early to predict, preempts nobody; it waits for a GPU nobody else
# wants. Here A's trial has a forecast, sits below the price, ranks under half of B's (A runs it
# --nice=50000) and must keep its GPU; B's trial runs once A's has ended.
# Two real users, one node, one GPU, priority/explsched and preempt/explsched, min_run=0.
set -u
. "$(dirname "$0")/lib.sh"
two_users esh_bp
start_cluster --nodes 1 --gpus 1 --explschedd --params rerank_period=1,min_run=0,grace_time=5
log=$CLUSTER_DIR/log/slurmctld.log
open_to_users

# 1. B's sweep: three siblings pass its milestone (step 100) at loss 0.12 and end.
sib=$(submit_as $B --array=0-2 --gres=gpu:1 --explore=bsweep --explore-max-steps=3000 --explore-milestones=100 \
    --wrap "exec $trial --a 0.1 --b 0.2 --steps 200 --stride 20 --every 0.2 --checkpoint $work/sib\$SLURM_ARRAY_TASK_ID.ckpt") ||
    fail "sbatch as $B"
wait_until 90 '[ "$(squeue -h -r -j $sib 2>/dev/null | wc -l)" = 0 ]' "B's three siblings to end"
for i in 0 1 2; do
    [ "$(cat "$work/sib$i.ckpt" 2>/dev/null)" = 200 ] || fail "B's sibling $i did not reach step 200"
done

# 2. B's rare reporter: a point every 60 steps and 4 s, loss above 0.5, behind them at step 100.
behind=$(submit_as $B --gres=gpu:1 --explore=bsweep --explore-max-steps=3000 --explore-milestones=100 \
    -o "$work/behind.out" --open-mode=append \
    --wrap "exec $trial --a 0.5 --b 0.2 --steps 3000 --stride 60 --every 4 --checkpoint $work/behind.ckpt") ||
    fail "sbatch as $B"
wait_until 40 'comment $behind | grep -q "milestone step 100: rank 4 of 4 in its group, outside the top 1/3"' \
    "B's rare reporter to be behind its sweep at the milestone (now '\$(comment $behind)')"
# A's trial waits for the GPU; B then requeues its own trial (as a preemption would), which keeps
# its points and, pending, has no forecast yet.
a=$(submit_as $A --nice=50000 --gres=gpu:1 --explore=asweep --explore-max-steps=3000 \
    -o "$work/a.out" --open-mode=append \
    --wrap "exec $trial --a 0.5 --b 0.2 --steps 2000 --stride 10 --every 0.3 --checkpoint $work/a.ckpt") ||
    fail "sbatch as $A"
as_user $B env SLURM_CONF="$SLURM_CONF" scontrol requeue "$behind" || fail "user B could not requeue its own trial $behind"
wait_until 40 '[ "$(job_state $a)" = RUNNING ] && comment $a | grep -q "decision=preemptable.*utility=[0-9]*\.*[0-9]*[1-9]"' \
    "A's trial to run, assessed preemptable with a forecast (now '\$(comment $a)')"
comment "$behind" | grep -q "points=[1-5] " || fail "B's trial has a forecast's worth of points: '$(comment "$behind")'"
# eligible again (a requeued job waits cred_expire + 1 s) and still behind
wait_until 40 '[ "$(job_state $behind)" = PENDING ] && ! scontrol show job $behind | grep -q "Reason=BeginTime" &&
    comment $behind | grep -q "decision=wait.*outside the top 1/3"' \
    "B's requeued trial eligible, waiting, behind at the milestone (now '\$(comment $behind)')"
pa=$(job_field "$a" Priority)
pb=$(job_field "$behind" Priority)
[ "$pb" -gt $((2 * pa)) ] 2>/dev/null ||
    fail "B's trial ($pb) is not above twice A's ($pa): the rank margin alone would keep A's GPU, the test cannot tell"
pass "B's behind trial $behind (priority $pb, over twice A's $pa) pending: $(comment "$behind" | cut -c1-220)"

# 3. For 30 s A's trial keeps its GPU.
keeps_gpu "A's trial" "$a" "$a" "$behind"
[ "$(job_state "$behind")" = PENDING ] || fail "B's trial $behind is $(job_state "$behind"), want PENDING"
pass "A's trial $a (priority $pa) kept its GPU for 30 s against B's behind trial $behind ($pb)"
why_says "$a" "A trial behind its sweep at a milestone before it has a forecast preempts nobody"

# 4. Not starved: once A's trial ends, B's takes the GPU and resumes from its checkpoint.
wait_until 90 '[ "$(job_state $behind)" = RUNNING ]' "B's trial to run once A's has ended (A's: '\$(job_state $a)')"
wait_until 20 'grep -q "resumed from step" "$work/behind.out"' "B's trial to resume from its checkpoint"
pass "B's trial $behind ran after A's: $(grep -h "resumed from step" "$work/behind.out" | tail -1)"
scancel "$behind" 2>/dev/null
