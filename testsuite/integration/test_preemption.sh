#!/bin/bash
# Preemption: a promising pending trial requeues the running trial of lowest utility per GPU (its
# utility below the GPU price, and the preemptor's above it by the margin). The preempted trial
# gets SIGTERM, checkpoints within KillWait (a trial without srun steps is requeued at once: the
# grace's SIGTERM reaches steps only), is requeued, and later resumes from its checkpoint. A
# non-exploratory job is never preempted by a trial. explsched why reads the site's settings line
# (PriorityParameters, or PrioritySiteFactorParameters in the _site variant).
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
start_cluster --nodes 1 --gpus 1 --explschedd \
    --params rerank_period=1,min_run=0,grace_time=120,preempt_margin=0.25,preempt_rank_margin=0.5
trial="/usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py"

# A non-exploratory job first: nothing may preempt it.
plainjob=$(submit --gres=gpu:1 --wrap 'sleep 8')
wait_until 20 '[ "$(job_state $plainjob)" = RUNNING ]' "the non-exploratory job running"
t1=$(submit --gres=gpu:1 --explore=flat --explore-max-steps=3000 -o t1.out --open-mode=append \
    --wrap "exec $trial --a 0.5 --b 0.2 --steps 3000 --every 0.3 --checkpoint $PWD/t1.ckpt")
sleep 3
[ "$(job_state $plainjob)" = RUNNING ] || fail "the non-exploratory job was disturbed"
wait_until 30 '[ "$(job_state $t1)" = RUNNING ]' "the flat trial running after the non-exploratory job"
[ "$(job_field $plainjob JobState)" = COMPLETED ] || fail "the non-exploratory job ended $(job_field $plainjob JobState)"
pass "the non-exploratory job ran to completion; the trial waited for it"

wait_until 30 'scontrol show job $t1 | grep -q "SystemComment=.*decision=preemptable"' \
    "the flat trial to be assessed preemptable (utility below the price)"
pass "running trial $t1: $(scontrol show job $t1 | sed -n 's/^ *SystemComment=//p')"
# explsched why judges by the site's line (the rank margin 0.5 is not the default 1)
key=PriorityParameters
[ "${EXPLSCHED_TEST_SITE_FACTOR:-0}" = 1 ] && key=PrioritySiteFactorParameters
why_says "$t1" "under the site's $key"
why_says "$t1" "one without a forecast yet with a priority above [0-9]* (50% more than its"

# A trial of another sweep with a steep curve (as if it had run before): it should take the GPU.
t2=$(submit --gres=gpu:1 --explore=steep --explore-max-steps=3000 -o t2.out --wrap 'sleep 6')
for s in 50 100 150 200 250 300 350 400; do
    m=$(awk -v s=$s 'BEGIN { printf "%.6f", 0.05 + 8.0 * s ^ -0.5 }')
    "$top_builddir/src/cli/explsched" report --job "$t2" --step $s --metric "$m" --throughput 20 >/dev/null \
        || fail "report for $t2 refused"
done
# The trial is the batch script itself (no srun step): slurmctld's SIGTERM at the start of a grace
# would not reach it, so it is requeued at once rather than after grace_time 120 s.
wait_until 40 '[ "$(job_field $t1 Restarts)" -ge 1 ]' "the flat trial to be preempted (requeued at once, not after its 120-s grace)"
grep -q "job $t2 may preempt job $t1" "$CLUSTER_DIR/log/slurmctld.log" || fail "no preemption decision logged"
grep -q "job $t1 runs no step but its batch script.*requeued now" "$CLUSTER_DIR/log/slurmctld.log" ||
    fail "the grace of a trial without steps was not logged"
pass "$(grep -h "job $t2 may preempt job $t1" "$CLUSTER_DIR/log/slurmctld.log" | head -1 | cut -d' ' -f2-)"
wait_until 30 '[ "$(job_state $t2)" = RUNNING ] || [ "$(job_field $t2 JobState)" = COMPLETED ]' "the steep trial to start"
grep -q "checkpointed at step" t1.out || { cat t1.out; fail "the preempted trial did not checkpoint on SIGTERM"; }
pass "preempted trial checkpointed: $(grep 'checkpointed at step' t1.out | tail -1)"

wait_until 90 'grep -q "resumed from step" t1.out' "the preempted trial to resume"
ck=$(grep "checkpointed at step" t1.out | tail -1 | awk '{print $4}')
rs=$(grep "resumed from step" t1.out | tail -1 | awk '{print $4}')
[ "$rs" -ge "$ck" ] && [ "$rs" -gt 0 ] || fail "resumed from step $rs, checkpointed at $ck"
grep -q "refused" t1.out && { cat t1.out; fail "a report after resuming was refused"; }
pass "the trial resumed from its checkpoint (step $rs) after the promising trial ran"
