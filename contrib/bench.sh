#!/bin/bash
# contrib/bench.sh: the policy comparison on the shipped data, over several seeds, written to
# doc/results.md (tables, target ratios, plots in doc/results/). Run from a built tree:
#   contrib/bench.sh [--seeds 0,1,2] [--quick]
# --quick runs the small scenarios only (no Philly runs, no 10,000-job timing).
# Data: $EXPLSCHED_DATA, default ../shared/data next to the source tree.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${EXPLSCHED_BUILD:-$top}
data=${EXPLSCHED_DATA:-$top/../shared/data}
sim=$build/src/sim/explsched-sim
cli=$build/src/cli/explsched
seeds=0,1,2
quick=0
while [ $# -gt 0 ]; do
    case "$1" in
        --seeds) seeds=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
        *) echo "bench.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
for f in "$sim" "$cli"; do
    [ -x "$f" ] || { echo "bench.sh: $f not built (make first)" >&2; exit 1; }
done
[ -d "$data/curves" ] || { echo "bench.sh: no data in $data (set EXPLSCHED_DATA)" >&2; exit 1; }

out=$top/doc/results
mkdir -p "$out"
export EXPLSCHED_PLOT_SCRIPT=$top/contrib/explsched_plot.py
curves=$data/curves
tput=$data/throughputs/gavel_simulation_throughputs.json
pollux=$data/traces/pollux-workloads/workload-1.csv
philly=$data/traces/philly.csv

# scenario NAME ARGS...: every policy, every seed; summary JSON plus its comparison chart.
scenario() {
    local name=$1; shift
    echo "bench.sh: $name: $*" >&2
    local start=$SECONDS
    "$sim" --curves "$curves" --seeds "$seeds" --json --quiet "$@" >"$out/$name.json"
    echo "bench.sh: $name took $((SECONDS - start)) s" >&2
    "$cli" plot --sim "$out/$name.json" -o "$out/$name.svg" >/dev/null
}

# optuna_peer NAME CURVES ARGS...: the scenario's workloads (every seed) through Optuna's pruners
# (contrib/optuna_replay.py), written beside its JSON as NAME-optuna.json.
have_optuna=yes
/usr/bin/python3 -c 'import optuna, numpy' 2>/dev/null || {
    have_optuna=no
    echo "bench.sh: warning: no python3-optuna: the Optuna peer is left out" >&2
}
optuna_peer() {
    local name=$1 curves_dir=$2; shift 2
    [ "$have_optuna" = yes ] || return 0
    local start=$SECONDS wl
    wl=$(mktemp /tmp/explsched-bench-workload-XXXXXX.json)
    "$sim" --curves "$curves_dir" --seeds "$seeds" --quiet "$@" --export-workload "$wl"
    /usr/bin/python3 "$top/contrib/optuna_replay.py" "$wl" --quiet -o "$out/$name-optuna.json"
    rm -f "$wl"
    echo "bench.sh: $name: Optuna replay took $((SECONDS - start)) s" >&2
}

# aggressive NAME ARGS...: the same with explsched's aggressive profile (early stopping), against
# the baselines its targets name.
aggressive=hopeless_min_progress=0,milestone_stop_probability=1,milestone_stop_unpredicted=yes,min_expected_gain=0.02
profile() {
    local name=$1; shift
    "$sim" --curves "$curves" --seeds "$seeds" --json --quiet --policies fifo,asha,slaq,explsched,oracle \
        --params "$aggressive" "$@" >"$out/$name-aggressive.json"
}

# frontier NAME CURVES ARGS...: GPU-hours against the sweeps kept at their best, asha at each of
# its settings and explsched at a few of its own (contrib/bench_frontier.py), as NAME-frontier.json.
frontier() {
    local name=$1 curves_dir=$2 start=$SECONDS; shift 2
    /usr/bin/python3 "$top/contrib/bench_frontier.py" "$sim" "$seeds" "$out/$name-frontier.json" -- \
        --curves "$curves_dir" "$@"
    echo "bench.sh: $name: the trade-off runs took $((SECONDS - start)) s" >&2
}

# replayed NAME CURVES ARGS...: a scenario on curves made by our own trainers (not the shared
# data's): every policy, the aggressive profile and the Optuna peer, written as NAME*.json.
replayed() {
    local name=$1 curves_dir=$2; shift 2
    "$sim" --curves "$curves_dir" --seeds "$seeds" --json --quiet "$@" >"$out/$name.json"
    "$cli" plot --sim "$out/$name.json" -o "$out/$name.svg" >/dev/null
    "$sim" --curves "$curves_dir" --seeds "$seeds" --json --quiet --policies fifo,asha,slaq,explsched,oracle \
        --params "$aggressive" "$@" >"$out/$name-aggressive.json"
    optuna_peer "$name" "$curves_dir" "$@"
    frontier "$name" "$curves_dir" "$@"
}

# The demo's real training sweep (contrib/demo.sh), replayed from fresh runs of its trainer.
demo=$(mktemp -d /tmp/explsched-demo-replay-XXXXXX)
trap 'rm -rf "$demo"' EXIT
/usr/bin/python3 "$top/contrib/demo/replay.py" "$demo" >&2
replayed demo-sweep "$demo/curves" --trace "$demo/trace.csv" --gpus 16 --sweep-size 32 --variation none

