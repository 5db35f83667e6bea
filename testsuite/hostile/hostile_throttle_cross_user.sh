#!/bin/bash
# Attack: a job array's waiting tasks that cannot start. User A submits a sweep as an array with a
# task limit of 1 (--array=0-7%1): one task runs, the other seven wait for its slot (slurmctld's
# JobArrayTaskLimit), however many GPUs free up. On a full cluster they looked like trials wanting
# GPUs, so the round paused an unlikely running trial of user B to make room, and the GPU it freed
# was of no use to A's tasks (measured before the fix: B's trial paused within seconds, its GPU
# idle). Now waiting tasks of an array at its limit want a slot of their own array, not a GPU: B's
# trial runs on, never requeued. Control: A's own unlimited array, submitted once A's limited one
# is gone, does get B's unlikely trial paused for its tasks (the pause rule was on all along).
# Two real users, one node, three GPUs.
set -u
. "$(dirname "$0")/lib.sh"
two_users esh_th
start_cluster --nodes 1 --gpus 3 --explschedd \
    --params rerank_period=1,min_run=0,grace_time=3,hopeless_probability=0,min_expected_gain=0,hopeless_action=requeue
log=$CLUSTER_DIR/log/slurmctld.log
open_to_users

# B's sweep: task 0 a good curve (loss to 0.30), task 1 a poor one (loss to 0.80): task 1's chance
# to beat task 0 is next to nothing. 6,000 steps, 10 every 0.1 s (a minute).
cat >"$work/trial.sh" <<EOS
#!/bin/bash
case \$SLURM_ARRAY_TASK_ID in 1) a=0.80 ;; *) a=0.30 ;; esac
exec /usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py --a \$a --b 3 \\
    --steps 6000 --every 0.1 --checkpoint $work/ckpt.\$SLURM_JOB_ID
EOS
chmod 755 "$work/trial.sh"
jb=$(submit_as $B --array=0-1 --gres=gpu:1 --explore=bsweep --explore-max-steps=6000 "$work/trial.sh") ||
    fail "sbatch as $B"
wait_until 30 '[ "$(squeue -h -j $jb -t RUNNING -o %i | wc -l)" = 2 ]' "B's two trials running"
b1=$(job_field "${jb}_1" JobId)

# A's sweep with a task limit of 1 takes the third GPU; its seven other tasks wait for that slot.
ja=$(submit_as $A --array=0-7%1 --gres=gpu:1 --explore=asweep --explore-max-steps=6000 "$work/trial.sh") ||
    fail "sbatch as $A"
wait_until 30 '[ "$(squeue -h -j $ja -t RUNNING -o %i | wc -l)" = 1 ]' "A's first task running"
wait_until 30 'squeue -h -j $ja -t PENDING -o %r | grep -q JobArrayTaskLimit' "A's other tasks to wait for the task limit"
sleep 15 # fifteen re-ranking rounds, B's poor trial well past its pause_min_progress
grep -q "pausing job $b1 " "$log" &&
    fail "B's trial $b1 was paused for A's tasks that could not start: $(grep "pausing job $b1 " "$log" | head -1)"
{ [ "$(job_field "$b1" JobState)" = RUNNING ] && [ "$(job_field "$b1" Restarts)" = 0 ]; } ||
    fail "B's trial $b1 is $(job_field "$b1" JobState), restarts $(job_field "$b1" Restarts)"
[ "$(squeue -h -j "$ja" -t RUNNING -o %i | wc -l)" = 1 ] || fail "A's array ran more than its one task"
pass "A's seven tasks waiting for their array's slot paused nothing of B's ($b1 running, no restart)"

# Control: the same tasks without a limit do want GPUs, and B's unlikely trial gives way to them.
scancel "$ja"
wait_until 30 '[ -z "$(squeue -h -j $ja -o %i)" ]' "A's limited array to be gone"
ja2=$(submit_as $A --array=0-3 --gres=gpu:1 --explore=asweep2 --explore-max-steps=6000 "$work/trial.sh") ||
    fail "sbatch as $A"
wait_until 30 'grep -q "pausing job $b1 " "$log"' "B's unlikely trial to be paused for A's unlimited tasks"
pass "control: for A's unlimited array, $(grep -h "pausing job $b1 " "$log" | head -1 | cut -d' ' -f2- | cut -c1-160)"
scancel "$ja2" "$jb"
