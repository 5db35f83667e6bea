#!/bin/bash
# contrib/demo/summarize.py, the demo's summary, on trial logs written here in the format the demo
# writes (run_start/run_end lines, train.py's JSON lines, the states and submitted files): the
# three arms' times to best, GPU-hours and target checks; with --own-best (two users' sweeps, each
# under ExplSched) the GPU-hours on stopped trials are each run's own, not an empty set's. No
# cluster.
set -u
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
summ=$top_srcdir/contrib/demo/summarize.py

# trial DIR TASK START END STEP LOSS [pruned]: one run of a trial, its last evaluation at END
trial() {
    local d=$1 task=$2 start=$3 end=$4 step=$5 loss=$6
    mkdir -p "$d"
    {
        echo "run_start $start"
        echo "{\"step\": $step, \"val_loss\": $loss, \"t\": $end}"
        [ "${7:-}" = pruned ] && echo '{"event": "pruned"}'
        echo "run_end $end"
    } >>"$d/trial.$task.out"
}

e=$tmp/explsched b=$tmp/basic o=$tmp/optuna a=$tmp/alice
trial "$e" 0 100 150 10 0.5
trial "$e" 1 100 110 2 0.9
trial "$e" 2 100 120 3 0.8
printf '0 COMPLETED 0\n1 CANCELLED 0\n2 PENDING 1\n' >"$e/states"
trial "$b" 0 100 200 10 0.5
trial "$b" 1 100 200 10 0.8
trial "$b" 2 200 300 10 0.7
printf '0 COMPLETED 0\n1 COMPLETED 0\n2 COMPLETED 0\n' >"$b/states"
trial "$o" 0 100 170 10 0.5
trial "$o" 1 100 120 2 0.9 pruned
trial "$o" 2 120 200 10 0.7
printf '0 COMPLETED 0\n1 COMPLETED 0\n2 COMPLETED 0\n' >"$o/states"
trial "$a" 0 100 140 10 0.6
trial "$a" 1 100 130 4 0.9
printf '0 COMPLETED 0\n1 CANCELLED 0\n' >"$a/states"
for d in "$e" "$b" "$o" "$a"; do echo 100 >"$d/submitted"; done

out=$(/usr/bin/python3 "$summ" 10 explsched="$e" basic="$b" optuna="$o" 2>&1) || { echo "FAIL: summarize: $out"; exit 1; }
echo "$out"
check() { grep -qF -- "$1" <<<"$out" || { echo "FAIL: no '$1'"; fail=1; }; }
check "sweep best final val_loss (all policies): 0.500000"
check "ratios explsched/basic: time to best 0.50, GPU-hours 0.27, GPU-hours on stopped trials 0.15"
check "ratios explsched/optuna: time to best 0.71, GPU-hours 0.47"
check "time to best <= 0.5x basic's met, time to best <= 0.7x optuna's MISSED, GPU-hours <= optuna's met, best kept met"
check "stopped as hopeless (2 trials), under each policy"
check "pruned by Optuna [1]"

out=$(/usr/bin/python3 "$summ" --own-best 10 alice="$a" bob="$e" 2>&1) || { echo "FAIL: summarize --own-best: $out"; exit 1; }
echo "$out"
check "each run's own trials that ExplSched stopped or holds (alice 1, bob 2)"
grep -q "(0 trials)" <<<"$out" && { echo "FAIL: --own-best still counts no stopped trial"; fail=1; }
# alice's own best (0.6) reached 40 s after her submission; bob's (0.5) after 50 s
grep -qE "^alice +0\.600000 +40\.0 " <<<"$out" || { echo "FAIL: alice's row"; fail=1; }
grep -qE "^bob +0\.500000 +50\.0 " <<<"$out" || { echo "FAIL: bob's row"; fail=1; }

[ $fail = 0 ] && echo "ok: demo summary figures and targets"
exit $fail
