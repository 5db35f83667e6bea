#!/bin/bash
# Attack: a trial that ExplSched paused and then resumed is kept for one grace (min_run) before a
# verdict on its forecast (resumed_grace: a resume pays for a restart, so it is let run to show
# more of its curve). Its owner, a real unprivileged user, requeues it (`scontrol requeue`, which
# Slurm allows an owner) while it is kept only for that grace, to restart it and win a new one,
# and again a fresh min_run of GPU time for a trial the engine judged hopeless.
# Asserted: the requeued trial gets no new grace: it is cancelled (its --explore-on-hopeless)
# well before min_run has passed since the requeue, SystemComment never shows a second
# resumed_grace for it, and the sweep's other trials are untouched. (Here the engine's next round
# usually finds it pending, before Slurm restarts it, and cancels it there; a restart seen by a
# round first gets no grace either: test_sched_pause covers that path, one grace per pause.)
#
# One user, one node, two GPUs, an array sweep of three 6,000-step trials (100 steps a second):
# task 0 flat (loss ~0.6), task 1 a leader that ends at step 4,000, task 2 the sweep's best,
# waiting for a GPU. Settings: min_run=30 (the grace), pause_probability=0.2 and
# hopeless_min_progress=0.6 so that task 0 is paused (not stopped) at about half its run and
# judged hopeless only after its resume; early_stop_probability=0 and audited_min_progress=1 so
# that no earlier final stop comes first; min_expected_gain=0 (no near-tie rule).
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
require_users
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
A=esh_regrace_a$$
make_user $A
start_cluster --nodes 1 --gpus 2 --explschedd \
    --params rerank_period=1,min_run=30,grace_time=3,pause_probability=0.2,hopeless_min_progress=0.6,early_stop_probability=0,audited_min_progress=1,min_expected_gain=0
log=$CLUSTER_DIR/log/slurmctld.log
open_to_users
as() {  # as USER CMD...: CMD as USER with Slurm's client environment
    local u=$1
    shift
    as_user "$u" env SLURM_CONF="$SLURM_CONF" PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

cat >"$work/trial.sh" <<EOS
#!/bin/bash
case \$SLURM_ARRAY_TASK_ID in
    0) args="--a 0.6 --b 0.3 --steps 6000" ;;
    1) args="--a 0.25 --b 3 --steps 4000" ;;
    *) args="--a 0.2 --b 3 --steps 6000" ;;
esac
exec $trial \$args --every 0.1 --checkpoint $work/ckpt.\$SLURM_ARRAY_TASK_ID
EOS
chmod 755 "$work/trial.sh"
job=$(submit_as $A --array=0-2 --gres=gpu:1 --explore=regrace --explore-max-steps=6000 \
    --explore-on-hopeless=cancel "$work/trial.sh") || fail "sbatch as $A"
flat="${job}_0"

wait_until 120 'grep -q "pausing job $(job_field $flat JobId) " "$log"' "task 0 (flat) to be paused"
id=$(job_field "$flat" JobId)
pass "paused: $(grep -h "pausing job $id " "$log" | head -1 | cut -d' ' -f2- | cut -c1-200)"
wait_until 120 'grep -q "resuming paused job $id " "$log"' "task 0 to be resumed once task 1 ended"
pass "resumed: $(grep -h "resuming paused job $id " "$log" | head -1 | cut -d' ' -f2- | cut -c1-200)"
wait_until 60 'comment $flat | grep -q "no verdict on its forecast before min_run"' \
    "task 0 judged hopeless but kept for its grace after the resume (resumed_grace)"
graced=$(comment "$flat")
started=$(job_field "$flat" StartTime)
pass "kept for its grace: $(echo "$graced" | sed 's/.* reason=//' | cut -c1-200)"
[ "$(job_state $flat)" = RUNNING ] || fail "task 0 is $(job_state $flat), not running, in its grace"

# The attack: the owner requeues the trial within its grace, for a new start and a new grace.
out=$(as $A scontrol requeue "$id" 2>&1) || fail "$A's own 'scontrol requeue $id' refused: $out"
t0=$SECONDS
echo "    $A: scontrol requeue $id (started $started) -> ok"
regraced=0 seen=""
while [ $((SECONDS - t0)) -lt 60 ]; do
    st=$(job_field "$flat" JobState)
    [ "$st" = CANCELLED ] && break
    seen="$seen${seen:+,}$st"
    c=$(comment "$flat")
    if echo "$c" | grep -q "no verdict on its forecast before min_run" &&
        [ "$(job_field "$flat" StartTime)" != "$started" ] && [ "$st" = RUNNING ]; then
        regraced=1
        echo "    a new grace after the requeue: $st since $(job_field "$flat" StartTime): $c"
    fi
    sleep 1
done
waited=$((SECONDS - t0))
[ "$regraced" = 0 ] || fail "the requeued trial $id was given a new grace after its owner's requeue"
[ "$(job_field "$flat" JobState)" = CANCELLED ] ||
    fail "the requeued trial $id is $(job_field "$flat" JobState) after ${waited} s, not cancelled: $(comment "$flat")"
[ "$waited" -lt 25 ] || fail "the requeued trial $id was cancelled only after $waited s (min_run 30 s: a new grace)"
line=$(grep -h "cancelling .* job $id:" "$log" | tail -1)
[ -n "$line" ] || fail "no 'cancelling job $id' by ExplSched in slurmctld's log"
pass "requeued by its owner, cancelled ${waited} s later (states seen: ${seen:-none}) without a new grace: $(echo "$line" | cut -d' ' -f2- | cut -c1-220)"

# The sweep's best (task 2) ran on undisturbed and completes.
wait_until 90 '[ "$(job_field ${job}_2 JobState)" = COMPLETED ]' "task 2 (the sweep's best) to complete"
[ "$(job_field "${job}_2" Restarts)" = 0 ] || fail "task 2 was restarted: $(job_field "${job}_2" Restarts)"
pass "task 2 completed, never restarted; task 1 $(job_field "${job}_1" JobState)"
