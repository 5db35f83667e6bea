#!/bin/bash
# The best track (best_track_margin, 0.03 by default) in the simulator and `explsched show/why`: on
# the Pollux workload (seed 6), with the best track off (best_track_margin=0) the ImageNet trial
# that ends as its sweep's best is stopped on the plateau before its learning-rate drop, its
# smooth forecast far behind the sweep's best, although its metric runs above the path of the
# trial that reached that best. With the default it is read as on course to beat that best, runs
# to its end, and every sweep keeps its best; the prediction of a trial the rule lifted carries
# its lead and chance, and `explsched show` and `explsched why` say so; a bad value is refused
# with the setting's name. Every run here has protect_leader off (the schedule this case was
# found in: with it on, the default, seed 1 kept that best even with the track off, and
# pollux-heterogeneous seeds 0-2 lose one without it). Found on seed 1; since a trial resumed as
# its sweep's last runs before it is judged again (resumed_pending) seed 1 keeps it with the track
# off, and seed 6 loses its ImageNet best so (stopped at 41 % of its run). Needs ../shared/data,
# no cluster.
set -u
. "$(dirname "$0")/lib.sh"

require_sim_pollux
sim_tmp
fail=0

pollux() { sim_pollux_with 6 protect_leader=no "$@"; }

refuses_params pollux best_track_margin=-0.1 best_track_margin=2 best_track_margin=wide

pollux --output "$tmp/rec.json" >"$tmp/default.json" || { echo "FAIL: explsched-sim (defaults)"; exit 1; }
pollux --params best_track_margin=0 --output "$tmp/off-rec.json" >"$tmp/off.json" ||
    { echo "FAIL: explsched-sim best_track_margin=0"; exit 1; }
trial=$(/usr/bin/python3 - "$tmp/default.json" "$tmp/off.json" "$tmp/rec.json" "$tmp/off-rec.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["mean"]["explsched"]
o = json.load(open(sys.argv[2]))["mean"]["explsched"]
on = {t["name"]: t for t in json.load(open(sys.argv[3]))["results"][0]["trials"]}
off = {t["name"]: t for t in json.load(open(sys.argv[4]))["results"][0]["trials"]}
print("  best_track_margin 0 -> 0.03 (default): GPU-h %.1f -> %.1f, sweeps at their best %.3f -> %.3f, "
      "profit %.4f -> %.4f" % (o["gpu_hours"], d["gpu_hours"], o["sweeps_reaching_best"],
                               d["sweeps_reaching_best"], o["profit"], d["profit"]), file=sys.stderr)
problems = []
if not o["sweeps_reaching_best"] < 1.0:
    problems.append("with the best track off every sweep kept its best (the case this test is about is gone)")
if d["sweeps_reaching_best"] != 1.0:
    problems.append("the defaults kept %.3f of the sweeps at their best, not all" % d["sweeps_reaching_best"])
if not d["profit"] > o["profit"]:
    problems.append("profit %.4f not above the best-track-off run's %.4f" % (d["profit"], o["profit"]))
lost = [n for n, t in off.items() if t.get("sweep_best") and t["status"] != "finished"]
if not lost:
    problems.append("no best trial was lost with the best track off")
for n in lost:
    print("  %s (%s): %s at %.0f %% of its run with the best track off, %s with the default"
          % (n, off[n]["application"], off[n]["status"], 100 * off[n]["points"][-1][0] / off[n]["max_step"],
             on[n]["status"]), file=sys.stderr)
    if on[n]["status"] != "finished":
        problems.append("%s still %s with the default" % (n, on[n]["status"]))
def lead(t):
    return ((t.get("assessment") or {}).get("prediction") or {}).get("track_lead", 0) or 0
lifted = [t for t in on.values() if lead(t) > 0]
if not lifted:
    problems.append("no trial's prediction has a track lead")
for t in lifted:
    p = t["assessment"]["prediction"]
    if not 0 < p["track_chance"] <= 1:
        problems.append("trial %d: track chance %r" % (t["id"], p["track_chance"]))
if [t for t in off.values() if lead(t) > 0]:
    problems.append("a trial has a track lead with best_track_margin=0")
for p in problems:
    print("FAIL: " + p, file=sys.stderr)
if problems:
    sys.exit(1)
print(lifted[0]["id"])
PY
) || fail=1
if [ -n "$trial" ]; then
    sim_says show "$tmp/rec.json" "$trial" "ahead of its sweep's best track by"
    sim_says why "$tmp/rec.json" "$trial" "Best track: over the last tenth of its run"
    sim_says -v show "$tmp/off-rec.json" "$trial" "best track"
fi
[ $fail -eq 0 ] && echo "ok: the best track keeps the ImageNet sweep's best past its learning-rate drop, and says so"
exit $fail
