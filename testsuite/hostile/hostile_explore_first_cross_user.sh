#!/bin/bash
# Attack: with explore first on (explore_first_progress), a pending trial that has never reported
# makes the running followers of its sweep give way. User B names A's sweep (--explore=shared, the
# same name as A's) and submits untried trials on a full cluster, to get A's running trials paused
# for B's. Sweeps are per user (uid:name), so nothing of A's is paused and A's trials run on,
# never requeued. Control: A's own untried trial in the same sweep does get A's follower paused
# (the mechanism was on all along). Two real users, one node, two GPUs.
set -u
. "$(dirname "$0")/lib.sh"
two_users esh_xf
start_cluster --nodes 1 --gpus 2 --explschedd \
    --params rerank_period=1,min_run=0,grace_time=3,hopeless_probability=0,min_expected_gain=0,hopeless_action=requeue,explore_first_progress=0.1
log=$CLUSTER_DIR/log/slurmctld.log
open_to_users

# Near ties (no rule but explore first would pause one): 6,000 steps, 10 every 0.1 s (a minute).
cat >"$work/trial.sh" <<EOS
#!/bin/bash
exec /usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py --a 0.30\$SLURM_ARRAY_TASK_ID --b 3 \\
    --steps 6000 --every 0.1 --checkpoint $work/ckpt.\$SLURM_JOB_ID
EOS
chmod 755 "$work/trial.sh"
sweep=(--gres=gpu:1 --explore=shared --explore-max-steps=6000)
ja=$(submit_as $A --array=0-1 "${sweep[@]}" "$work/trial.sh") || fail "sbatch as $A"
wait_until 30 '[ "$(squeue -h -j $ja -t RUNNING -o %i | wc -l)" = 2 ]' "A's two trials running"
a0=$(job_field "${ja}_0" JobId)
a1=$(job_field "${ja}_1" JobId)
sleep 9 # both past 10 % of their runs (600 of 6,000 steps)

# B's untried trials, in a sweep of B's own name "shared", wait for the GPUs A holds.
jb=$(submit_as $B --array=0-3 "${sweep[@]}" "$work/trial.sh") || fail "sbatch as $B"
sleep 12 # a dozen re-ranking rounds
for j in $a0 $a1; do
    grep -q "pausing job $j " "$log" && fail "A's job $j was paused for B's untried trials: $(grep "pausing job $j " "$log" | head -1)"
    { [ "$(job_field "$j" JobState)" = RUNNING ] && [ "$(job_field "$j" Restarts)" = 0 ]; } ||
        fail "A's job $j is $(job_field "$j" JobState), restarts $(job_field "$j" Restarts)"
done
[ "$(squeue -h -j "$jb" -t RUNNING -o %i | wc -l)" = 0 ] || fail "B's trials took A's GPUs"
pass "B's untried trials in a sweep named like A's paused nothing of A's (both running, no restart)"

# Control: A's own untried trial in A's sweep makes A's follower give way.
jc=$(submit_as $A --array=5 "${sweep[@]}" "$work/trial.sh") || fail "sbatch as $A (control)"
wait_until 30 'grep -q "pausing job \($a0\|$a1\) " "$log"' "A's follower to be paused for A's own untried trial"
line=$(grep -h "pausing job \($a0\|$a1\) " "$log" | head -1)
echo "$line" | grep -q "its sweep's untried trials wait" || fail "the pause is not explore first's: $line"
pass "control: $(echo "$line" | cut -d' ' -f2- | cut -c1-200)"
scancel "$ja" "$jb" "$jc" 2>/dev/null
