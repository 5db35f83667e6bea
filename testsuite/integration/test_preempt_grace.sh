#!/bin/bash
# min_run after a restart, on the real preempt/explsched. The engine writes "preemptable" into a
# running trial's SystemComment at a re-ranking; a trial preempted, requeued and started again
# before the next re-ranking still carries it, and the plugin used to let the next newcomer
# preempt it at once, before its grace. The plugin now counts min_run from the job's current
# start time (as Slurm counts PreemptExemptTime). Here: re-ranking every 60 s, grace 20 s,
# preemption by rank alone (preempt_rank_margin=0). t1 (flat curve, nice 20000) is preempted by
# newcomer t2 right after a re-ranking; t1 restarts about 15 s later, before the next one; newcomer
# t3 arrives at once and must wait until t1 has run its 20 s, then preempts it.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
start_cluster --nodes 1 --gpus 1 --explschedd \
    --params rerank_period=60,min_run=20,grace_time=3,preempt_rank_margin=0
cd "$CLUSTER_DIR" || fail "no cluster directory"
trial="/usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py"

t1=$(submit --nice=20000 --gres=gpu:1 --explore=flat --explore-max-steps=30000 -o t1.out --open-mode=append \
    --wrap "exec $trial --a 0.5 --b 0.2 --steps 30000 --every 0.3 --checkpoint $PWD/t1.ckpt")
# A re-ranking after its 20 s grace calls it preemptable; the next one is 60 s away.
wait_until 120 'scontrol show job $t1 | grep -q "SystemComment=.*decision=preemptable.*utility=[0-9]"' \
    "the running trial to be assessed preemptable with a forecast"
t2=$(submit --gres=gpu:1 --explore=second -o /dev/null --wrap 'sleep 2')
pass "trial $t1 preemptable: $(comment "$t1"); newcomer $t2 submitted"
wait_until 20 '[ "$(job_field $t1 Restarts)" = 1 ]' "newcomer $t2 to preempt trial $t1 by rank"
grep -q "job $t2 may preempt job $t1" "$CLUSTER_DIR/log/slurmctld.log" || fail "the first preemption was not logged"
wait_until 30 '[ "$(job_state $t1)" = RUNNING ]' "trial $t1 to start again after $t2"
# the restart's own time (StartTime), not when the poll saw it: the requeue now comes at once
# (no steps: no grace), so the check below is at the min_run boundary to the second
restarted=$(date -d "$(job_field "$t1" StartTime)" +%s 2>/dev/null) || restarted=$(date +%s)
t3=$(submit --gres=gpu:1 --explore=third -o /dev/null --wrap 'sleep 2')
c1=$(comment "$t1")
pass "trial $t1 restarted; its SystemComment still reads: $c1; newcomer $t3 submitted"
# Until t1 has run 20 s the newcomer waits. Without the check slurmctld chose to preempt t1 about
# 1 s after t3 arrived (logged at once; the requeue itself came 16 s later, after SIGTERM).
while [ $(($(date +%s) - restarted)) -lt 15 ]; do
    [ "$(job_field "$t1" Restarts)" = 1 ] && [ "$(job_state "$t1")" = RUNNING ] ||
        fail "trial $t1 was preempted $(($(date +%s) - restarted)) s after its restart, within min_run 20 s"
    early=$(grep -h "job $t3 may preempt job $t1" "$CLUSTER_DIR/log/slurmctld.log" | head -1)
    [ -z "$early" ] || fail "$(($(date +%s) - restarted)) s after the restart, within min_run 20 s: $early"
    sleep 1
done
[ "$(job_state "$t3")" = PENDING ] || fail "newcomer $t3 is $(job_state "$t3"), want PENDING"
pass "newcomer $t3 waited 15 s: trial $t1 keeps its grace after the restart"
# After the grace, the next re-ranking calls t1 preemptable again and t3 takes the GPU.
wait_until 90 '[ "$(job_field $t1 Restarts)" -ge 2 ]' "newcomer $t3 to preempt trial $t1 after its grace"
took=$(($(date +%s) - restarted))
[ "$took" -ge 20 ] || fail "trial $t1 preempted $took s after its restart, within min_run 20 s"
line=$(grep -h "job $t3 may preempt job $t1" "$CLUSTER_DIR/log/slurmctld.log" | head -1)
[ -n "$line" ] || fail "the second preemption was not logged"
pass "after $took s: ${line#* }"
