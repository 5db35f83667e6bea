#!/bin/bash
# Attack: the owner of a paused trial (requeued and held with its checkpoint by ExplSched, see
# test_pause_resume.sh) tries to get it back ahead of another user's trials, and that other user
# tries to meddle with it. Two real users on a full cluster (one node, three GPUs): A's sweep (two
# flat trials and a leader) runs, B's sweep (three trials) arrives, A's two flat trials are paused
# for B's. Then, each asserted:
#  (b) B's `scontrol release`/`update` of A's paused trial are refused by Slurm: nothing changes;
#  (a) A's `scontrol release` of their paused trial (Slurm lets an owner release a requeue hold):
#      ExplSched sees the pause ended by its owner, ranks the trial as any pending one, below B's
#      pending trial, and never lets it take B's GPUs; it is not paused again (pause_max=1);
#  (c) A's `scontrol hold` of that trial, then release: a user's hold is never released by
#      ExplSched; after A's release it is ranked as before;
#  (d) A floods reports to the other, still paused, trial (claiming a loss of 0): the reports are
#      rate-limited as any, slurmctld stays up, the trial stays paused (B's pending trial wants
#      the GPUs), B's trials keep their ranks.
# Prints the priorities (squeue %Q), states and SystemComments it compared.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
require_users
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x "$top_builddir/src/cli/explsched" ] || skip "the explsched CLI not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
/usr/bin/python3 -c 'import ctypes; ctypes.CDLL("libmunge.so.2")' 2>/dev/null || skip "libmunge.so.2 missing"
A=esh_pause_a$$
B=esh_pause_b$$
make_user $A
make_user $B
start_cluster --nodes 1 --gpus 3 --explschedd \
    --params rerank_period=1,min_run=0,grace_time=3,hopeless_probability=0,min_expected_gain=0,hopeless_action=requeue
