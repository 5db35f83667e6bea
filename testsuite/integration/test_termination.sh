#!/bin/bash
# Termination: a trial whose predicted final metric cannot beat its sweep's best is stopped as its
# --explore-on-hopeless says: cancel (CANCELLED), requeue (requeued and held), none (keeps running,
# marked preemptable). The reason is in `scontrol show job` and in slurmctld's log. The
# promising trial of the sweep is left alone, and so is a trial with the same hopeless curve that
# declared a learning-rate drop ahead (--explore-lr-drops).
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
start_cluster --nodes 1 --gpus 4 --explschedd --params rerank_period=1,min_run=0
trial="/usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py"
run_trial() {  # run_trial NAME ON_HOPELESS A
    submit --gres=gpu:1 --explore=sweep --explore-max-steps=2000 --explore-on-hopeless="$2" -o "$1.out" \
        --wrap "$trial --a $3 --b 1.0 --steps 2000 --every 0.25 --checkpoint $PWD/$1.ckpt"
}
best=$(run_trial best cancel 0.05)
cancel=$(run_trial cancel cancel 0.9)
requeue=$(run_trial requeue requeue 0.9)
none=$(run_trial none none 0.9)

wait_until 60 '[ "$(job_field $cancel JobState)" = CANCELLED ]' "the hopeless trial with --explore-on-hopeless=cancel to be cancelled"
c=$(scontrol show job "$cancel" | sed -n 's/^ *SystemComment=//p')
echo "$c" | grep -q "state=hopeless" || fail "cancelled trial's SystemComment lacks state=hopeless: $c"
# the hopeless rule that fired names the sweep's best it was measured against
echo "$c" | grep -Eq "(cannot beat|expected to improve) the group's best [0-9.]+" || fail "no reason in SystemComment: $c"
grep -q "cancelling hopeless job $cancel" "$CLUSTER_DIR/log/slurmctld.log" || fail "cancellation not logged"
pass "cancel: job $cancel CANCELLED; $c"

wait_until 30 '[ "$(job_field $requeue Restarts)" -ge 1 ] && [ "$(job_field $requeue Priority)" = 0 ]' \
    "the hopeless trial with --explore-on-hopeless=requeue to be requeued and held"
# Slurm 24.11 counts the restart and holds the job while its old allocation is still COMPLETING
# (a few seconds on a loaded machine); 22.05 shows PENDING at once.
wait_until 30 '[ "$(job_state $requeue)" != COMPLETING ]' "the requeued trial to finish COMPLETING"
[ "$(job_state $requeue)" = PENDING ] || fail "requeued trial is $(job_state $requeue), not PENDING"
sleep 3
[ "$(job_state $requeue)" = PENDING ] || fail "the held trial started again"
grep -q "requeueing and holding hopeless job $requeue" "$CLUSTER_DIR/log/slurmctld.log" || fail "requeue-hold not logged"
pass "requeue: job $requeue PENDING, held (Priority=0, Reason=$(job_field $requeue Reason))"

wait_until 20 'scontrol show job $none | grep -q "SystemComment=.*state=hopeless"' "the third hopeless trial to be marked"
[ "$(job_state $none)" = RUNNING ] || fail "the trial with --explore-on-hopeless=none was stopped"
scontrol show job "$none" | grep -q "decision=preemptable" || fail "hopeless trial with none not preemptable"
pass "none: job $none keeps running, marked hopeless and preemptable"

# The same hopeless curve with a learning-rate drop declared ahead (--explore-lr-drops=1950): no
# verdict before it has run 5 % of its run past it (step 2050, beyond its last), so it runs to its
# end (on the GPU the cancelled trial freed).
declared=$(submit --gres=gpu:1 --explore=sweep --explore-max-steps=2000 --explore-on-hopeless=cancel \
    --explore-lr-drops=1950 -o declared.out --wrap "$trial --a 0.9 --b 1.0 --steps 2000 --every 0.25 --checkpoint $PWD/declared.ckpt")
wait_until 120 '[ "$(job_field $declared JobState)" = COMPLETED ] || [ "$(job_field $declared JobState)" = CANCELLED ]' \
    "the trial with a declared drop ahead to end"
d=$(scontrol show job "$declared" | sed -n 's/^ *SystemComment=//p')
[ "$(job_field $declared JobState)" = COMPLETED ] || fail "the trial with a declared drop was stopped: $d"
grep -Eq "hopeless job $declared([^0-9]|$)" "$CLUSTER_DIR/log/slurmctld.log" && fail "the trial with a declared drop was judged hopeless"
echo "$d" | grep -q "lr_drops=1950" || fail "SystemComment lacks lr_drops=1950: $d"
pass "declared drop: job $declared, the same curve, ran to its end; $d"

[ "$(job_state $best)" = RUNNING ] || [ "$(job_field $best JobState)" = COMPLETED ] || fail "the best trial was stopped"
scontrol show job "$best" | grep -q "state=hopeless" && fail "the best trial was called hopeless"
pass "the best trial $best runs on: $(scontrol show job $best | sed -n 's/^ *SystemComment=//p')"
