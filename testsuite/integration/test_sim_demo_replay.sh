#!/bin/bash
# The demo's real training sweep replayed in the simulator (contrib/demo/replay.py): 32 curves from
# fresh runs of contrib/demo/train.py, whose best trial plateaus for half its run and ranks 8th at
# its milestone before it ends best. With its default settings explsched must keep that trial, at
# every simulated time scale tried, and still spend fewer GPU-hours than fifo; ASHA and the
# aggressive profile lose it (what makes this sweep the test of early stopping). Needs no cluster,
# only python3-numpy.
set -u
. "$(dirname "$0")/lib.sh"

sim=$top_builddir/src/sim/explsched-sim
[ -x "$sim" ] || skip "explsched-sim not built"
/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "python3-numpy missing"
sim_tmp
fail=0

# bad arguments are named
out=$(/usr/bin/python3 "$top_srcdir/contrib/demo/replay.py" "$tmp/bad" --step-time 0 2>&1) && fail=1
grep -q -- "--step-time must be positive" <<<"$out" || { echo "FAIL: replay.py --step-time 0: $out"; fail=1; }
out=$(/usr/bin/python3 "$top_srcdir/contrib/demo/train.py" --sweep-index 32 --steps 1 2>&1) && fail=1
grep -q -- "--sweep-index: 32 is not in 0..31" <<<"$out" || { echo "FAIL: train.py --sweep-index 32: $out"; fail=1; }

# A trial paused or preempted (SIGTERM) resumes from its checkpoint with the minibatch generator's
# state, so it ends exactly where the uninterrupted run does.
train=("$top_srcdir/contrib/demo/train.py" --sweep-index 18 --steps 400 --eval-every 100)
/usr/bin/python3 "${train[@]}" --step-delay 0 >"$tmp/full.out" || { echo "FAIL: train.py"; fail=1; }
/usr/bin/python3 "${train[@]}" --step-delay 0.005 --checkpoint "$tmp/ck.npz" >"$tmp/part.out" &
trainer=$!
for _ in $(seq 1 300); do grep -q '"step": 100,' "$tmp/part.out" && break; sleep 0.1; done
kill -TERM $trainer
wait $trainer
if ! grep -q '"event": "checkpointed"' "$tmp/part.out"; then
    echo "FAIL: train.py did not checkpoint on SIGTERM: $(tail -1 "$tmp/part.out")"; fail=1
fi
/usr/bin/python3 "${train[@]}" --step-delay 0 --checkpoint "$tmp/ck.npz" >"$tmp/rest.out" || { echo "FAIL: train.py resume"; fail=1; }
full=$(grep '"step": 400,' "$tmp/full.out" | sed 's/, "t".*//')
rest=$(grep '"step": 400,' "$tmp/rest.out" | sed 's/, "t".*//')
at=$(sed -n 's/.*"resumed", "step": \([0-9]*\).*/\1/p' "$tmp/rest.out")
if [ -z "$full" ] || [ "$full" != "$rest" ] || [ -z "$at" ]; then
    echo "FAIL: resumed at step '${at}' and ended '$rest', uninterrupted '$full'"; fail=1
else
    echo "  train.py resumed at step $at ends as the uninterrupted run: $rest"
fi

/usr/bin/python3 "$top_srcdir/contrib/demo/replay.py" "$tmp/demo" || { echo "FAIL: replay.py"; exit 1; }
n=$(ls "$tmp/demo/curves/spirals"/validation-*.csv | wc -l)
[ "$n" = 32 ] || { echo "FAIL: $n curves written, want 32"; exit 1; }

# run_policies STEP_TIME [--params P]: the summary JSON of fifo, asha, explsched on the replay
run_policies() {
    local st=$1; shift
    printf 'placement,local_bsz,step_time\n1,1,%s\n1,32,%s\n' "$st" "$st" >"$tmp/demo/curves/spirals/placements.csv"
    "$sim" --trace "$tmp/demo/trace.csv" --curves "$tmp/demo/curves" --gpus 16 --sweep-size 32 \
        --variation none --seeds 0 --policies fifo,asha,explsched --json --quiet "$@"
}

for st in 1.0 1.5 2.0 3.0; do
    run_policies "$st" >"$tmp/default.json" || { echo "FAIL: explsched-sim at $st s/step"; fail=1; continue; }
    run_policies "$st" --params hopeless_min_progress=0,milestone_stop_probability=1,milestone_stop_unpredicted=yes,min_expected_gain=0.02 \
        >"$tmp/aggressive.json" || { echo "FAIL: explsched-sim (aggressive) at $st s/step"; fail=1; continue; }
    /usr/bin/python3 - "$st" "$tmp/default.json" "$tmp/aggressive.json" <<'PY' || fail=1
import json, sys
st = sys.argv[1]
runs = {r["policy"]: r for r in json.load(open(sys.argv[2]))["runs"]}
aggressive = {r["policy"]: r for r in json.load(open(sys.argv[3]))["runs"]}
fifo, asha, ours, bold = runs["fifo"], runs["asha"], runs["explsched"], aggressive["explsched"]
print("  %s s/step: profit fifo %.3f asha %.3f explsched %.3f (aggressive %.3f); GPU-h fifo %.1f explsched %.1f"
      % (st, fifo["profit"], asha["profit"], ours["profit"], bold["profit"], fifo["gpu_hours"], ours["gpu_hours"]))
problems = []
if fifo["sweeps_reaching_best"] != 1.0:
    problems.append("fifo did not reach the sweep's best")
