#!/bin/bash
# contrib/bench_curves.sh: the benchmark on sweeps a user brings. Two real sweeps of
# contrib/heldout/fresh are rewritten as a user might keep them (`step,metric` CSVs named
# trial_NN.csv, no direction file, no step-time table); the script must read them as the original
# layout (the same explsched GPU-hours and forecast figures, the loss sweep read as minimised),
# print every policy, the targets, every setting's trade-off and the forecast check, and refuse bad input with an error naming
# the file and line. Needs no cluster, only python3 (stdlib; the Optuna peer where installed).
set -u
. "$(dirname "$0")/lib.sh"

sim=$top_builddir/src/sim/explsched-sim
[ -x "$sim" ] || skip "explsched-sim not built"
bench=$top_srcdir/contrib/bench_curves.sh
export EXPLSCHED_BUILD=$top_builddir
sim_tmp
fail=0

/usr/bin/python3 - "$top_srcdir/contrib/heldout/fresh" "$tmp" <<'PY' || fail=1
import csv, glob, os, shutil, sys
src, tmp = sys.argv[1:3]
for app in ("gbdt_logloss", "moons_mlp_acc"):
    shutil.copytree(os.path.join(src, app), os.path.join(tmp, "orig", app))
    os.makedirs(os.path.join(tmp, "mine", app))
    for path in glob.glob(os.path.join(src, app, "validation-*.csv")):
        k = int(path.rsplit("-", 1)[1][:-4])
        rows = list(csv.DictReader(open(path)))
        with open(os.path.join(tmp, "mine", app, "trial_%02d.csv" % k), "w") as out:
            out.write("step,metric\n")
            out.writelines("%s,%s\n" % (r["iteration"], r["metric"]) for r in rows)
PY

bash "$bench" --seeds 0,1 --out "$tmp/out-mine" "$tmp/mine" >"$tmp/mine.md" 2>"$tmp/mine.log" ||
    { echo "FAIL: bench_curves.sh on the rewritten sweeps: $(tail -3 "$tmp/mine.log")"; fail=1; }
bash "$bench" --seeds 0,1 --out "$tmp/out-orig" "$tmp/orig" >"$tmp/orig.md" 2>"$tmp/orig.log" ||
    { echo "FAIL: bench_curves.sh on the original sweeps: $(tail -3 "$tmp/orig.log")"; fail=1; }
grep -q "gbdt_logloss: no direction file: 'min'" "$tmp/mine.log" ||
    { echo "FAIL: the loss sweep's direction not read as min: $(grep direction "$tmp/mine.log")"; fail=1; }
grep -q "moons_mlp_acc: trial_03.csv -> validation-3.csv" "$tmp/mine.log" ||
    { echo "FAIL: the renumbering not printed"; fail=1; }
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, re, sys
tmp = sys.argv[1]
mine = json.load(open(tmp + "/out-mine/mine.json"))["mean"]
orig = json.load(open(tmp + "/out-orig/orig.json"))["mean"]
md = open(tmp + "/mine.md").read()
problems = []
for policy in ("fifo", "asha", "explsched", "oracle"):
    if policy not in mine:
        problems.append("no %s run" % policy)
    elif abs(mine[policy]["gpu_hours"] - orig[policy]["gpu_hours"]) > 1e-6:
        problems.append("%s: %.4f GPU-h on the rewritten sweeps, %.4f on the originals"
                        % (policy, mine[policy]["gpu_hours"], orig[policy]["gpu_hours"]))
print("  explsched %.2f GPU-h (original layout %.2f), fifo %.2f, sweeps at their best %.0f%%"
      % (mine["explsched"]["gpu_hours"], orig["explsched"]["gpu_hours"], mine["fifo"]["gpu_hours"],
         100 * mine["explsched"]["sweeps_reaching_best"]))
for want in ("## Scenario `mine`", "| **explsched** |", "| sweeps reaching their best >= 99.0% | 100.0% ✔",
             "| GPU-hours vs asha <= 1.0× |", "### Trade-off", "| mine | %.1f, 100.0%% | reduction"
             % mine["explsched"]["gpu_hours"], "### Forecasts"):
    if want not in md:
        problems.append("the report lacks %r" % want)
# the forecast check: both sweeps, every trial, the same figures as the original layout's
rows = {m.group(1): m.group(0) for m in re.finditer(r"^(mine(?:/\w+)?\s+25%).*$", md, re.M)}
orig_md = open(tmp + "/orig.md").read()
if "mine/gbdt_logloss" not in md or "n=20" not in md:
    problems.append("the forecast check does not cover both sweeps' 20 trials")
for key, row in rows.items():
    other = key.replace("mine", "orig", 1)
    theirs = [l for l in orig_md.splitlines() if l.startswith(other.split()[0] + " ") and " 25% " in l]
    if not theirs or row.split()[2:] != theirs[0].split()[2:]:
        problems.append("forecast figures differ from the original layout's: %r vs %r" % (row, theirs))
for p in problems:
    print("FAIL: bench_curves.sh: " + p)
sys.exit(1 if problems else 0)
PY

# bad input: named, nothing half-written reported as a result
bad() {  # bad WHAT EXPECTED_STATUS EXPECTED_TEXT ARGS...
    local what=$1 want=$2 text=$3; shift 3
    local out rc
    out=$(bash "$bench" "$@" 2>&1); rc=$?
    [ "$rc" = "$want" ] || { echo "FAIL: bench_curves.sh $what: exit $rc, want $want: $out"; fail=1; }
    grep -qF -- "$text" <<<"$out" || { echo "FAIL: bench_curves.sh $what: no '$text' in: $out"; fail=1; }
}
mkdir -p "$tmp/bad/s"
printf 'epoch,acc\n1,0.5\n' >"$tmp/bad/s/t.csv"
bad "no step column" 1 "$tmp/bad/s/t.csv:1: header has no step column (step, iteration or progress)" "$tmp/bad"
printf 'step,metric\n1,0.5\n2,abc\n' >"$tmp/bad/s/t.csv"
bad "a metric not a number" 1 "$tmp/bad/s/t.csv:3: column 'metric': 'abc' is not a number" "$tmp/bad"
printf 'step,metric\n2,0.5\n1,0.6\n' >"$tmp/bad/s/t.csv"
bad "steps that decrease" 1 "$tmp/bad/s/t.csv:3: column 'step': step 1 decreases" "$tmp/bad"
printf 'step,metric,loss\n1,0.5\n' >"$tmp/bad/s/t.csv"
bad "a short row" 1 "$tmp/bad/s/t.csv:2: 2 cells, header has 3" "$tmp/bad"
rm "$tmp/bad/s/t.csv"
bad "a sweep without curves" 1 "$tmp/bad/s: no trial curves" "$tmp/bad"
rmdir "$tmp/bad/s"
bad "no sweeps" 1 "$tmp/bad: no sweep directories" "$tmp/bad"
bad "a missing directory" 1 "$tmp/none: no such directory" "$tmp/none"
bad "an unknown option" 2 "unknown option '--gpu'" --gpu 8 "$tmp/mine"
bad "a bad GPU count" 2 "--gpus: 'x' is not a positive whole number" --gpus x "$tmp/mine"
exit $fail
