#!/bin/bash
# Attack: the near-tie rule (min_expected_gain, 0.005 by default) stops a trial, other than its
# sweep's leader, that is expected to improve its sweep's best by under 0.5 % of the sweep's metric
# range. User B names A's sweep (--explore=shared, the same name as A's) and runs a trial that
# ends a hair better than A's, so that A's trial, alone in its sweep and so its leader, looks like
# a near twin of B's and is stopped. Sweeps are per user (uid:name): A's trial in "shared" is
# never judged hopeless nor paused, and completes. Control: the same better trial in A's own sweep
# "own" gets A's array tasks judged near ties ("is expected to improve the group's best" in their
# SystemComment, then paused or cancelled, and `explsched why` explains it): the rule was on all
# along, and it acts on array tasks. Two real users, one node, four GPUs, the default
# min_expected_gain; hopeless_probability=1e-9 so that the chance rules (the trials' noise-free
# curves have narrow intervals) cannot stop a trial first: a verdict here is the near-tie rule's.
set -u
. "$(dirname "$0")/lib.sh"
two_users esh_nt
start_cluster --nodes 1 --gpus 4 --explschedd --params rerank_period=1,min_run=0,hopeless_probability=1e-9
log=$CLUSTER_DIR/log/slurmctld.log
open_to_users
grep -q "min_expected_gain" "$SLURM_CONF" && fail "the test cluster sets min_expected_gain: the default is under test"

# Trials: power_trial_as (lib.sh), loss = A + step^-0.5 over 1000 steps. Loss 0.300 ends at
# 0.3316, loss 0.304 at 0.3356: 1.3 % of the sweep's range (from 0.62 at step 10) short, an
# expected gain far under 0.5 % of the range. Reports every 0.05-0.1 s (all of them recorded, a
# few assessments per run past 35 %).

# The attack: B's slightly better trial in B's "shared" ends first; then A's in A's "shared".
b=$(power_trial_as $B shared b 0.300 0.05) || fail "sbatch as $B"
wait_until 60 'ended $b' "B's trial to end"
[ "$(state_of "$b")" = COMPLETED ] || fail "B's trial ended $(state_of "$b")"
a=$(power_trial_as $A shared a 0.304 0.1) || fail "sbatch as $A"
seen=""
for ((i = 0; i < 400; i++)); do
    c=$(comment "$a")
    case $c in *state=hopeless* | *decision=pause*) seen=$c ;; esac
    ended "$a" && break
    sleep 0.3
done
[ -z "$seen" ] || fail "A's trial $a in a sweep named like B's was judged hopeless or paused: $seen"
[ "$(state_of "$a")" = COMPLETED ] || fail "A's trial $a ended $(state_of "$a") at step $(step_of a.0): $(comment "$a")"
grep -q "job $a\b.*expected to improve" "$log" && fail "slurmctld judged A's trial a near tie: $(grep "job $a\b" "$log" | tail -1)"
pass "A's trial $a (loss 0.304 + step^-0.5) completed: B's near twin (0.300 + ...) in B's sweep of the same name did not count"

# Control: A's own slightly better trial in "own" ends first; A's array tasks are then near ties.
c=$(power_trial_as $A own c 0.300 0.05) || fail "sbatch as $A (control)"
wait_until 60 'ended $c' "A's better trial to end"
arr=$(power_trial_as $A own p 0.304 0.1 --array=0-1) || fail "sbatch --array as $A (control)"
for t in 0 1; do
    why=""
    for ((i = 0; i < 600; i++)); do
        c=$(comment "${arr}_$t")
        case $c in *"is expected to improve the group's best"*) why=$c && break ;; esac
        ended "${arr}_$t" && break
        sleep 0.2
    done
    [ -n "$why" ] || fail "control: task ${arr}_$t (state $(state_of "${arr}_$t"), step $(step_of p.$t)) was never judged a near tie: $(comment "${arr}_$t")"
    case $why in
        *state=hopeless* | *decision=pause*) ;;
        *) fail "control: task ${arr}_$t's near-tie verdict neither stops nor pauses it: $why" ;;
    esac
    pass "control: task ${arr}_$t judged a near tie at step $(step_of p.$t) of 1000: $(echo "$why" | grep -o 'reason=.*' | cut -c1-200)"
done
# explsched why, on a task the rule has judged (held or cancelled: its last assessment stays)
why_says "${arr}_0" "min_expected_gain (0.005)"
for t in 0 1; do scancel "${arr}_$t" 2>/dev/null; done
true
