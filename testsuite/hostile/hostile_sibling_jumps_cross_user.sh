#!/bin/bash
# Attack: with sibling_jumps on, the jumps a trial's sweep-mates made later in their runs widen its
# optimistic bound, so the stopping rules spare it. User B names A's sweep (--explore=shared, the
# same name as A's) and runs a trial whose loss drops sharply half way, to get the bound of A's
# hopeless trial widened and spare it. Sweeps are per user (uid:name): A's poor trial is still
# judged hopeless and its SystemComment never shows a jump allowance (jump=). Control: A's own
# trial with the same drop, in A's sweep "own", does give A's poor trial there an allowance (the
# mechanism was on all along). Two real users, one node, four GPUs.
set -u
. "$(dirname "$0")/lib.sh"
two_users esh_sj
start_cluster --nodes 1 --gpus 4 --explschedd --params rerank_period=1,min_run=0,pause_probability=0,sibling_jumps=yes
open_to_users

# run_as USER SWEEP NAME STEPS TRIAL-ARGS...: one trial of USER's sweep SWEEP (hopeless: marked only)
run_as() {
    local u=$1 sweep=$2 name=$3 steps=$4
    shift 4
    submit_as "$u" --gres=gpu:1 --explore="$sweep" --explore-max-steps="$steps" --explore-on-hopeless=none \
        -o "$work/$name.out" --wrap "$trial --steps $steps --checkpoint $work/$name.ckpt $*"
}
# A late bloomer: its loss falls from 0.57 to 0.01 from half its run on (a jump no fit foresees).
dropper() { run_as "$1" "$2" "$3" 400 --a 0.5 --b 1 --every 0.1 --drop 200 --after 0.01; }
done_() { [ "$(job_field "$1" JobState)" = COMPLETED ]; }

# watch POOR: polls its SystemComment until it is hopeless; prints every jump= it showed on the way
watch_until_hopeless() {
    local poor=$1 c seen="" i
    for ((i = 0; i < 120; i++)); do
        c=$(comment "$poor")
        case $c in *" jump="*) seen="$seen $(echo "$c" | grep -o 'jump=[^ ]*')" ;; esac
        case $c in *state=hopeless*) echo "hopeless${seen:+ after$seen}"; return 0 ;; esac
        sleep 0.5
    done
    echo "not hopeless in 60 s${seen:+ after$seen}"
}

# Attack: B's dropper in B's sweep "shared" ends first; then A's sweep "shared": a good and a poor trial.
b=$(dropper $B shared b0) || fail "sbatch as $B"
wait_until 60 'done_ $b' "B's dropping trial to complete"
a0=$(run_as $A shared a0 2000 --a 0.05 --b 1 --every 0.1) || fail "sbatch as $A"
a1=$(run_as $A shared a1 2000 --a 0.9 --b 1 --every 0.1) || fail "sbatch as $A"
out=$(watch_until_hopeless "$a1")
case $out in
    "hopeless") pass "A's poor trial $a1 is hopeless, with no jump allowance from B's trial: $(comment "$a1" | cut -c1-200)" ;;
    *) fail "A's poor trial $a1 in a sweep named like B's: $out" ;;
esac
scancel "$a0" "$a1" 2>/dev/null

# Control: the same in A's own sweep "own": A's dropper gives A's poor trial an allowance.
c=$(dropper $A own c0) || fail "sbatch as $A (control)"
wait_until 60 'done_ $c' "A's dropping trial to complete"
c1=$(run_as $A own c1 2000 --a 0.05 --b 1 --every 0.1) || fail "sbatch as $A (control)"
c2=$(run_as $A own c2 2000 --a 0.9 --b 1 --every 0.1) || fail "sbatch as $A (control)"
wait_until 60 'comment $c2 | grep -q " jump="' "A's poor trial to get a jump allowance from A's own dropper"
pass "control: $(comment "$c2" | grep -o 'pred=[^ ]* [^ ]*\( [^ ]*\)\{0,3\} jump=[^ ]*')"
scancel "$c1" "$c2" 2>/dev/null
