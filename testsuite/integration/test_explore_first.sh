#!/bin/bash
# Explore first (explore_first_progress, off by default) on the live cluster, with an array sweep
# of four nearly equal trials on two GPUs: once past 10 % of its run, the running trial that does
# not lead the sweep is paused (requeued and held with its checkpoint) because the sweep's untried
# tasks wait; an untried task starts on its GPU; the paused trial is resumed later, continues from
# its checkpoint, and every task completes. SystemComment, slurmctld's log and `explsched why`
# (by job id and by ARRAYID_INDEX) say so. Without the setting (first sweep's control, a plain
# cluster) nothing is paused.
#
# Settings: hopeless_probability=0 and min_expected_gain=0 (nothing is stopped: near ties would
# be, by default), min_run=0, pause_probability=0.2 (the
# default: pauses on); the trials are near ties, so no trial's chance falls below 0.2 and the
# unlikely-trial pause does not fire: a pause here is explore first's.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
start_cluster --nodes 1 --gpus 2 --explschedd \
    --params rerank_period=1,min_run=0,grace_time=3,hopeless_probability=0,min_expected_gain=0,hopeless_action=requeue,explore_first_progress=0.1
cli="$top_builddir/src/cli/explsched"
log="$CLUSTER_DIR/log/slurmctld.log"

cat >trial.sh <<EOS
#!/bin/bash
t=\$SLURM_ARRAY_TASK_ID
exec /usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py --a 0.30\$t --b 3 --steps 1000 --every 0.1 \\
    --checkpoint \$PWD/ckpt.\$t --acks \$PWD/acks.\$t
EOS
chmod +x trial.sh
job=$(submit --array=0-3 --gres=gpu:1 --explore=first --explore-max-steps=1000 --open-mode=append \
    -o "trial.%a.out" ./trial.sh)
comment() { scontrol show job "$1" | sed -n 's/^ *SystemComment=//p'; }
# nobody but the plugin touches these jobs: a pause whose hold it lost (a preemption requeued the
# trial between the round and its act, and the pause was never carried out) is a bug, not a release
no_lost_pause() {
    if grep -q "the hold of its pause was released or replaced" "$log"; then
        fail "a pause was lost, no one released it: $(grep -h "the hold of its pause was released" "$log" | head -1)"
    fi
}

wait_until 90 'grep -q "pausing job" "$log"' "a trial to be paused for its sweep's untried tasks"
line=$(grep -h "pausing job" "$log" | head -1)
pid=$(echo "$line" | sed 's/.*pausing job \([0-9]*\).*/\1/')
task=$(scontrol show job "$pid" | sed -n 's/.*ArrayTaskId=\([0-9]*\).*/\1/p' | head -1)
case "$task" in 0 | 1) ;; *) fail "paused job $pid is task '$task', not one of the first two: $line" ;; esac
pass "paused: $(echo "$line" | cut -d' ' -f2-)"
no_lost_pause
wait_until 20 'comment $pid | grep -q "its sweep.s untried trials wait"' "the paused trial's SystemComment to name explore first"
pass "paused trial: $(comment "$pid" | cut -c1-220)"
why=$("$cli" why "$pid" 2>&1) || fail "explsched why failed: $why"
echo "$why" | grep -q "its sweep.s untried trials wait" || fail "explsched why does not say why it paused: $why"
echo "$why" | grep -q "not because it looks unlikely" || fail "explsched why explains an explore-first pause as any pause: $why"
# the same by its array name, as squeue prints it; an index the array does not have is refused
why=$("$cli" why "${job}_$task" 2>&1) || fail "explsched why ${job}_$task failed: $why"
echo "$why" | grep -q "^job ${job}_$task (job $pid) " || fail "explsched why ${job}_$task does not name task and job: $why"
echo "$why" | grep -q "its sweep.s untried trials wait" || fail "explsched why ${job}_$task does not say why it paused: $why"
out=$("$cli" why "${job}_99" 2>&1) && fail "explsched why ${job}_99 (no such task) succeeded: $out"
echo "$out" | grep -q "${job}_99" || fail "explsched why ${job}_99 fails without naming it: $out"
pass "explsched why ${job}_$task = why $pid; ${job}_99: $out"
wait_until 30 '[ "$(squeue -h -j ${job}_2,${job}_3 -t RUNNING,COMPLETING -o %i 2>/dev/null | wc -l)" -ge 1 ] || [ -s acks.2 ] || [ -s acks.3 ]' \
    "an untried task to start on the freed GPU"
pass "an untried task started"
wait_until 20 'grep -q "checkpointed at step" trial.$task.out' "the paused trial to checkpoint on SIGTERM"
ck=$(grep "checkpointed at step" "trial.$task.out" | tail -1 | awk '{print $4}')
{ [ "$ck" -ge 100 ] && [ "$ck" -lt 1000 ]; } || fail "the trial was paused at step $ck, not in 100..999"

wait_until 180 'grep -q "resuming paused job $pid " "$log"' "the paused trial to be resumed"
pass "resumed: $(grep -h "resuming paused job $pid " "$log" | head -1 | cut -d' ' -f2-)"
wait_until 60 'grep -q "resumed from step" trial.$task.out' "the paused trial to restart from its checkpoint"
rs=$(grep "resumed from step" "trial.$task.out" | tail -1 | awk '{print $4}')
[ "$rs" -ge "$ck" ] || fail "resumed from step $rs, checkpointed at $ck"
wait_until 180 '[ -z "$(squeue -h -j $job -o %i)" ]' "the sweep to finish"
for t in 0 1 2 3; do
    st=$(job_field "${job}_$t" JobState)
    [ "$st" = COMPLETED ] || fail "task $t ended $st"
    [ "$(tail -1 "acks.$t")" = 1000 ] || fail "task $t's last reported step is $(tail -1 "acks.$t"), not 1000"
done
sort -n -c "acks.$task" 2>/dev/null || fail "the paused trial reported a step twice (restarted from 0)"
pass "all four tasks completed; the paused one went on from its checkpoint (step $rs) to 1000"
no_lost_pause
