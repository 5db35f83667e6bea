#!/bin/bash
# The held-out sweeps of contrib/heldout (real sklearn/torch training runs made here, no default
# chosen on them) in the simulator: `curves/` (8 sweeps), `fresh/` (6 sweeps of kinds the other
# sets lack, made after every default was set) and `plateau/` (2 sweeps whose learning rate drops
# when their validation loss stalls, each trial at its own time; made after the fresh ones). With its default settings explsched must bring
# every sweep to its best model (within 0.01 of its quality; >= 99.5 % of fifo's profit), as fifo
# does, and spend well under fifo's GPU-hours; asha's figures beside it are printed, not judged.
# Also: sim_scenario.py names bad arguments, and every trial and sweep of the set is simulated.
# Needs no cluster, only python3 (stdlib).
set -u
. "$(dirname "$0")/lib.sh"

sim=$top_builddir/src/sim/explsched-sim
[ -x "$sim" ] || skip "explsched-sim not built"
scenario=$top_srcdir/contrib/heldout/sim_scenario.py
sim_tmp
fail=0

out=$(/usr/bin/python3 "$scenario" --curves "$tmp/none" "$tmp/x" 2>&1) && fail=1
grep -q -- "--curves $tmp/none: no such directory" <<<"$out" || { echo "FAIL: sim_scenario.py --curves missing: $out"; fail=1; }
out=$(/usr/bin/python3 "$scenario" --run-hours 0 "$tmp/x" 2>&1) && fail=1
grep -q -- "--run-hours must be > 0" <<<"$out" || { echo "FAIL: sim_scenario.py --run-hours 0: $out"; fail=1; }

for set in curves fresh plateau; do
    /usr/bin/python3 "$scenario" --curves "$top_srcdir/contrib/heldout/$set" "$tmp/$set" 2>"$tmp/$set.log" ||
        { echo "FAIL: sim_scenario.py $set: $(cat "$tmp/$set.log")"; fail=1; continue; }
    "$sim" --trace "$tmp/$set/trace.csv" --curves "$tmp/$set/curves" --gpus 16 --sweep-size 16 --variation none \
        --seeds 0 --policies fifo,asha,explsched --json --quiet >"$tmp/$set.json" ||
        { echo "FAIL: explsched-sim on $set"; fail=1; continue; }
    /usr/bin/python3 - "$set" "$tmp/$set/trace.csv" "$tmp/$set.json" <<'PY' || fail=1
import csv, json, sys
name, trace, result = sys.argv[1:4]
rows = list(csv.DictReader(open(trace)))
apps = sorted({r["application"] for r in rows})
runs = {r["policy"]: r for r in json.load(open(result))["runs"]}
fifo, asha, ours = runs["fifo"], runs["asha"], runs["explsched"]
print("  %s: %d trials, %d sweeps; GPU-h fifo %.1f asha %.1f explsched %.1f; sweeps at their best asha %.1f%% "
      "explsched %.1f%%" % (name, len(rows), len(apps), fifo["gpu_hours"], asha["gpu_hours"], ours["gpu_hours"],
                            100 * asha["sweeps_reaching_best"], 100 * ours["sweeps_reaching_best"]))
problems = []
if ours["sweeps"] != len(apps) or fifo["trials"] != len(rows):
    problems.append("%d sweeps and %d trials simulated, the trace has %d and %d"
                    % (ours["sweeps"], fifo["trials"], len(apps), len(rows)))
if fifo["sweeps_reaching_best"] != 1.0:
    problems.append("fifo did not bring every sweep to its best")
# at its best: within 0.01 of the quality of the sweep's best trial (the metric's definition), so
# the profit may fall short of fifo's by that much, no more than the target's 0.5 %
if ours["sweeps_reaching_best"] != 1.0 or ours["profit"] < 0.995 * fifo["profit"]:
    problems.append("explsched (defaults) lost a sweep's best: %.1f%% at their best, profit %.4f (fifo %.4f)"
                    % (100 * ours["sweeps_reaching_best"], ours["profit"], fifo["profit"]))
if not ours["gpu_hours"] < 0.75 * fifo["gpu_hours"]:
    problems.append("explsched spent %.1f GPU-h, not under 0.75x fifo's %.1f" % (ours["gpu_hours"], fifo["gpu_hours"]))
for p in problems:
    print("FAIL: %s: %s" % (name, p))
sys.exit(1 if problems else 0)
PY
done
# stale_best_fraction (off by default): on the fresh sweeps the boosting trial at learning rate 1,
# whose validation loss rises from a tenth of its run on, is stopped as stale, for fewer GPU-hours
# than the defaults, every best kept. With the behind track off (behind_track_margin=0): on by
# default, it stops that trial at 35 % of its run, before the stale rule would.
if "$sim" --trace "$tmp/fresh/trace.csv" --curves "$tmp/fresh/curves" --gpus 16 --sweep-size 16 --variation none \
    --seeds 0 --policies explsched --params stale_best_fraction=0.3,behind_track_margin=0 --json --quiet --output "$tmp/stale.json" \
    >/dev/null; then
    /usr/bin/python3 - "$tmp/stale.json" "$tmp/fresh.json" <<'PY' || fail=1
