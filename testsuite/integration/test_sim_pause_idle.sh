#!/bin/bash
# The site setting pause_idle_utility (off by default) in the simulator: on the Pollux workload
# (seed 0), a trial the pause rule picks past hopeless_min_progress whose utility is next to nothing
# is paused although no trial waits for its GPUs; the decision says so, the pause holds (the trial
# is not running again before a later decision), the run spends no more GPU-hours than the
# defaults and keeps every sweep's best they keep. Off, no decision says so. A bad value is refused
# with the setting's name. Both runs have the behind track off (behind_track_margin=0): it pauses
# most of the same trials earlier, and what is measured is the setting's alone. Needs
# ../shared/data, no cluster.
set -u
. "$(dirname "$0")/lib.sh"

require_sim_pollux
sim_tmp
fail=0

pollux() { sim_pollux_with 0 behind_track_margin=0 "$@"; }

refuses_params pollux pause_idle_utility=-0.1 pause_idle_utility=1.5 pause_idle_utility=lots

pollux --output "$tmp/default-rec.json" >"$tmp/default.json" || { echo "FAIL: explsched-sim (defaults)"; exit 1; }
pollux --params pause_idle_utility=0.05 --output "$tmp/rec.json" >"$tmp/idle.json" ||
    { echo "FAIL: explsched-sim pause_idle_utility=0.05"; exit 1; }
/usr/bin/python3 - "$tmp/default.json" "$tmp/idle.json" "$tmp/default-rec.json" "$tmp/rec.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))["mean"]["explsched"]
c = json.load(open(sys.argv[2]))["mean"]["explsched"]
print("  GPU-h %.1f -> %.1f, sweeps at their best %.3f -> %.3f, pauses %d -> %d"
      % (d["gpu_hours"], c["gpu_hours"], d["sweeps_reaching_best"], c["sweeps_reaching_best"],
         d["pauses"], c["pauses"]), file=sys.stderr)
TEXT = "although no trial waits for its GPUs"
def idle_pauses(path):
    found = []
    for t in json.load(open(path))["results"][0]["trials"]:
        marks = t["marks"]
        for i, m in enumerate(marks):
            if m["what"] == "pause" and TEXT in m["note"]:
                found.append((t, marks[i + 1:]))
    return found
problems = []
if idle_pauses(sys.argv[3]):
    problems.append("the defaults paused a trial with nobody waiting (pause_idle_utility is off)")
idle = idle_pauses(sys.argv[4])
if not idle:
    problems.append("no decision says it paused a trial although no trial waits")
for t, after in idle:
    # the pause holds: no progress is recorded until a later decision resumes or stops it
    if after and after[0]["what"] not in ("resume", "stop", "start"):
        problems.append("trial %s: after its idle pause came '%s'" % (t["id"], after[0]["what"]))
if not c["gpu_hours"] <= d["gpu_hours"]:
    problems.append("GPU-hours %.1f over the defaults' %.1f" % (c["gpu_hours"], d["gpu_hours"]))
if c["sweeps_reaching_best"] < d["sweeps_reaching_best"]:
    problems.append("a sweep's best was lost")
for p in problems:
    print("FAIL: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
# `explsched why` on a paused trial that waits for its sweep's leaders (paused_bound_behind): the
# recording's last assessment of the idle-paused trial, as the engine words such a round.
/usr/bin/python3 - "$tmp/rec.json" "$tmp/waiting.json" <<'PY' || fail=1
import json, sys
rec = json.load(open(sys.argv[1]))
run = rec["results"][0]
t = next(t for t in run["trials"] if any(m["what"] == "pause" and "although no trial waits" in m["note"]
                                         for m in t["marks"]))
t["assessment"]["decision"] = "pause"
t["assessment"]["reason"] = ("pause: paused; even its optimistic bound 0.4432 is behind the group's best 0.4848 "
                             "(chance 0.048): not resumed while its sweep's other trials run, stopped once the "
                             "chance is under hopeless_probability")
json.dump(rec, open(sys.argv[2], "w"))
print(t["id"], file=open(sys.argv[2] + ".id", "w"))
# ... and the same trial at its idle pause, in the engine's words for it (ReasonCode::pause_idle)
t["assessment"]["reason"] = ("pause: chance 0.05 to beat the group's best is below 0.2, its utility 1e-09/GPU-s "
                             "is next to nothing at the GPU price 2e-08 and even its optimistic bound 0.4432 is "
                             "not worth the price: paused with its checkpoint although no trial waits for its GPUs")
json.dump(rec, open(sys.argv[2] + ".idle", "w"))
PY
if [ -s "$tmp/waiting.json.id" ]; then
    out=$("$cli" why --sim "$tmp/waiting.json" "$(cat "$tmp/waiting.json.id")" 2>&1)
    grep -q "not resumed, however cheap GPUs are, while its sweep's other trials run" <<<"$out" ||
        { echo "FAIL: why does not explain a trial waiting for its sweep's leaders: $out"; fail=1; }
    grep -q "resumes as its sweep's last" <<<"$out" || { echo "FAIL: why: $out"; fail=1; }
    out=$("$cli" why --sim "$tmp/waiting.json.idle" "$(cat "$tmp/waiting.json.id")" 2>&1)
    grep -q "It is paused although no trial waits for its GPUs (pause_idle_utility" <<<"$out" ||
        { echo "FAIL: why does not explain an idle pause: $out"; fail=1; }
    grep -q "It is paused: requeued and held" <<<"$out" &&
        { echo "FAIL: why adds the generic pause paragraph to an idle pause: $out"; fail=1; }
fi
[ $fail = 0 ] || exit 1
echo "ok: pause_idle_utility pauses a trial buying next to nothing with nobody waiting, says so, and keeps every sweep's best"