if ours["sweeps_reaching_best"] != 1.0 or abs(ours["profit"] - fifo["profit"]) > 1e-9:
    problems.append("explsched (defaults) lost the sweep's best trial: profit %.4f, fifo %.4f"
                    % (ours["profit"], fifo["profit"]))
if not ours["gpu_hours"] < 0.9 * fifo["gpu_hours"]:
    problems.append("explsched spent %.1f GPU-h, not under 0.9x fifo's %.1f" % (ours["gpu_hours"], fifo["gpu_hours"]))
if not asha["profit"] < fifo["profit"] - 0.05:
    problems.append("asha kept the late bloomer (profit %.4f): the replay is not the hard case" % asha["profit"])
if not bold["profit"] < fifo["profit"] - 0.05:
    problems.append("the aggressive profile kept the late bloomer (profit %.4f)" % bold["profit"])
for p in problems:
    print("FAIL: %s s/step: %s" % (st, p))
sys.exit(1 if problems else 0)
PY
done
# explore_first_progress=0.1 (off by default): the late bloomer, in the second wave, is kept for fewer GPU-hours
if ! run_policies 1.5 >"$tmp/default.json" || ! run_policies 1.5 --params explore_first_progress=0.1 >"$tmp/explore.json"; then
    echo "FAIL: explsched-sim explore_first_progress=0.1"; fail=1
fi
/usr/bin/python3 - "$tmp/default.json" "$tmp/explore.json" <<'PY' || fail=1
import json, sys
d = {r["policy"]: r for r in json.load(open(sys.argv[1]))["runs"]}["explsched"]
x = {r["policy"]: r for r in json.load(open(sys.argv[2]))["runs"]}["explsched"]
print("  explore_first_progress=0.1 at 1.5 s/step: time to best %.2f h (defaults %.2f), GPU-h %.1f (%.1f), pauses %d"
      % (x["time_to_best_mean_h"] or -1, d["time_to_best_mean_h"] or -1, x["gpu_hours"], d["gpu_hours"], x["pauses"]))
problems = []
if x["sweeps_reaching_best"] != 1.0:
    problems.append("explore first lost the sweep's best trial")
# It found the best sooner (1.73 -> 1.38 h) while the defaults ran near ties to their end and
# re-ranked every 5 minutes; with near ties stopped and a re-ranking a minute the defaults get
# there in 1.41 h, and explore first's pauses no longer buy time (1.44 h) but save GPU-hours.
elif not x["time_to_best_mean_h"] < 1.1 * d["time_to_best_mean_h"]:
    problems.append("time to best %.2f h is not under 1.1x the defaults' %.2f h" % (x["time_to_best_mean_h"], d["time_to_best_mean_h"]))
if not x["gpu_hours"] < d["gpu_hours"]:
    problems.append("explore first spent %.1f GPU-h, not under the defaults' %.1f" % (x["gpu_hours"], d["gpu_hours"]))
if not x["pauses"] > d["pauses"]:
    problems.append("explore first paused nothing")
for p in problems:
    print("FAIL: " + p)
sys.exit(1 if problems else 0)
PY
# Decisive early stops (early_stop_probability, 0.001 by default): trials far behind are stopped
# for good before hopeless_min_progress, the late bloomer never is, and the sweep costs less than
# with the rule off (early_stop_probability=0).
if ! "$sim" --trace "$tmp/demo/trace.csv" --curves "$tmp/demo/curves" --gpus 16 --sweep-size 32 --variation none \
    --seeds 0 --policies explsched --json --quiet --output "$tmp/early.json" >/dev/null ||
    ! run_policies 1.5 --params early_stop_probability=0 >"$tmp/late.json"; then
    echo "FAIL: explsched-sim early_stop_probability"; fail=1
fi
/usr/bin/python3 - "$tmp/early.json" "$tmp/late.json" <<'PY' || fail=1
import json, sys
run = json.load(open(sys.argv[1]))["results"][0]
late = {r["policy"]: r for r in json.load(open(sys.argv[2]))["runs"]}["explsched"]
early = [t for t in run["trials"]
         if any("stopped before hopeless_min_progress" in m["note"] for m in t["marks"])]
fractions = sorted(max(p[0] for p in t["points"]) / t["max_step"] for t in early)
m = run["metrics"]
print("  early stops: %d trials, at %s of their runs; GPU-h %.1f (early_stop_probability=0: %.1f)"
      % (len(early), ", ".join("%.2f" % f for f in fractions), m["gpu_hours"], late["gpu_hours"]))
problems = []
if not early:
    problems.append("no trial was stopped before hopeless_min_progress")
if any(f >= 0.35 or f < 0.1 for f in fractions):
    problems.append("an early stop outside [early_stop_progress, hopeless_min_progress): %s" % fractions)
if any(t["sweep_best"] for t in early):
    problems.append("the sweep's best trial was stopped early")
if any(t["status"] != "stopped" or t["resumes"] for t in early):
    problems.append("an early stop was not final")
if m["sweeps_reaching_best"] != 1.0 or late["sweeps_reaching_best"] != 1.0:
    problems.append("a run lost the sweep's best")
if not m["gpu_hours"] < late["gpu_hours"]:
    problems.append("early stops saved no GPU-hours (%.1f vs %.1f)" % (m["gpu_hours"], late["gpu_hours"]))
for p in problems:
    print("FAIL: " + p)
sys.exit(1 if problems else 0)
PY
[ $fail = 0 ] || exit 1
echo "ok: the demo sweep's best trial survives explsched's defaults at every time scale, decisive early stops save GPU-hours without it, and explore first keeps it for fewer GPU-hours"
