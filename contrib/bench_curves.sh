#!/bin/bash
# contrib/bench_curves.sh: the policy comparison and the forecast check on sweeps of your own,
# curves no default of the engine was chosen on. Run from a built tree:
#   contrib/bench_curves.sh [--seeds 0,1,2] [--gpus 16] [--run-hours 1] [--gpus-per-trial 1]
#                           [--out DIR] CURVES
# CURVES holds one directory per sweep, each with one CSV per trial (a header naming a step column,
# `step`, `iteration` or `progress`, and a `metric` column; optional `direction`, min or max, else
# read from the curves; contrib/heldout/sim_scenario.py says more). Prints, for that scenario (each
# sweep submitted at once, one every half run, each sweep's longest trial lasting --run-hours):
# every policy of explsched-sim and, with python3-optuna, Optuna's pruners, over the seeds, with
# the targets of doc/results.md and the GPU-hours of every setting of asha, Optuna's pruners and
# explsched against the sweeps each keeps at their best (contrib/bench_frontier.py); then the 80 % intervals' coverage of the final metric and the
# forecast error at 10/25/50 % observed, at the shipped calibration (bench_calibration --shipped).
# --out DIR keeps the runs' JSON (NAME.json, NAME-optuna.json, NAME-frontier.json). Exit status 1 on bad input (the
# error names the file and line), 2 on a bad option.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${EXPLSCHED_BUILD:-$top}
sim=$build/src/sim/explsched-sim
calibration=$build/testsuite/bench/bench_calibration
seeds=0,1,2 gpus=16 hours=1 per_trial=1 out='' curves=''
usage() {
    echo "usage: contrib/bench_curves.sh [--seeds 0,1,2] [--gpus 16] [--run-hours 1] [--gpus-per-trial 1] [--out DIR] CURVES" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case "$1" in
        --seeds|--gpus|--run-hours|--gpus-per-trial|--out)
            [ $# -ge 2 ] || { echo "bench_curves.sh: $1 needs a value" >&2; exit 2; }
            case "$1" in
                --seeds) seeds=$2 ;; --gpus) gpus=$2 ;; --run-hours) hours=$2 ;;
                --gpus-per-trial) per_trial=$2 ;; --out) out=$2 ;;
            esac
            shift 2 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "bench_curves.sh: unknown option '$1'" >&2; usage ;;
        *) [ -z "$curves" ] || { echo "bench_curves.sh: one CURVES directory, got '$curves' and '$1'" >&2; usage; }
           curves=$1; shift ;;
    esac
done
[ -n "$curves" ] || usage
[ -d "$curves" ] || { echo "bench_curves.sh: $curves: no such directory" >&2; exit 1; }
[[ $gpus =~ ^[1-9][0-9]*$ ]] || { echo "bench_curves.sh: --gpus: '$gpus' is not a positive whole number" >&2; exit 2; }
[ -x "$sim" ] || { echo "bench_curves.sh: $sim not built (make first, or set EXPLSCHED_BUILD)" >&2; exit 1; }

name=$(basename "$(cd "$curves" && pwd)")
work=$(mktemp -d /tmp/explsched-bench-curves-XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -n "$out" ] || out=$work/results
mkdir -p "$out"

# the sweeps as a scenario (renumbered, directions and step times written): errors name the file
/usr/bin/python3 "$top/contrib/heldout/sim_scenario.py" --run-hours "$hours" --gpus-per-trial "$per_trial" \
    --curves "$curves" "$work/scenario" || exit 1
largest=$(awk -F, 'NR > 1 { n[$3]++ } END { m = 0; for (a in n) if (n[a] > m) m = n[a]; print m }' \
    "$work/scenario/trace.csv")
scenario=(--curves "$work/scenario/curves" --trace "$work/scenario/trace.csv" --gpus "$gpus"
          --sweep-size "$largest" --variation none)
args=("${scenario[@]}" --seeds "$seeds")
echo "bench_curves.sh: explsched-sim ${args[*]}" >&2
"$sim" "${args[@]}" --json --quiet >"$out/$name.json"
if /usr/bin/python3 -c 'import optuna, numpy' 2>/dev/null; then
    "$sim" "${args[@]}" --quiet --export-workload "$work/workload.json" >/dev/null
    /usr/bin/python3 "$top/contrib/optuna_replay.py" "$work/workload.json" --quiet -o "$out/$name-optuna.json"
else
    echo "bench_curves.sh: warning: no python3-optuna: the Optuna peer is left out" >&2
fi
# asha, Optuna's pruners and explsched at each of their settings: the cheapest that keeps as many
# sweeps at their best (the fair comparison where one setting of a peer loses a best)
/usr/bin/python3 "$top/contrib/bench_frontier.py" "$sim" "$seeds" "$out/$name-frontier.json" -- "${scenario[@]}" \
    >/dev/null
/usr/bin/python3 "$top/contrib/bench_report.py" --one "$name" "$out"
echo
if [ -x "$calibration" ]; then
    echo "### Forecasts (the shipped calibration, what \`explsched predict\` reports)"
    echo
    echo '```'
    "$calibration" -v --shipped "$name=$work/scenario/curves"
    echo '```'
else
    echo "bench_curves.sh: warning: $calibration not built: the forecast check is left out" >&2
fi
