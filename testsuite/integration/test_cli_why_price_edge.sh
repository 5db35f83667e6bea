#!/bin/bash
# `explsched why` on a trial whose utility sits on the GPU price: SystemComment keeps four digits,
# so a utility a hair under the price reads back equal to it. The answer must follow the engine's
# decision (computed at full precision), not the rounded figures: a preemptable trial is not
# told that it keeps its GPUs, and a kept one is not told that it is preemptable; nor is a trial
# below the price that is kept for its grace after a (re)start (min_run_s), nor one judged hopeless
# but kept for its grace after a resume from a pause (resumed_grace), nor a resumed trial
# told it cannot be paused again where pause_max allows more. The records are
# a simulator run's (Pollux workload, 40 jobs) with one trial's assessment rewritten to the
# rounded figures. Needs ../shared/data, no cluster.
set -u
. "$(dirname "$0")/lib.sh"

require_sim_pollux
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

sim_pollux 0 --jobs 40 --output "$tmp/rec.json" >/dev/null || { echo "FAIL: explsched-sim"; exit 1; }

# edit CASE: the first trial with a curve gets the price 1.234e-07 and, by CASE, "below" the same
# utility with a decision below the price, "above" a utility a hair under it (1.2339e-07, printed
# 1.234e-07) with a decision at the price, "grace" a utility well under it with a decision that
# keeps it for its grace; prints its id.
edit() {
    /usr/bin/python3 - "$tmp/rec.json" "$tmp/$1.json" "$1" <<'PY'
import json, sys
rec = json.load(open(sys.argv[1]))
trial = next(t for t in rec["results"][0]["trials"] if t["points"] and t.get("assessment"))
a = trial["assessment"]
a["utility"] = a["price"] = 1.234e-07
a["state"] = "promising"
if sys.argv[3] == "resumed-again":
    # resumed (ReasonCode::resumed) under a run that allows three pauses per trial
    rec.setdefault("config", {})["params"] = "pause_max=3"
    a["decision"] = "keep"
    a["reason"] = ("keep: resumed from pause: optimistic utility 2e-07/GPU-s is at least the GPU price "
                   "1.234e-07 at load 0.9 (optimistic bound 0.3, group's best 0.25)")
elif sys.argv[3] == "resumed":
    # the engine's resumed_grace text (describe(), test_sched_pause)
    a["state"] = "hopeless"
    a["decision"] = "keep"
    a["reason"] = ("keep: resumed from pause 14 s ago: no verdict on its forecast before min_run 20 s "
                   "(its chance to beat the group's best 0.223 is 0.017)")
elif sys.argv[3] == "grace":
    a["utility"] = 0.5e-07
    a["decision"] = "keep"
    a["reason"] = "keep: running 420 s, not preemptable before 600 s"
elif sys.argv[3] == "below":
    a["decision"] = "preemptable"
    a["reason"] = "preemptable: utility 1.234e-07/GPU-s is below the GPU price 1.234e-07 at load 0.9"
else:
    a["decision"] = "keep"
    a["utility"] = 1.2339e-07
    a["reason"] = "keep: utility 1.234e-07/GPU-s is at least the GPU price 1.234e-07 at load 0.9"
json.dump(rec, open(sys.argv[2], "w"))
print(trial["id"])
PY
}

id=$(edit below) || { echo "FAIL: could not edit the record"; exit 1; }
out=$("$cli" why --sim "$tmp/below.json" "$id" 2>&1) || { echo "FAIL: why $id: $out"; fail=1; }
grep -q "a hair below (equal in the digits kept) the price" <<<"$out" || { echo "FAIL: below: no 'a hair below': $out"; fail=1; }
grep -q "it keeps (or would get) GPUs" <<<"$out" && { echo "FAIL: below: a preemptable trial is told it keeps its GPUs: $out"; fail=1; }
grep -q "predicted gain grew 1.00x" <<<"$out" || { echo "FAIL: below: no 1.00x: $out"; fail=1; }

id=$(edit above) || { echo "FAIL: could not edit the record"; exit 1; }
out=$("$cli" why --sim "$tmp/above.json" "$id" 2>&1) || { echo "FAIL: why $id: $out"; fail=1; }
grep -q "it keeps (or would get) GPUs" <<<"$out" || { echo "FAIL: above: a kept trial is not told it keeps its GPUs: $out"; fail=1; }
grep -q "it is preemptable (or waits)" <<<"$out" && { echo "FAIL: above: a kept trial is told it is preemptable: $out"; fail=1; }

# below the price but within its grace after a (re)start (min_run_s): kept, not preemptable yet
id=$(edit grace) || { echo "FAIL: could not edit the record"; exit 1; }
out=$("$cli" why --sim "$tmp/grace.json" "$id" 2>&1) || { echo "FAIL: why $id: $out"; fail=1; }
grep -q "it keeps its GPUs only until its grace" <<<"$out" || { echo "FAIL: grace: not told it keeps its GPUs for its grace: $out"; fail=1; }
grep -q "it is preemptable (or waits)" <<<"$out" && { echo "FAIL: grace: a trial in its grace is told it is preemptable now: $out"; fail=1; }
grep -q "After its grace, a waiting trial takes its GPUs" <<<"$out" || { echo "FAIL: grace: no 'After its grace': $out"; fail=1; }

# judged hopeless, but kept for its grace after a resume from a pause: neither stopped nor told so
id=$(edit resumed) || { echo "FAIL: could not edit the record"; exit 1; }
out=$("$cli" why --sim "$tmp/resumed.json" "$id" 2>&1) || { echo "FAIL: why $id: $out"; fail=1; }
grep -q "It was paused and then resumed" <<<"$out" || { echo "FAIL: resumed: no word of the resume: $out"; fail=1; }
grep -q "until it has run min_run (600 s) since the restart" <<<"$out" || { echo "FAIL: resumed: min_run not named: $out"; fail=1; }
grep -q "cannot beat what its sweep's" <<<"$out" && { echo "FAIL: resumed: told it cannot win as a stopped trial: $out"; fail=1; }

# resumed under pause_max=3: told it may be paused again, with the run's pause_max
id=$(edit resumed-again) || { echo "FAIL: could not edit the record"; exit 1; }
out=$("$cli" why --sim "$tmp/resumed-again.json" "$id" 2>&1) || { echo "FAIL: why $id: $out"; fail=1; }
grep -q "it may be paused again only while it has pauses left (pause_max: 3 per trial)" <<<"$out" ||
    { echo "FAIL: resumed-again: pause_max 3 not named: $out"; fail=1; }
grep -q "not paused again" <<<"$out" && { echo "FAIL: resumed-again: told it is not paused again: $out"; fail=1; }

[ $fail = 0 ] && echo "ok: explsched why follows the decision when utility and price read back equal, and in a trial's grace"
exit $fail
