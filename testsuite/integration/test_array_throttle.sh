#!/bin/bash
# A sweep run as a job array with a task limit (sbatch --array=0-3%2: at most two tasks at a time,
# the way a researcher gives a sweep K workers) on a cluster with GPUs to spare. The array's
# running tasks hold its two slots, and its waiting tasks start only when one of them ends,
# however many GPUs are free; so an unlikely trial is paused for a waiting task of its array
# (reason pause_slot), although no trial waits for GPUs: a late bloomer (flat, then its loss falls,
# ending as the sweep's best) is paused early, task 2 starts in its slot, the array never runs more
# than two tasks, and the paused task resumes from its checkpoint and completes as the sweep's best.
# SystemComment, slurmctld's log and `explsched why` say so. (That a paused task is not resumed
# while its array has no slot for it, reason paused_no_slot, is test_sched_pause's: a paused trial's
# SystemComment keeps the verdict that paused it until its periodic refresh.) Without the task limit (the second sweep, the same trials on the
# same free GPUs) nothing is paused: all four run at once.
#
# Settings as test_pause_resume.sh: hopeless_probability=0 and min_expected_gain=0 (no trial is
# stopped, a pause is never final), min_run=0, pause_probability 0.2 (the default).
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
start_cluster --nodes 1 --gpus 4 --explschedd \
    --params rerank_period=1,min_run=0,grace_time=3,hopeless_probability=0,min_expected_gain=0,hopeless_action=requeue
cli="$top_builddir/src/cli/explsched"
log="$CLUSTER_DIR/log/slurmctld.log"

# Task 0 is the late bloomer: loss ~0.61 (flat) up to step 900, then falls to 0.1 by step 1,500.
# Tasks 1-3 are steady power laws ending near 0.38, 0.43, 0.48.
cat >trial.sh <<EOS
#!/bin/bash
t=\$SLURM_ARRAY_TASK_ID
case \$t in
    0) args="--a 0.6 --b 0.3 --drop 900 --after 0.1" ;;
    *) args="--a 0.\$((25 + 5 * t)) --b 3" ;;
esac
exec /usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py \$args --steps 1500 --every 0.2 \\
    --checkpoint \$PWD/ckpt.\$SWEEP.\$t --acks \$PWD/acks.\$SWEEP.\$t
EOS
chmod +x trial.sh
job=$(SWEEP=a submit --array=0-3%2 --gres=gpu:1 --explore=slots --explore-max-steps=1500 --open-mode=append \
    -o "trial.%a.out" ./trial.sh)
bloomer="${job}_0"
comment() { scontrol show job "$1" | sed -n 's/^ *SystemComment=//p'; }
running() { squeue -h -j "$1" -t RUNNING,CONFIGURING,COMPLETING -o %i | wc -l; }
# the task limit holds throughout: sampled in the background until the sweep ends
(while :; do echo "$(running "$job")"; sleep 0.5; done) >running.log 2>/dev/null &
sampler=$!
on_exit_hook() { kill "$sampler" 2>/dev/null; }  # called by start_cluster's EXIT trap

wait_until 90 'grep -q "pausing job" "$log"' "the late bloomer to be paused for a waiting task of its array"
line=$(grep -h "pausing job" "$log" | head -1)
pid=$(echo "$line" | sed 's/.*pausing job \([0-9]*\).*/\1/')
[ "$pid" = "$(job_field "$bloomer" JobId)" ] || fail "paused job $pid is not the bloomer $bloomer: $line"
echo "$line" | grep -q "wait for the slot it holds" || fail "the pause does not name the array's slot: $line"
pass "paused: $(echo "$line" | cut -d' ' -f2- | cut -c1-260)"
# it was paused with GPUs free: four GPUs, at most two tasks running
free=$(( 4 - $(running "$job") ))
[ "$free" -ge 1 ] || fail "no GPU was free when the bloomer was paused"
wait_until 30 '[ "$(job_state $bloomer)" = PENDING ] && [ "$(job_field $bloomer Priority)" = 0 ]' \
    "the paused bloomer to be pending and held"
