#!/bin/bash
# A preempted trial that checkpoints and exits on SIGTERM is requeued all the same. When a
# preemption begins, slurmctld sends SIGTERM to the job's steps at once and requeues the job when
# the grace expires; a trial run by srun inside its batch script (as many are) gets it, checkpoints
# and exits, the script ends, and the job ended COMPLETED: under PreemptMode=REQUEUE it was never
# requeued, its sweep lost it. The re-ranking now requeues a trial that ended by itself during its
# preemption's grace, as if it had run until the grace expired; it resumes from its checkpoint.
# Slurm 23.02 and later requeue such a job themselves (GRACE_PREEMPT): there the re-ranking must
# leave it alone, and the test checks that instead.
# The trial is a job array's task (sweeps are arrays). One GPU, grace 30 s; the trial's nice
# 30000 lets a newcomer without a forecast preempt it by rank at the end.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
start_cluster --nodes 1 --gpus 1 --explschedd --log-level debug \
    --params rerank_period=1,min_run=0,grace_time=30,preempt_margin=0.25,preempt_rank_margin=0.5
cd "$CLUSTER_DIR" || fail "no cluster directory"
log=$CLUSTER_DIR/log/slurmctld.log
trial="/usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py"

arr=$(submit --array=0 --nice=30000 --gres=gpu:1 --explore=flat --explore-max-steps=3000 -o t1.out --open-mode=append \
    --wrap "srun $trial --a 0.5 --b 0.2 --steps 3000 --every 0.3 --checkpoint $PWD/t1.ckpt; echo script-exit=\$?")
t1=${arr}_0
wait_until 60 '[ "$(job_state $t1)" = RUNNING ] && scontrol show job $t1 | grep -q "SystemComment=.*decision=preemptable"' \
    "the flat trial (array task $t1, run by srun) to be assessed preemptable"
id=$(job_field "$t1" JobId)
pass "running trial $t1 (job $id): $(comment "$t1" | cut -c1-120)"

# A steep trial of another sweep (as if it had run before) takes the GPU.
t2=$(submit --gres=gpu:1 --explore=steep --explore-max-steps=3000 -o t2.out --wrap 'sleep 8')
for s in 50 100 150 200 250 300 350 400; do
    m=$(awk -v s=$s 'BEGIN { printf "%.6f", 0.05 + 8.0 * s ^ -0.5 }')
    "$top_builddir/src/cli/explsched" report --job "$t2" --step $s --metric "$m" --throughput 20 >/dev/null ||
        fail "report for $t2 refused"
done
wait_until 40 'grep -q "job $t2 may preempt job $id" "$log"' "the steep trial to preempt the flat one"
began=$(date +%s)

# The step got SIGTERM at once: the trial checkpointed and exited well within the 30 s grace, ...
wait_until 25 'grep -q "checkpointed at step" t1.out' "the trial to checkpoint on SIGTERM"
wait_until 15 'grep -q "script-exit=0" t1.out' "the batch script to end after its step (t1.out: '\$(tail -3 t1.out)')"
# ... and its job, which ended COMPLETED, is requeued rather than lost: by the re-ranking under
# Slurm 22.05; Slurm 23.02 and later requeue it themselves (GRACE_PREEMPT), and the re-ranking
# must then leave it alone.
major=$(($(_cluster_slurm_release "$(command -v slurmctld || echo /usr/sbin/slurmctld)") / 100))
ours="requeueing job $id: it ended (COMPLETED, exit 0) [0-9]* s into its preemption.s grace of 30 s"
theirs="_job_complete: requeue JobId=${t1}($id) per user/system request"
wait_until 25 'grep -q "$ours" "$log" || grep -qF "$theirs" "$log"' "the trial that ended in its grace to be requeued"
took=$(($(date +%s) - began))
[ "$took" -lt 30 ] || fail "requeued $took s after the preemption began, not before its grace expired"
if grep -qF "$theirs" "$log"; then
    [ "${major:-0}" -ge 23 ] || fail "Slurm $major requeued the job itself: the test's premise is wrong"
    sleep 3
    grep -q "requeueing job $id:" "$log" && fail "the re-ranking requeued a job slurmctld had requeued"
    pass "slurmctld $major requeued it itself ($took s after the preemption); the re-ranking left it alone"
else
    [ "${major:-0}" -lt 23 ] || fail "Slurm $major did not requeue a job that ended in its grace itself"
    pass "$(grep -h "requeueing job $id" "$log" | head -1 | sed 's/.*requeueing/requeueing/') ($took s after the preemption)"
fi
wait_until 20 '[ "$(job_field $t1 Restarts)" -ge 1 ]' "the trial's restart count to show the requeue"
[ "$(job_field "$t1" JobState)" != COMPLETED ] || fail "the trial is still COMPLETED after the requeue"

# It resumes from its checkpoint once the steep trial is done; the steep one was not disturbed.
wait_until 90 'grep -q "resumed from step" t1.out' "the requeued trial to resume"
ck=$(grep "checkpointed at step" t1.out | tail -1 | awk '{print $4}')
rs=$(grep "resumed from step" t1.out | tail -1 | awk '{print $4}')
[ "$rs" -ge "$ck" ] && [ "$rs" -gt 0 ] || fail "resumed from step $rs, checkpointed at $ck"
[ "$(job_field "$t2" JobState)" = COMPLETED ] || fail "the steep trial ended $(job_field "$t2" JobState)"
pass "the trial resumed from its checkpoint (step $rs) after the steep trial completed"
n=$(grep -c "requeueing job $id:" "$log")
[ "$n" -le 1 ] || fail "the trial was requeued more than once: $(grep "requeueing job $id" "$log")"

# A trial its owner cancels during the grace stays cancelled (only what ended by itself is requeued).
wait_until 60 'scontrol show job $t1 | grep -q "SystemComment=.*decision=preemptable" && [ "$(job_state $t1)" = RUNNING ]' \
    "the resumed trial to be preemptable again"
# (a newcomer without a forecast, over 1.5 times the trial's priority: nice 30000 lowered it)
t3=$(submit --gres=gpu:1 --explore=third --explore-max-steps=3000 -o /dev/null --wrap 'sleep 5')
wait_until 40 'grep -q "job $t3 may preempt job $id" "$log"' \
    "a third trial ($(prio $t3)) to preempt the resumed one ($(prio $t1): '\$(comment $t1 | cut -c1-160)')"
scancel "$t1"
sleep 5
[ "$(grep -c "requeueing job $id:" "$log")" = "$n" ] || fail "a trial cancelled by its owner in its grace was requeued"
[ "$(job_field "$t1" JobState)" = CANCELLED ] || fail "the cancelled trial is $(job_field "$t1" JobState)"
pass "a trial cancelled during its grace stays cancelled"
