#!/bin/bash
# Attack: decisive early stops (early_stop_probability, 0.001 by default) cancel a trial for good,
# before hopeless_min_progress (35 %) of its run, once its chance to beat its sweep's best is
# tiny. User B names A's sweep (--explore=shared, the same name as A's) and runs a trial whose
# loss is far below anything A's trials reach, so that A's trials look decisively behind and are
# cancelled early. Sweeps are per user (uid:name): A's trial in "shared" is never hopeless and
# completes. Control: the same fast trial in A's own sweep "own" gets A's array tasks cancelled
# early (before 35 % of their runs, "stopped before hopeless_min_progress" in their SystemComment
# and slurmctld's log): the rule was on all along, and it acts on array tasks. Two real users, one
# node, four GPUs, the default early_stop_* settings.
set -u
. "$(dirname "$0")/lib.sh"
two_users esh_es
start_cluster --nodes 1 --gpus 4 --explschedd --params rerank_period=1,min_run=0
log=$CLUSTER_DIR/log/slurmctld.log
open_to_users
grep -q "early_stop" "$SLURM_CONF" && fail "the test cluster sets early_stop_*: the defaults are under test"

# Trials: power_trial_as (lib.sh), loss = A + step^-0.5 over 1000 steps.

# The attack: B's excellent trial in B's "shared" ends first; then A's poor trial in A's "shared".
b=$(power_trial_as $B shared b 0.01 0.01) || fail "sbatch as $B"
wait_until 60 'ended $b' "B's trial to end"
[ "$(state_of "$b")" = COMPLETED ] || fail "B's trial ended $(state_of "$b")"
a=$(power_trial_as $A shared a 0.9 0.1) || fail "sbatch as $A"
seen=""
for ((i = 0; i < 400; i++)); do
    c=$(comment "$a")
    case $c in *state=hopeless*) seen=$c ;; esac
    ended "$a" && break
    sleep 0.3
done
[ -z "$seen" ] || fail "A's trial $a in a sweep named like B's was judged hopeless: $seen"
[ "$(state_of "$a")" = COMPLETED ] || fail "A's trial $a ended $(state_of "$a") at step $(step_of a.0): $(comment "$a")"
grep -q "cancelling hopeless job $a\b" "$log" && fail "slurmctld cancelled A's trial: $(grep "job $a\b" "$log" | tail -1)"
pass "A's trial $a (loss 0.9 + step^-0.5) completed: B's trial (loss 0.01 + ...) in B's sweep of the same name did not count"

# Control: A's own excellent trial in "own" ends first; A's poor array tasks are then cancelled early.
c=$(power_trial_as $A own c 0.01 0.01) || fail "sbatch as $A (control)"
wait_until 60 'ended $c' "A's excellent trial to end"
arr=$(power_trial_as $A own p 0.9 0.1 --array=0-1) || fail "sbatch --array as $A (control)"
for t in 0 1; do
    wait_until 120 "ended ${arr}_$t" "A's poor array task ${arr}_$t to end"
    st=$(state_of "${arr}_$t")
    step=$(step_of p.$t)
    why=$(comment "${arr}_$t")
    [ "$st" = CANCELLED ] || fail "control: task ${arr}_$t ended $st at step $step: $why"
    [ "$step" -lt 350 ] || fail "control: task ${arr}_$t was cancelled at step $step of 1000, not before 35 %: $why"
    case $why in
        *"stopped before hopeless_min_progress"*) ;;
        *) fail "control: task ${arr}_$t's SystemComment does not name the early rule: $why" ;;
    esac
    pass "control: task ${arr}_$t cancelled at step $step of 1000: $(echo "$why" | grep -o 'reason=.*' | cut -c1-200)"
done
why_says "${arr}_0" "early_stop_probability (0.001): decisive evidence"
grep -q "stopped before hopeless_min_progress" "$log" || fail "slurmctld's log does not name the early stop"
pass "slurmctld: $(grep -m1 "stopped before hopeless_min_progress" "$log" | cut -d' ' -f2- | cut -c1-220)"
