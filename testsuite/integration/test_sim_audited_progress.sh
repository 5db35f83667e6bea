#!/bin/bash
# Held forecasts are read earlier (audited_min_progress, 0.15 by default) in the simulator: on the
# heterogeneous Pollux cluster (seed 0) the defaults judge a trial hopeless, and pause it, before
# hopeless_min_progress (35 %) of its run once its sweep's (or its application's) checked forecasts
# have held, spend fewer GPU-hours than with the rule off (audited_min_progress=1), and keep every
# sweep's best and the same profit; no trial is stopped for good before 35 % of its run but on
# decisive evidence or a diverged metric; bad values are refused with the setting's name. Needs
# ../shared/data, no cluster.
set -u
. "$(dirname "$0")/lib.sh"

require_sim_pollux
tput=$data/throughputs/gavel_simulation_throughputs.json
[ -r "$tput" ] || skip "../shared/data/throughputs is missing"
sim_tmp
fail=0

# the behind track off (behind_track_margin=0) in every run: on this seed it pauses most of the
# trials this rule would, and what is measured is this rule's alone
het() {
    local params=behind_track_margin=0
    if [ "${1:-}" = --params ]; then
        params+=,$2
        shift 2
    fi
    "$sim" --trace "$data/traces/pollux-workloads/workload-1.csv" --curves "$data/curves" \
        --cluster v100:4x8,p100:4x8,k80:6x8 --throughputs "$tput" --seeds 0 --policies explsched --json --quiet \
        --params "$params" "$@"
}

refuses_params het audited_min_progress=-0.1 audited_min_progress=2 audited_min_progress=soon \
    audited_min_checks=0 audited_min_checks=1000

het --output "$tmp/rec.json" >"$tmp/default.json" || { echo "FAIL: explsched-sim (defaults)"; exit 1; }
het --params audited_min_progress=1 >"$tmp/off.json" || { echo "FAIL: explsched-sim audited_min_progress=1"; exit 1; }
/usr/bin/python3 - "$tmp/default.json" "$tmp/off.json" "$tmp/rec.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))["mean"]["explsched"]
o = json.load(open(sys.argv[2]))["mean"]["explsched"]
trials = json.load(open(sys.argv[3]))["results"][0]["trials"]
print("  audited_min_progress 1 (off) -> 0.15 (default): GPU-h %.1f -> %.1f, sweeps at their best %.3f -> %.3f, "
      "profit %.4f -> %.4f" % (o["gpu_hours"], d["gpu_hours"], o["sweeps_reaching_best"],
                               d["sweeps_reaching_best"], o["profit"], d["profit"]), file=sys.stderr)
problems = []
if not d["gpu_hours"] < 0.9 * o["gpu_hours"]:
    problems.append("GPU-hours %.1f not under 0.9x the rule-off run's %.1f" % (d["gpu_hours"], o["gpu_hours"]))
if d["sweeps_reaching_best"] < o["sweeps_reaching_best"]:
    problems.append("a sweep's best was lost")
if d["profit"] < o["profit"] - 1e-9:
    problems.append("profit fell: %.4f < %.4f" % (d["profit"], o["profit"]))
# judged (and paused) before 35 % of its run on held forecasts
early = [(t, m) for t in trials for m in t["marks"]
         if m["what"] == "pause" and m["step"] < 0.35 * t["max_step"] and "cannot beat the group's best" in m["note"]]
if not early:
    problems.append("no trial was judged hopeless (and paused) before 35 % of its run")
# ... but never stopped for good that early, except on decisive evidence or a diverged metric
for t in trials:
    reason = (t.get("assessment") or {}).get("reason", "")
    if (t["status"] == "stopped" and t["points"] and t["points"][-1][0] < 0.35 * t["max_step"]
            and "early_stop_probability" not in reason and "non-finite" not in reason):
        problems.append("trial %d was stopped for good at %.0f %% of its run: %s"
                        % (t["id"], 100 * t["points"][-1][0] / t["max_step"], reason))
    if t["status"] == "stopped" and t["sweep_best"]:
        problems.append("trial %d, its sweep's best, was stopped" % t["id"])
if early:
    t, m = early[0]
    print("  %d trials paused before 35 %% of their runs, e.g. trial %d at %.0f %%: %s"
          % (len(early), t["id"], 100 * m["step"] / t["max_step"], m["note"]), file=sys.stderr)
for p in problems:
    print("FAIL: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
[ $fail = 0 ] || exit 1
echo "ok: held forecasts are read from 15 % of a run (a pause, not a cancel), save GPU-hours and keep every sweep's best"