wait_until 20 'comment $bloomer | grep -q "decision=pause"' "the paused bloomer's SystemComment"
pass "paused bloomer: $(job_field "$bloomer" Reason); $(comment "$bloomer" | sed 's/.* reason=//' | cut -c1-200)"
wait_until 30 '[ -s acks.a.2 ]' "task 2 to start in the bloomer's slot"
pass "task 2 started in the freed slot ($free of 4 GPUs free when the bloomer was paused)"
wait_until 20 'grep -q "checkpointed at step" trial.0.out' "the bloomer to checkpoint on SIGTERM"
ck=$(grep "checkpointed at step" trial.0.out | tail -1 | awk '{print $4}')
[ "$ck" -ge 150 ] && [ "$ck" -lt 900 ] || fail "the bloomer was paused at step $ck, not early (150..900)"
why=$("$cli" why "$bloomer" 2>&1) || fail "explsched why $bloomer failed: $why"
echo "$why" | grep -q "Its job array runs at its task limit" ||
    fail "explsched why does not explain the array's task limit: $why"
pass "explsched why: $(echo "$why" | grep -A1 "Its job array runs at its task limit" | sed 's/^ *//' | tr '\n' ' ')"
wait_until 180 'grep -q "resuming paused job $pid " "$log"' "the paused bloomer to be resumed once a slot frees"
pass "resumed: $(grep -h "resuming paused job $pid " "$log" | head -1 | cut -d' ' -f2- | cut -c1-220)"
wait_until 60 'grep -q "resumed from step" trial.0.out' "the bloomer to restart from its checkpoint"
rs=$(grep "resumed from step" trial.0.out | tail -1 | awk '{print $4}')
[ "$rs" -ge "$ck" ] && [ "$rs" -gt 0 ] || fail "resumed from step $rs, checkpointed at $ck"
wait_until 180 '[ -z "$(squeue -h -j $job -o %i)" ]' "the sweep to finish"
kill $sampler 2>/dev/null
sort -n -c acks.a.0 2>/dev/null || fail "the bloomer reported a step twice (restarted from 0)"
[ "$(tail -1 acks.a.0)" = 1500 ] || fail "the bloomer's last reported step is $(tail -1 acks.a.0), not 1500"
most=$(sort -n running.log | tail -1)
[ "${most:-9}" -le 2 ] || fail "the array ran $most tasks at once under its limit of 2"
best_task="" best=9
for t in 0 1 2 3; do
    st=$(job_field "${job}_$t" JobState)
    loss=$(sed -n 's/^done at step [0-9]* loss //p' "trial.$t.out" | tail -1)
    [ -n "$loss" ] || loss=9
    echo "    task $t: $st (final loss $loss)"
    [ "$st" = COMPLETED ] || fail "task $t ended $st"
    if awk -v a="$loss" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$loss; best_task=$t; fi
done
[ "$best_task" = 0 ] || fail "the sweep's best is task $best_task, not the bloomer"
pass "all four completed, at most $most at once; the bloomer went on from step $rs and ended best (loss $best)"

# Control: the same sweep without a task limit on the same four free GPUs: all four run at once,
# nothing waits, nothing is paused.
paused_before=$(grep -c "pausing job" "$log")
job2=$(SWEEP=b submit --array=0-3 --gres=gpu:1 --explore=free --explore-max-steps=1500 --open-mode=append \
    -o "free.%a.out" ./trial.sh)
wait_until 30 '[ "$(running $job2)" = 4 ]' "the unlimited sweep's four tasks to run"
wait_until 30 '[ "$(tail -1 acks.b.0 2>/dev/null || echo 0)" -ge 600 ]' "the second bloomer to pass step 600"
[ "$(grep -c "pausing job" "$log")" = "$paused_before" ] ||
    fail "a trial of the sweep without a task limit was paused: $(grep -h "pausing job" "$log" | tail -1)"
pass "without a task limit: four tasks at once, the bloomer past step $(tail -1 acks.b.0) unpaused"
scancel "$job2"