import json, sys
run = json.load(open(sys.argv[1]))["results"][0]
defaults = {r["policy"]: r for r in json.load(open(sys.argv[2]))["runs"]}["explsched"]
m = run["metrics"]
stale = [t for t in run["trials"] if any("stale_best_fraction" in k["note"] for k in t["marks"])]
print("  stale_best_fraction=0.3 on fresh: %d trials stopped as stale (%s); GPU-h %.1f (defaults %.1f)"
      % (len(stale), ", ".join(t["name"] for t in stale), m["gpu_hours"], defaults["gpu_hours"]))
problems = []
if not any(t["name"] == "gbdt_logloss-5" for t in stale):
    problems.append("the overfitting gbdt trial (gbdt_logloss-5) was not stopped as stale")
if any(t["sweep_best"] for t in stale):
    problems.append("a sweep's best was stopped as stale")
if m["sweeps_reaching_best"] != 1.0:
    problems.append("a sweep's best was lost")
if not m["gpu_hours"] < defaults["gpu_hours"]:
    problems.append("no GPU-hours saved (%.1f vs %.1f)" % (m["gpu_hours"], defaults["gpu_hours"]))
for p in problems:
    print("FAIL: stale_best_fraction: " + p)
sys.exit(1 if problems else 0)
PY
else
    echo "FAIL: explsched-sim stale_best_fraction=0.3"; fail=1
fi

# The late-step sweep (contrib/heldout/steps_late: learning rate x0.1 at half and three quarters of
# the run). Its best sits on a noisy plateau behind a smooth low-rate trial until the first drop,
# past hopeless_min_progress: the defaults' figures are printed (a known limit, doc/results.md);
# judging from 0.55 of a run keeps its best for under 0.75x fifo's GPU-hours, and so do the
# defaults when the trials declare their drops (--explore-lr-drops; the simulator reads them from
# the application's `lr_drops` file, as fractions of the run).
/usr/bin/python3 "$scenario" --curves "$top_srcdir/contrib/heldout/steps_late" "$tmp/late" 2>/dev/null ||
    { echo "FAIL: sim_scenario.py steps_late"; fail=1; }
late_run() {  # late_run NAME PARAMS: fifo and explsched on the late-step sweep
    "$sim" --trace "$tmp/late/trace.csv" --curves "$tmp/late/curves" --gpus 16 --sweep-size 16 --variation none \
        --seeds 0 --policies fifo,explsched --params "$2" --json --quiet >"$tmp/late-$1.json" ||
        { echo "FAIL: explsched-sim steps_late $1"; fail=1; }
}
late_run defaults hopeless_min_progress=0.35
late_run later hopeless_min_progress=0.55
app_dir=$tmp/late/curves/steps_late_mlp_acc
echo "0.5,0.4" >"$app_dir/lr_drops"
out=$("$sim" --trace "$tmp/late/trace.csv" --curves "$tmp/late/curves" --gpus 16 --seeds 0 --policies fifo 2>&1) && fail=1
grep -qF "lr_drops: '0.4' is not a fraction of the run in (0, 1) above the one before" <<<"$out" ||
    { echo "FAIL: a bad lr_drops file was not named: $out"; fail=1; }
echo "0.5,0.75" >"$app_dir/lr_drops"
late_run declared hopeless_min_progress=0.35
/usr/bin/python3 - "$tmp"/late-defaults.json "$tmp"/late-later.json "$tmp"/late-declared.json <<'PY' || fail=1
import json, sys
runs = [{r["policy"]: r for r in json.load(open(f))["runs"]} for f in sys.argv[1:4]]
fifo = runs[0]["fifo"]
ours, late, declared = (r["explsched"] for r in runs)
print("  steps_late: defaults profit %.4f (fifo %.4f) at %.1f GPU-h; hopeless_min_progress=0.55 profit %.4f at %.1f "
      "GPU-h; drops declared profit %.4f at %.1f GPU-h (fifo %.1f)"
      % (ours["profit"], fifo["profit"], ours["gpu_hours"], late["profit"], late["gpu_hours"], declared["profit"],
         declared["gpu_hours"], fifo["gpu_hours"]))
problems = []
for name, r in (("hopeless_min_progress=0.55", late), ("declared drops", declared)):
    if r["sweeps_reaching_best"] != 1.0 or r["profit"] < 0.995 * fifo["profit"]:
        problems.append("%s lost the sweep's best (profit %.4f)" % (name, r["profit"]))
    if not r["gpu_hours"] < 0.75 * fifo["gpu_hours"]:
        problems.append("%s spent %.1f GPU-h, not under 0.75x fifo's" % (name, r["gpu_hours"]))
for p in problems:
    print("FAIL: steps_late: " + p)
sys.exit(1 if problems else 0)
PY
[ $fail = 0 ] || exit 1
echo "ok: explsched's defaults bring every held-out and fresh sweep to its best, under 0.75x fifo's GPU-hours; stale_best_fraction stops the stale; hopeless_min_progress=0.55 or declared drops keep the late-step sweep's best"