log=$CLUSTER_DIR/log/slurmctld.log
# The users' clients read slurm.conf and talk to the test cluster's munged.
chmod o+x "$CLUSTER_DIR" "$CLUSTER_DIR/munge" 2>/dev/null
chmod o+r "$SLURM_CONF" "$CLUSTER_DIR"/*.conf 2>/dev/null
work=$CLUSTER_DIR/tmp # mode 1777: the users' jobs keep their checkpoints there
read_slurm_user_uid

as() {  # as USER CMD...: CMD as USER with the environment Slurm's and ExplSched's clients need
    local u=$1
    shift
    as_user "$u" env SLURM_CONF="$SLURM_CONF" EXPLSCHED_MUNGE_SOCKET="$EXPLSCHED_MUNGE_SOCKET" \
        EXPLSCHED_REPORT_PORT="$EXPLSCHED_REPORT_PORT" EXPLSCHED_CONF="${EXPLSCHED_CONF:-}" \
        EXPLSCHED_REPORT_UID="$slurm_user_uid" PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
comment() { scontrol show job "$1" | sed -n 's/^ *SystemComment=//p'; }
prio() { job_field "$1" Priority; }
show() {  # show LABEL JOB...
    local label=$1 j
    shift
    for j in "$@"; do
        printf '    %-8s %-8s %-7s %-8s prio %-10s restarts %s  %s\n' "$label" "$j" "$(job_field "$j" UserId | cut -d'(' -f1 | cut -c1-7)" \
            "$(job_field "$j" JobState)" "$(prio "$j")" "$(job_field "$j" Restarts)" "$(comment "$j" | cut -c1-110)"
    done
}

# A's sweep: tasks 0 and 1 flat (loss ~0.6), task 2 the leader (ends near 0.3); B's sweep: three
# steady learners (ending near 0.25, 0.28, 0.31), worth more than A's flat ones all along, so that
# no utility rule would give A's flat trials B's GPUs. 6,000 steps of 10 every 0.2 s (two
# minutes), so that all stays in place while the attacks run.
cat >trial.sh <<EOS
#!/bin/bash
case \$SWEEP\$SLURM_ARRAY_TASK_ID in
    a0|a1) args="--a 0.6 --b 0.3" ;;
    a2) args="--a 0.25 --b 3" ;;
    *) args="--a 0.\$((25 + 3 * SLURM_ARRAY_TASK_ID)) --b 3" ;;
esac
exec /usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py \$args --steps 6000 --every 0.2 \\
    --checkpoint $work/ckpt.\$SLURM_JOB_ID
EOS
chmod 755 trial.sh
sweep=(--array=0-2 --gres=gpu:1 --explore-max-steps=6000)
ja=$(submit_as $A "${sweep[@]}" --explore=asweep --export=ALL,SWEEP=a "$work/trial.sh") || fail "sbatch as $A"
wait_until 30 '[ "$(squeue -h -j $ja -t RUNNING -o %i | wc -l)" = 3 ]' "A's three trials running"
sleep 4 # some points first: B's sweep arrives on a full cluster
jb=$(submit_as $B "${sweep[@]}" --explore=bsweep --export=ALL,SWEEP=b "$work/trial.sh") || fail "sbatch as $B"
wait_until 60 '[ "$(squeue -h -j $ja -t PENDING -o %i | wc -l)" = 2 ]' "A's two flat trials to be paused"
p0=$(job_field "${ja}_0" JobId)
p1=$(job_field "${ja}_1" JobId)
for p in $p0 $p1; do
    grep -q "pausing job $p " "$log" || fail "job $p is pending but was not paused by ExplSched"
done
wait_until 20 '[ "$(job_field $p0 Priority)" = 0 ] && [ "$(job_field $p1 Priority)" = 0 ] &&
    [ "$(squeue -h -j $jb -t RUNNING -o %i | wc -l)" = 2 ] && [ "$(squeue -h -j $jb -t PENDING -o %i | wc -l)" = 1 ]' \
    "A's two trials held, two of B's running, one pending"
wait_until 20 'comment $p0 | grep -q "decision=pause" && comment $p1 | grep -q "decision=pause"' \
    "the paused trials' SystemComment"
b_pending=$(squeue -h -j "$jb" -t PENDING -o %i) # an array task id (the pending task's record)
b_running=$(squeue -h -j "$jb" -t RUNNING -o %i | tr '\n' ' ')
echo "paused by ExplSched (A's $p0 and $p1 for B's sweep $jb):"
show paused "$p0" "$p1" $b_running "$b_pending"
pass "A's flat trials $p0 and $p1 paused: $(job_field $p0 Reason), $(comment $p0 | sed 's/.* reason=//' | cut -c1-120)"

# (b) B meddles with A's paused trial: Slurm refuses, nothing changes.
for cmd in "release $p0" "update jobid=$p0 priority=100000" "update jobid=$p0 nice=-10000" \
    "requeue $p0" "uhold $p0" "hold $p0" "update jobid=$p0 starttime=now"; do
    out=$(as $B scontrol $cmd 2>&1) && fail "user B's 'scontrol $cmd' on A's paused job succeeded: $out"
    echo "    B: scontrol $cmd -> $out"
done
sleep 2
[ "$(job_field $p0 JobState)" = PENDING ] && [ "$(job_field $p0 Priority)" = 0 ] ||
    fail "A's paused job changed after B's attempts: $(job_field $p0 JobState), priority $(job_field $p0 Priority)"
grep -q "job $p0: the hold of its pause was released or replaced" "$log" &&
    fail "ExplSched saw the pause of $p0 ended after B's refused attempts"
comment $p0 | grep -q "decision=pause" || fail "A's paused trial's SystemComment changed: $(comment $p0)"
pass "(b) B's release/update/hold/requeue of A's paused $p0 refused by Slurm; still paused ($(job_field $p0 Reason))"

b_undisturbed() {  # B's running trials still run, never requeued
    local j
    for j in $b_running; do
        [ "$(job_field "$j" JobState)" = RUNNING ] && [ "$(job_field "$j" Restarts)" = 0 ] ||
            fail "B's trial $j was disturbed: $(job_field "$j" JobState), restarts $(job_field "$j" Restarts)"
    done
}
below_b() {  # below_b JOB: JOB's priority is above 0 and below B's pending trial's
    local pa pb
    pa=$(prio "$1")
    pb=$(prio "$b_pending")
    [ "$pa" -gt 0 ] && [ "$pa" -lt "$pb" ] || fail "A's $1 (priority $pa) is not ranked below B's pending $b_pending ($pb)"
}

# (a) A releases their own paused trial: Slurm allows it (a requeue hold is a user hold). ExplSched
# notes that the pause is over and ranks the trial as any pending one: below B's pending trial.
# Preemptions decided so far (the pause itself may have gone through Slurm's preemption of A's
# trials for B's): none may be decided from here on.
preempted_before=$(grep -c "may preempt job" "$log" || true)
out=$(as $A scontrol release "$p0" 2>&1) || fail "A's own 'scontrol release $p0' refused: $out"
wait_until 20 'grep -q "job $p0: the hold of its pause was released or replaced" "$log"' \
    "ExplSched to see that A ended the pause of $p0"
wait_until 20 '[ "$(prio $p0)" -gt 0 ] && ! comment $p0 | grep -q "decision=pause"' "A's released $p0 to be ranked"
sleep 6 # several rounds: a GPU taken from B would show now
show released "$p0" $b_running "$b_pending"
[ "$(job_field $p0 JobState)" = PENDING ] || fail "A's released $p0 is $(job_field $p0 JobState), not pending"
below_b "$p0"
b_undisturbed
[ "$(grep -c "may preempt job" "$log" || true)" = "$preempted_before" ] ||
    fail "a preemption was decided after the release: $(grep -h "may preempt job" "$log" | tail -1)"
[ "$(grep -c "pausing job $p0 " "$log")" = 1 ] || fail "A's $p0 was paused again after its owner released it"
pass "(a) A's release of paused $p0: the pause ended (ledger: resumed), ranked below B's pending $b_pending ($(prio $p0) < $(prio $b_pending)), B's running trials untouched; $(comment $p0 | sed 's/.*decision=//' | cut -c1-100)"

# (c) A holds the released trial, then releases it: ExplSched never releases a user's hold.
out=$(as $A scontrol hold "$p0" 2>&1) || fail "A's own 'scontrol hold $p0' refused: $out"
sleep 5
[ "$(job_field $p0 JobState)" = PENDING ] && [ "$(prio $p0)" = 0 ] ||
    fail "A's hold of $p0 did not stay: $(job_field $p0 JobState), priority $(prio $p0)"
grep -q "resuming paused job $p0 " "$log" && fail "ExplSched released A's own hold of $p0"
out=$(as $A scontrol release "$p0" 2>&1) || fail "A's 'scontrol release $p0' after the hold refused: $out"
wait_until 20 '[ "$(prio $p0)" -gt 0 ]' "A's $p0 ranked again after the release"
sleep 3
below_b "$p0"
b_undisturbed
pass "(c) A's hold of $p0 kept by ExplSched over 5 rounds (Reason=held by its owner); released: priority $(prio $p0), below B's $(prio $b_pending)"

# (d) A claims a loss of 0 for the trial still paused ($p1), then floods it with reports (steps
# far past its end): each report counts as any report does (rate limits, steps only forward),
# slurmctld stays up, and what A's lies buy hurts only A (the trial is not resumed while B's
# trials fill the cluster; A's own trials may now look hopeless next to the claimed 0), never B.
pb_before=$(prio "$b_pending")
claims=0
for s in $(seq 3000 100 5900); do
    as $A "$top_builddir/src/cli/explsched" report --retries 1 --job "$p1" --step "$s" --metric 0 >/dev/null 2>&1 &&
        claims=$((claims + 1))
done
sleep 3
show claimed "$p1"
as $A /usr/bin/python3 "$top_srcdir/testsuite/hostile/report_attack.py" "127.0.0.1:$EXPLSCHED_REPORT_PORT" \
    "$EXPLSCHED_MUNGE_SOCKET" flood "$p1" 3000 3 2 >flood.out 2>&1
echo "    A's claims of loss 0 accepted: $claims of 30; flood: $(cat flood.out)"
sleep 4
show flooded "$p1" "$p0" $b_running "$b_pending"
scontrol ping | grep -q "is UP" || fail "slurmctld is down after the flood: $(scontrol ping 2>&1)"
[ "$claims" -gt 0 ] || fail "none of A's claims for $p1 was accepted: the attack did not happen"
grep -q "retry:rate_limited" flood.out || fail "A's flood was never rate-limited: $(cat flood.out)"
[ "$(job_field $p1 JobState)" = PENDING ] || fail "A's flooded $p1 is $(job_field $p1 JobState), not pending"
grep -q "resuming paused job $p1 " "$log" && fail "A's flooded $p1 was resumed on B's GPUs"
b_undisturbed
pb_after=$(prio "$b_pending")
[ "$pb_after" -ge "$pb_before" ] || fail "B's pending $b_pending lost rank: priority $pb_before -> $pb_after"
below_b "$p0"
pass "(d) $claims claims of loss 0 and a flood to paused $p1: not resumed ($(comment $p1 | sed 's/.*decision=//' | cut -c1-90)); B's trials untouched, B's pending priority $pb_before -> $pb_after"

# (c') A holds the trial that is still paused: the hold lands on a job that is already held.
out=$(as $A scontrol hold "$p1" 2>&1)
rc=$?
sleep 3
echo "    A: scontrol hold $p1 (paused) -> rc $rc $out; $(job_field $p1 Reason); ExplSched: $(grep -h "job $p1: the hold" "$log" | tail -1 | cut -d' ' -f2- | cut -c1-80)"
[ "$(job_field $p1 JobState)" = PENDING ] && [ "$(prio $p1)" = 0 ] || fail "A's hold of held $p1 released it"
b_undisturbed
pass "(c) A's hold of the still-paused $p1 keeps it held; B's trials untouched"
