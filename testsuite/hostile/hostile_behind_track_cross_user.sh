#!/bin/bash
# Attack: the behind track (behind_track_margin, 0.1 by default) makes hopeless a trial, other than
# its sweep's leader, that runs below the path of the sweep's best trial at the same fractions of
# their runs. User B names A's sweep (--explore=shared, the same name as A's) and runs a trial
# whose loss runs well below A's all along, so that A's trial, alone in its sweep and so its
# leader, looks behind B's path and is stopped. Sweeps are per user (uid:name): A's trial in
# "shared" is never judged hopeless nor paused, and completes. Control: the same better trial in
# A's own sweep "own" gets A's array tasks judged behind its path ("behind the path of its
# group's best" in their SystemComment, then paused or cancelled, and `explsched why` explains
# it): the rule was on all along, and it acts on array tasks. Two real users, one node, four GPUs,
# the default behind_track_margin; interval_calibration=20 so that the forecast's own chance
# (the trials' noise-free curves have narrow intervals) cannot stop a trial first: a verdict here
# is the behind track's.
set -u
. "$(dirname "$0")/lib.sh"
two_users esh_bt
start_cluster --nodes 1 --gpus 4 --explschedd --params rerank_period=1,min_run=0,interval_calibration=20
log=$CLUSTER_DIR/log/slurmctld.log
open_to_users
grep -q "behind_track_margin" "$SLURM_CONF" && fail "the test cluster sets behind_track_margin: the default is under test"

# Trials: power_trial_as (lib.sh), loss = A + step^-0.5 over 1000 steps. Loss 0.300 ends at
# 0.3316, loss 0.350 at 0.3816: 0.05 behind at every fraction of the run, about a sixth of the
# sweep's range (from 0.62 at step 10), a steady gap that does not close.

# The attack: B's better trial in B's "shared" ends first; then A's in A's "shared".
b=$(power_trial_as $B shared b 0.300 0.05) || fail "sbatch as $B"
wait_until 60 'ended $b' "B's trial to end"
[ "$(state_of "$b")" = COMPLETED ] || fail "B's trial ended $(state_of "$b")"
a=$(power_trial_as $A shared a 0.350 0.1) || fail "sbatch as $A"
seen=""
for ((i = 0; i < 400; i++)); do
    c=$(comment "$a")
    case $c in *state=hopeless* | *decision=pause*) seen=$c ;; esac
    ended "$a" && break
    sleep 0.3
done
[ -z "$seen" ] || fail "A's trial $a in a sweep named like B's was judged hopeless or paused: $seen"
[ "$(state_of "$a")" = COMPLETED ] || fail "A's trial $a ended $(state_of "$a") at step $(step_of a.0): $(comment "$a")"
grep -q "job $a\b.*behind the path" "$log" && fail "slurmctld judged A's trial behind a path: $(grep "job $a\b" "$log" | tail -1)"
pass "A's trial $a (loss 0.350 + step^-0.5) completed: B's better trial (0.300 + ...) in B's sweep of the same name did not count"

# Control: A's own better trial in "own" ends first; A's array tasks then run behind its path.
c=$(power_trial_as $A own c 0.300 0.05) || fail "sbatch as $A (control)"
wait_until 60 'ended $c' "A's better trial to end"
arr=$(power_trial_as $A own p 0.350 0.1 --array=0-1) || fail "sbatch --array as $A (control)"
for t in 0 1; do
    why=""
    for ((i = 0; i < 600; i++)); do
        c=$(comment "${arr}_$t")
        case $c in *"behind the path of its group's best"*) why=$c && break ;; esac
        ended "${arr}_$t" && break
        sleep 0.2
    done
    [ -n "$why" ] || fail "control: task ${arr}_$t (state $(state_of "${arr}_$t"), step $(step_of p.$t)) was never judged behind its sweep's best path: $(comment "${arr}_$t")"
    case $why in
        *state=hopeless* | *decision=pause*) ;;
        *) fail "control: task ${arr}_$t's behind-track verdict neither stops nor pauses it: $why" ;;
    esac
    pass "control: task ${arr}_$t judged behind its sweep's best path at step $(step_of p.$t) of 1000: $(echo "$why" | grep -o 'reason=.*' | cut -c1-200)"
done
# explsched why, on a task the rule has judged (held or cancelled: its last assessment stays)
why_says "${arr}_0" "behind_track_margin"
for t in 0 1; do scancel "${arr}_$t" 2>/dev/null; done
true
