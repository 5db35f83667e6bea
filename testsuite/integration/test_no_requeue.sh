#!/bin/bash
# A trial that cannot be requeued (sbatch --no-requeue) is never paused: a pause is a requeue and
# hold, which slurmctld refuses for such a job. The same array sweep and settings as
# test_explore_first.sh, where explore first pauses a running trial for the sweep's untried
# tasks; here every task is submitted with --no-requeue, so none is paused: the running tasks go
# on, no act on them fails, the untried tasks start as GPUs free up, and all four complete. The
# action ledger keeps no pause for them (a pause recorded but never carried out would count
# against pause_max and keep the trial from ever being acted on again).
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
exec /usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py --a 0.30\$t --b 3 --steps 600 --stride 2 --every 0.1 \\
    --checkpoint \$PWD/ckpt.\$t --acks \$PWD/acks.\$t
EOS
chmod +x trial.sh
job=$(submit --array=0-3 --gres=gpu:1 --no-requeue --explore=norq --explore-max-steps=600 --open-mode=append \
    -o "trial.%a.out" ./trial.sh)
[ "$(job_field "${job}_0" Requeue)" = 0 ] || fail "task 0 is requeueable: $(scontrol show job "${job}_0" | grep -o 'Requeue=[0-9]*')"

# explore first would pause task 0 or 1 past 10 % of its run (step 60, a few seconds in); give it
# well past that, with rounds every second
wait_until 60 '[ "$(tail -1 acks.0 2>/dev/null || echo 0)" -ge 200 ] && [ "$(tail -1 acks.1 2>/dev/null || echo 0)" -ge 200 ]' \
    "tasks 0 and 1 to reach step 200"
sleep 5
if grep -q "pausing job" "$log"; then fail "a trial that cannot be requeued was paused: $(grep -h "pausing job" "$log" | head -1)"; fi
if grep -q "acting on job .* failed" "$log"; then fail "an act failed: $(grep -h "acting on job .* failed" "$log" | head -1)"; fi
for t in 0 1; do
    [ "$(job_state "${job}_$t")" = RUNNING ] || fail "task $t is $(job_state "${job}_$t"), not running"
done
pass "tasks 0 and 1 run on past step 200 unpaused; no act failed"
# the ledger: nothing recorded for the sweep (it lies under StateSaveLocation)
ledger=$(find "$CLUSTER_DIR" -name 'explsched_actions' 2>/dev/null | head -1)
if [ -n "$ledger" ] && grep -v '^explsched-actions' "$ledger" | grep -q .; then
    fail "the action ledger records acts on trials never acted on: $(cat "$ledger")"
fi
pass "the action ledger records no act${ledger:+ ($ledger)}"
why=$("$cli" why "${job}_0" 2>&1) || fail "explsched why ${job}_0 failed: $why"
echo "$why" | grep -q "cannot be requeued" || fail "explsched why does not say task 0 cannot be paused: $why"
pass "explsched why: $(echo "$why" | grep -m1 "cannot be requeued" | sed 's/^ *//')"

wait_until 240 '[ -z "$(squeue -h -j $job -o %i)" ]' "the sweep to finish"
for t in 0 1 2 3; do
    st=$(job_field "${job}_$t" JobState)
    [ "$st" = COMPLETED ] || fail "task $t ended $st"
    [ "$(tail -1 "acks.$t")" = 600 ] || fail "task $t's last reported step is $(tail -1 "acks.$t"), not 600"
    if grep -q "resumed from step" "trial.$t.out"; then fail "task $t was restarted: $(grep "resumed from step" "trial.$t.out" | head -1)"; fi
done
if grep -q "pausing job\|acting on job .* failed" "$log"; then fail "a pause or a failed act later: $(grep -h "pausing job\|acting on job .* failed" "$log" | head -1)"; fi
pass "all four tasks completed in one run each, none paused"
