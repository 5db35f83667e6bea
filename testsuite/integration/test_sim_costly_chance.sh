#!/bin/bash
# The site setting chance_worth_gpu_hours (off by default) in the simulator and `explsched why`:
# on the Pollux workload (seed 0), whose sweeps hold 24-32 GPU ImageNet trials, it stops costly
# trials whose chance to beat their sweep's best is too small for the GPU-hours they still need,
# names the setting in the decision, and spends fewer GPU-hours than the defaults without losing
# a sweep's best; a bad value is refused with the setting's name. Needs ../shared/data, no cluster.
set -u
. "$(dirname "$0")/lib.sh"

require_sim_pollux
sim_tmp
fail=0

pollux() { sim_pollux 0 "$@"; }

refuses_params pollux chance_worth_gpu_hours=-1 chance_worth_gpu_hours=lots chance_worth_gpu_hours=1e13

pollux >"$tmp/default.json" || { echo "FAIL: explsched-sim (defaults)"; exit 1; }
pollux --params chance_worth_gpu_hours=1000 --output "$tmp/rec.json" >"$tmp/costly.json" ||
    { echo "FAIL: explsched-sim chance_worth_gpu_hours=1000"; exit 1; }
trial=$(/usr/bin/python3 - "$tmp/default.json" "$tmp/costly.json" "$tmp/rec.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["mean"]["explsched"]
c = json.load(open(sys.argv[2]))["mean"]["explsched"]
trials = json.load(open(sys.argv[3]))["results"][0]["trials"]
print("  GPU-h %.1f -> %.1f, sweeps at their best %.3f -> %.3f, profit %.4f -> %.4f"
      % (d["gpu_hours"], c["gpu_hours"], d["sweeps_reaching_best"], c["sweeps_reaching_best"],
         d["profit"], c["profit"]), file=sys.stderr)
problems = []
# 0.97 before min_expected_gain was on by default (it stops many of the same near ties)
if not c["gpu_hours"] < 0.99 * d["gpu_hours"]:
    problems.append("GPU-hours %.1f not under 0.99x the defaults' %.1f" % (c["gpu_hours"], d["gpu_hours"]))
if c["sweeps_reaching_best"] < d["sweeps_reaching_best"]:
    problems.append("a sweep's best was lost")
costly = [t for t in trials if "chance_worth_gpu_hours" in (t.get("assessment") or {}).get("reason", "")]
if not costly:
    problems.append("no trial's decision names chance_worth_gpu_hours")
for p in problems:
    print("FAIL: " + p, file=sys.stderr)
if problems:
    sys.exit(1)
print(costly[0]["id"])
PY
) || fail=1
if [ -n "$trial" ]; then
    out=$("$cli" why --sim "$tmp/rec.json" "$trial" 2>&1)
    grep -q "its run still needs" <<<"$out" || { echo "FAIL: why $trial has no cost in its decision: $out"; fail=1; }
    grep -q "chance_worth_gpu_hours says" <<<"$out" || { echo "FAIL: why $trial does not explain the setting: $out"; fail=1; }
fi
[ $fail = 0 ] || exit 1
echo "ok: chance_worth_gpu_hours stops costly long shots, says so, and keeps every sweep's best"
