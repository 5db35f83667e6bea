#!/bin/bash
# Near ties (min_expected_gain, 0.005 by default) in the simulator and `explsched why`: on the Pollux
# workload (seed 0) the defaults stop trials that are expected to improve their sweep's best by
# under 0.5 % of the sweep's metric range (the decision says so), spend fewer GPU-hours than with
# the rule off (min_expected_gain=0) and keep every sweep's best and the same profit; `explsched
# why` explains the rule with the setting's value; a sweep's leader is never stopped by it; a bad
# value is refused with the setting's name. The rule judges near twins only (near_tie_range, 0.2):
# with near_tie_range=0 (any trial, the rule before) it stops more trials. The runs compared have
# the best track off (best_track_margin=0,behind_track_margin=0): it keeps trials ahead of the best's path from this
# rule, and the saving measured is the rule's alone. Needs ../shared/data, no cluster.
set -u
. "$(dirname "$0")/lib.sh"

require_sim_pollux
sim_tmp
fail=0

pollux() { sim_pollux 0 "$@"; }

refuses_params pollux min_expected_gain=-0.1 min_expected_gain=2 min_expected_gain=tiny

refuses_params pollux near_tie_range=-1 near_tie_range=nan

pollux --params best_track_margin=0,behind_track_margin=0 --output "$tmp/rec.json" >"$tmp/default.json" ||
    { echo "FAIL: explsched-sim (defaults)"; exit 1; }
pollux --params min_expected_gain=0,best_track_margin=0,behind_track_margin=0 >"$tmp/off.json" ||
    { echo "FAIL: explsched-sim min_expected_gain=0"; exit 1; }
pollux --params near_tie_range=0,best_track_margin=0,behind_track_margin=0 --output "$tmp/any.json" >/dev/null ||
    { echo "FAIL: explsched-sim near_tie_range=0"; exit 1; }
trial=$(/usr/bin/python3 - "$tmp/default.json" "$tmp/off.json" "$tmp/rec.json" "$tmp/any.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["mean"]["explsched"]
o = json.load(open(sys.argv[2]))["mean"]["explsched"]
trials = json.load(open(sys.argv[3]))["results"][0]["trials"]
print("  min_expected_gain 0 -> 0.005 (default): GPU-h %.1f -> %.1f, sweeps at their best %.3f -> %.3f, "
      "profit %.4f -> %.4f" % (o["gpu_hours"], d["gpu_hours"], o["sweeps_reaching_best"],
                               d["sweeps_reaching_best"], o["profit"], d["profit"]), file=sys.stderr)
problems = []
# fewer GPU-hours: 723.9 -> 717.9 (0.8 %) on seed 0 since a trial behind at a milestone preempts
# nobody (the rule-off run then pays fewer restarts); 724.3 -> 721.3 (0.4 %) since a trial resumed
# as its sweep's last runs before it is judged again (resumed_pending: near ties paused by the
# rule and resumed so are no longer cancelled before they restart)
if not d["gpu_hours"] < o["gpu_hours"]:
    problems.append("GPU-hours %.1f not under the rule-off run's %.1f" % (d["gpu_hours"], o["gpu_hours"]))
if d["sweeps_reaching_best"] < o["sweeps_reaching_best"]:
    problems.append("a sweep's best was lost")
if d["profit"] < o["profit"] - 1e-9:
    problems.append("profit fell: %.4f < %.4f" % (d["profit"], o["profit"]))
ties = [t for t in trials if "is expected to improve the group's best" in (t.get("assessment") or {}).get("reason", "")]
if not ties:
    problems.append("no trial's decision is a near tie")
for t in ties:
    if t["sweep_best"]:
        problems.append("trial %d, its sweep's best, was stopped as a near tie" % t["id"])
    if "less than 0.005" not in t["assessment"]["reason"]:
        problems.append("trial %d's decision does not name 0.005: %s" % (t["id"], t["assessment"]["reason"]))
print("  %d near ties stopped, e.g. %s" % (len(ties), ties[0]["assessment"]["reason"] if ties else "-"), file=sys.stderr)
def near_tie_verdicts(records):
    # every verdict (pause or stop) in every trial's history that the near-tie rule gave
    return sum(1 for t in records for m in t.get("marks", [])
               if "is expected to improve the group's best" in m.get("note", ""))
mine = near_tie_verdicts(trials)
anyt = near_tie_verdicts(json.load(open(sys.argv[4]))["results"][0]["trials"])
print("  near-tie verdicts: %d with near_tie_range=0 (any trial), %d with the default 0.2" % (anyt, mine),
      file=sys.stderr)
if not anyt > mine:
    problems.append("near_tie_range=0 gave %d near-tie verdicts, not more than the default's %d" % (anyt, mine))
for p in problems:
    print("FAIL: " + p, file=sys.stderr)
if problems:
    sys.exit(1)
print(ties[0]["id"])
PY
) || fail=1
if [ -n "$trial" ]; then
    out=$("$cli" why --sim "$tmp/rec.json" "$trial" 2>&1)
    grep -q "is expected to improve the group's best" <<<"$out" || { echo "FAIL: why $trial has no near tie in its decision: $out"; fail=1; }
    grep -q "min_expected_gain (0.005)" <<<"$out" || { echo "FAIL: why $trial does not explain the setting: $out"; fail=1; }
    grep -q "near_tie_range (0.2)" <<<"$out" || { echo "FAIL: why $trial does not name near_tie_range: $out"; fail=1; }
    grep -q "cannot beat what its sweep's" <<<"$out" && { echo "FAIL: why $trial says it cannot win: $out"; fail=1; }
fi
[ $fail = 0 ] || exit 1
echo "ok: the defaults stop near ties, say so, save GPU-hours and keep every sweep's best"