# The held-out sweeps (contrib/heldout: real sklearn/torch training sweeps that no default was
# tuned on), as a scenario.
heldout=$(mktemp -d /tmp/explsched-heldout-XXXXXX)
trap 'rm -rf "$demo" "$heldout"' EXIT
/usr/bin/python3 "$top/contrib/heldout/sim_scenario.py" "$heldout"
replayed heldout-sweeps "$heldout/curves" --trace "$heldout/trace.csv" --gpus 16 --sweep-size 16 --variation none
# ... and the fresh sweeps (contrib/heldout/fresh), made after every default was set.
/usr/bin/python3 "$top/contrib/heldout/sim_scenario.py" --curves "$top/contrib/heldout/fresh" "$heldout/fresh"
replayed fresh-sweeps "$heldout/fresh/curves" --trace "$heldout/fresh/trace.csv" --gpus 16 --sweep-size 16 \
    --variation none

scenario pollux --trace "$pollux" --gpus 64
scenario pollux-real-curves --trace "$pollux" --gpus 64 --variation none
scenario pollux-heterogeneous --trace "$pollux" --cluster v100:4x8,p100:4x8,k80:6x8 --throughputs "$tput"
optuna_peer pollux "$curves" --trace "$pollux" --gpus 64
optuna_peer pollux-real-curves "$curves" --trace "$pollux" --gpus 64 --variation none
optuna_peer pollux-heterogeneous "$curves" --trace "$pollux" --cluster v100:4x8,p100:4x8,k80:6x8 --throughputs "$tput"
profile pollux --trace "$pollux" --gpus 64
profile pollux-real-curves --trace "$pollux" --gpus 64 --variation none
profile pollux-heterogeneous --trace "$pollux" --cluster v100:4x8,p100:4x8,k80:6x8 --throughputs "$tput"
frontier pollux "$curves" --trace "$pollux" --gpus 64
frontier pollux-real-curves "$curves" --trace "$pollux" --gpus 64 --variation none
frontier pollux-heterogeneous "$curves" --trace "$pollux" --cluster v100:4x8,p100:4x8,k80:6x8 --throughputs "$tput"
if [ "$quick" = 0 ]; then
    scenario philly --trace "$philly" --jobs 1000 --gpus 128
    profile philly --trace "$philly" --jobs 1000 --gpus 128
    optuna_peer philly "$curves" --trace "$philly" --jobs 1000 --gpus 128
    frontier philly "$curves" --trace "$philly" --jobs 1000 --gpus 128
fi

# One recorded run to show a trial and a sweep as the scheduler saw them.
rec=$(mktemp /tmp/explsched-bench-XXXXXX.json)
rec_het=$(mktemp /tmp/explsched-bench-XXXXXX.json)
trap 'rm -rf "$rec" "$rec_het" "$demo" "$heldout"' EXIT
"$sim" --trace "$pollux" --curves "$curves" --cluster v100:4x8,p100:4x8,k80:6x8 --throughputs "$tput" --seeds 0 \
    --policies explsched --quiet --output "$rec_het" >/dev/null
"$sim" --trace "$pollux" --curves "$curves" --gpus 64 --seeds 0 --policies explsched,asha --quiet --output "$rec" >/dev/null
/usr/bin/python3 - "$rec" >"$out/examples.txt" <<'EOF'
import json, sys
run = [r for r in json.load(open(sys.argv[1]))["results"] if r["policy"] == "explsched"][0]
# A stopped cifar10 trial that is not diverged, and its sweep.
for t in run["trials"]:
    a = t.get("assessment") or {}
    if t["application"] == "cifar10" and t["status"] == "stopped" and "the group's best" in a.get("reason", ""):
        print(t["id"], t["sweep"])
        break
EOF
read -r trial sweep <"$out/examples.txt" || true
rm -f "$out/examples.txt"
if [ -n "${trial:-}" ]; then
    "$cli" plot --sim "$rec" --policy explsched "$trial" -o "$out/trial.svg" >/dev/null
    "$cli" plot --sim "$rec" --group "$sweep" -o "$out/sweep.svg" >/dev/null
    "$cli" show --sim "$rec" "$trial" | sed "s|$rec|RESULT.json|" >"$out/show.txt"
    "$cli" why --sim "$rec" "$trial" | sed "s|$rec|RESULT.json|" >"$out/why.txt"
fi

# Scale: 10,000 Philly jobs on 1,000 GPUs (wall and CPU seconds of the whole simulation).
if [ "$quick" = 0 ]; then
    for policy in fifo explsched; do
        /usr/bin/time -f "%e %U" -o "$out/scale-$policy.time" \
            "$sim" --trace "$philly" --curves "$curves" --gpus 1000 --jobs 10000 --seeds 0 \
            --policies "$policy" --json --quiet >"$out/scale-$policy.json"
    done
fi

/usr/bin/python3 "$top/contrib/bench_report.py" "$out" "$top/doc/results.md" "$seeds" "$rec" "$rec_het"
echo "bench.sh: wrote $top/doc/results.md" >&2
