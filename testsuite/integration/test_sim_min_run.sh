#!/bin/bash
# The grace after a (re)start (min_run, 600 s by default) holds between re-rankings too. The
# engine writes "preemptable" at a re-ranking; a trial preempted, requeued and started again before
# the next one still carries it, and the preempt plugin once let the next trial preempt it at once
# (pollux-real-curves, seed 0: the ImageNet sweep's eventual best, 32 GPUs, was preempted 60 s
# after a restart). The plugin and the simulator now check the grace against the current run, as
# Slurm checks PreemptExemptTime. Needs ../shared/data, no cluster.
set -u
. "$(dirname "$0")/lib.sh"

require_sim_pollux
sim_tmp
fail=0

run() {  # NAME ARGS...: explsched with trial records
    local name=$1
    shift
    "$sim" --curves "$data/curves" --seeds 0 --policies explsched --quiet --output "$tmp/$name.json" "$@" \
        >/dev/null || { echo "FAIL: explsched-sim $*"; fail=1; }
}
run real --trace "$data/traces/pollux-workloads/workload-1.csv" --gpus 64 --variation none
run real0 --trace "$data/traces/pollux-workloads/workload-1.csv" --gpus 64 --variation none --min-run 0
if [ -r "$data/traces/philly.csv" ]; then
    run philly --trace "$data/traces/philly.csv" --jobs 300 --gpus 32
fi

/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, os, sys
tmp = sys.argv[1]

def early_preemptions(name, grace):
    """(preemptions, restarts preempted again, [(trial, seconds after its start)] under grace)."""
    trials = json.load(open(os.path.join(tmp, name + ".json")))["results"][0]["trials"]
    total, again, early = 0, 0, []
    for t in trials:
        start, starts = None, 0
        for m in t["marks"]:
            if m["what"] == "start":
                start, starts = m["time"], starts + 1
            elif m["what"] == "preempt":
                total += 1
                again += starts > 1
                if start is not None and m["time"] - start < grace:
                    early.append((t["name"], round(m["time"] - start)))
    return total, again, early

problems = []
for name in ("real", "philly"):
    if not os.path.exists(os.path.join(tmp, name + ".json")):
        continue
    total, again, early = early_preemptions(name, 600)
    print("%s: %d preemptions, %d of them after a restart, %d within 600 s of a start" % (name, total, again, len(early)))
    if early:
        problems.append("%s: preempted within the 600 s grace of a (re)start: %s" % (name, early[:5]))
    if again == 0:
        problems.append("%s: no trial was preempted after a restart: the check saw nothing" % name)
# without a grace the same workload does preempt trials soon after they start: the check can fail
total, again, early = early_preemptions("real0", 600)
print("real, --min-run 0: %d preemptions, %d within 600 s of a start" % (total, len(early)))
if not early:
    problems.append("--min-run 0: no preemption within 600 s of a start, so the grace check above proves nothing")
for p in problems:
    print("FAIL: " + p)
sys.exit(1 if problems else 0)
PY
exit $fail
