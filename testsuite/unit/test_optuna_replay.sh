#!/bin/bash
# contrib/optuna_replay.py on hand-made workloads whose figures are known: a trial that waits for
# GPUs, a trial MedianPruner prunes at its first report (its GPU goes to the next trial at once),
# a late bloomer lost that way, a diverged trial SuccessiveHalvingPruner prunes on NaN, and the
# pruners' settings of the trade-off runs (sha:R:M, hyperband:R:M, median:S:W). Then,
# when explsched-sim is built, a real exported workload under NopPruner against the simulator's
# fifo (same GPU-hours: every trial runs its whole curve in both).
set -euo pipefail
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
/usr/bin/python3 -c 'import optuna, numpy' 2>/dev/null || { echo "SKIP: needs python3-optuna and python3-numpy"; exit 77; }
tmp=$(mktemp -d /tmp/test-optuna-replay-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/python3 - "$top/contrib/optuna_replay.py" "$tmp" <<'EOF'
import json, math, subprocess, sys
script, tmp = sys.argv[1], sys.argv[2]

def trial(i, sweep, arrival, gpus, steps, quality, speed=1.0):
    return {"id": i + 1, "sweep": sweep, "arrival": arrival, "gpus": gpus, "duration": steps[-1] / speed,
            "max_step": steps[-1], "speed": {"v100": speed}, "steps": steps,
            "metrics": quality, "quality": quality}

def sweep(best_trial, best_quality, final):
    return {"name": "s", "application": "x", "best_trial": best_trial, "best_quality": best_quality,
            "target_quality": final - 0.01, "first_arrival": 0.0}

def run(workload, pruner):
    path = "%s/w-%s.json" % (tmp, pruner)
    json.dump({"tolerance": 0.01, "seeds": [workload]}, open(path, "w"))
    out = subprocess.run([sys.executable, script, path, "--pruners", pruner, "--quiet"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["runs"][0]

failed = []
def check(what, got, want):
    ok = (got is None and want is None) or (got is not None and want is not None and abs(got - want) < 1e-9)
    print("%-4s %-40s got %r want %r" % ("ok" if ok else "FAIL", what, got, want))
    if not ok:
        failed.append(what)

# A: 2 GPUs, no pruning. Trials 0 and 1 run at once (0-200 s); trial 2 (2 GPUs, arrives at 50 s)
# waits for both and runs 200-300 s. Trial 1 reaches the best (0.9) at 200 s.
a = {"seed": 0, "cluster": [{"type": "v100", "gpus": 2}], "sweeps": [sweep(1, 0.9, 0.9)], "trials": [
    trial(0, 0, 0.0, 1, [100.0, 200.0], [0.2, 0.5]),
    trial(1, 0, 0.0, 1, [100.0, 200.0], [0.3, 0.9]),
    trial(2, 0, 50.0, 2, [100.0], [0.4])]}
m = run(a, "none")
check("A gpu_hours", m["gpu_hours"], 600 / 3600)
check("A non_best_gpu_hours", m["non_best_gpu_hours"], 400 / 3600)
check("A time_to_best_mean_h", m["time_to_best_mean_h"], 200 / 3600)
check("A profit", m["profit"], 0.9)
check("A sweeps_reaching_best", m["sweeps_reaching_best"], 1.0)
check("A makespan_h", m["makespan_h"], 300 / 3600)
check("A jct_mean_h", m["jct_mean_h"], (200 + 200 + 250) / 3 / 3600)
check("A utilisation", m["utilisation"], 600 / (2 * 300))
check("A finished", m["finished"], 3)

# B: 1 GPU, MedianPruner. Five trials complete one after another (0-100 s, 0.5 at epoch 1); the
# sixth reports 0.1 at epoch 1 (110 s), under the median: pruned after 10 s, though it would end
# best (0.9). The seventh starts at 110 s and ends at 130 s with 0.7: the sweep's best is lost.
b = {"seed": 1, "cluster": [{"type": "v100", "gpus": 1}], "sweeps": [sweep(5, 0.9, 0.9)],
     "trials": [trial(i, 0, 0.0, 1, [10.0, 20.0], [0.5, 0.6]) for i in range(5)] +
               [trial(5, 0, 0.0, 1, [10.0, 20.0], [0.1, 0.9]), trial(6, 0, 0.0, 1, [10.0, 20.0], [0.6, 0.7])]}
m = run(b, "median")
check("B stopped", m["stopped"], 1)
check("B stopped_gpu_hours", m["stopped_gpu_hours"], 10 / 3600)
check("B gpu_hours", m["gpu_hours"], 130 / 3600)
check("B profit", m["profit"], 0.7)
check("B profit_bound", m["profit_bound"], 0.9)
check("B sweeps_reaching_best", m["sweeps_reaching_best"], 0.0)
check("B time_to_best_mean_h", m["time_to_best_mean_h"], None)
check("B makespan_h", m["makespan_h"], 130 / 3600)

# C: SuccessiveHalvingPruner(min_resource=1) prunes a diverged trial (NaN) at its first report;
# the healthy one beside it, at half speed, reaches the best at 40 s.
c = {"seed": 2, "cluster": [{"type": "v100", "gpus": 2}], "sweeps": [sweep(0, 0.8, 0.8)], "trials": [
    trial(0, 0, 0.0, 1, [10.0, 20.0], [0.4, 0.8], speed=0.5),
    trial(1, 0, 0.0, 1, [10.0, 20.0], [None, None])]}
m = run(c, "sha")
check("C stopped", m["stopped"], 1)
check("C gpu_hours", m["gpu_hours"], (40 + 10) / 3600)
check("C time_to_best_mean_h", m["time_to_best_mean_h"], 40 / 3600)

# D: SuccessiveHalvingPruner at other settings (sha:R:M, the trade-off runs). One GPU: a good trial
# first, then three worse ones, four epochs of 10 s each. sha:4:1 is sha's own setting; with
# min_resource 2 no trial is pruned before its second report (3 pruned: at least 60 s), with 1 one
# is pruned after its first.
d = {"seed": 3, "cluster": [{"type": "v100", "gpus": 1}], "sweeps": [sweep(0, 0.95, 0.95)], "trials": [
    trial(0, 0, 0.0, 1, [10.0, 20.0, 30.0, 40.0], [0.5, 0.9, 0.95, 0.95])] +
    [trial(i, 0, 0.0, 1, [10.0, 20.0, 30.0, 40.0], [0.4, 0.5, 0.6, 0.7]) for i in range(1, 4)]}
base, same = run(d, "sha"), run(d, "sha:4:1")
check("D sha:4:1 policy name", 1.0 if same["policy"] == "optuna-sha:4:1" else 0.0, 1.0)
check("D sha:4:1 gpu_hours = sha's", same["gpu_hours"], base["gpu_hours"])
check("D sha:4:1 stopped = sha's", same["stopped"], base["stopped"])
late, early = run(d, "sha:2:2"), run(d, "sha:2:1")
check("D sha:2:2 stopped", late["stopped"], 3)
check("D sha:2:2 no prune before epoch 2", 1.0 if late["stopped_gpu_hours"] * 3600 >= 60 - 1e-6 else 0.0, 1.0)
check("D sha:2:1 prunes after epoch 1", 1.0 if early["stopped_gpu_hours"] * 3600 < 60 - 1e-6 else 0.0, 1.0)
# E: MedianPruner at other settings (median:S:W). On D's workload the good trial completes first;
# median:1:0 then prunes each worse one after its first report (under the completed trial's 0.5),
# median:1:2 only from its second (n_warmup_steps 2), and median:5:0 never (fewer than 5 trials
# complete before the last one ends), as Optuna's default MedianPruner.
m10, m12, m50, named = run(d, "median:1:0"), run(d, "median:1:2"), run(d, "median:5:0"), run(d, "median")
check("E median:1:0 policy name", 1.0 if m10["policy"] == "optuna-median:1:0" else 0.0, 1.0)
check("E median:1:0 stopped", m10["stopped"], 3)
check("E median:1:0 stopped_gpu_hours", m10["stopped_gpu_hours"], 30 / 3600)
check("E median:1:2 stopped", m12["stopped"], 3)
check("E median:1:2 stopped_gpu_hours", m12["stopped_gpu_hours"], 60 / 3600)
check("E median:5:0 stopped", m50["stopped"], 0)
check("E median:5:0 gpu_hours = median's", m50["gpu_hours"], named["gpu_hours"])

# F: HyperbandPruner at other settings (hyperband:R:M). hyperband:3:1 is hyperband's own setting;
# a min_resource past the sweep's epochs is cut to them (one rung at the last report: every trial
# runs its whole curve, 4 x 40 s).
h31, hb = run(d, "hyperband:3:1"), run(d, "hyperband")
check("F hyperband:3:1 policy name", 1.0 if h31["policy"] == "optuna-hyperband:3:1" else 0.0, 1.0)
check("F hyperband:3:1 gpu_hours = hyperband's", h31["gpu_hours"], hb["gpu_hours"])
check("F hyperband:3:1 stopped = hyperband's", h31["stopped"], hb["stopped"])
check("F hyperband:2:30 gpu_hours (min_resource cut to 4 epochs)", run(d, "hyperband:2:30")["gpu_hours"], 160 / 3600)
for bad, says in (("sha:1:1", "R must be in 2..10"), ("sha:2", "is not sha:R:M"), ("sha:x:1", "is not sha:R:M"),
                  ("hyperband:1:1", "R must be in 2..10"), ("hyperband:3:0", "M >= 1"),
                  ("median:0:0", "S must be >= 1"), ("median:1", "is not median:S:W"),
                  ("median:1:-1", "W >= 0"), ("bogus", "is not one of")):
    path = "%s/w-bad.json" % tmp
    json.dump({"tolerance": 0.01, "seeds": [d]}, open(path, "w"))
    p = subprocess.run([sys.executable, script, path, "--pruners", bad], capture_output=True, text=True)
    ok = p.returncode == 2 and ("--pruners" in p.stderr and says in p.stderr)
    print("%-4s --pruners %-8s refused: %s" % ("ok" if ok else "FAIL", bad, p.stderr.strip().splitlines()[-1:]))
    if not ok:
        failed.append("--pruners " + bad)
sys.exit(1 if failed else 0)
EOF

# The simulator's own workload: NopPruner spends exactly fifo's GPU-hours and reaches the same
# profit (both train every trial to its end).
sim=${top_builddir:-$(pwd)/../..}/src/sim/explsched-sim
data=${EXPLSCHED_DATA:-$top/../shared/data}
if [ ! -x "$sim" ] || [ ! -d "$data/curves" ]; then
    echo "SKIP part 2: no built explsched-sim or no $data/curves"
    exit 0
fi
trace=$data/traces/pollux-workloads/workload-1.csv
"$sim" --trace "$trace" --curves "$data/curves" --gpus 64 --seeds 0 --export-workload "$tmp/w.json"
"$sim" --trace "$trace" --curves "$data/curves" --gpus 64 --seeds 0 --policies fifo --json --quiet >"$tmp/fifo.json"
/usr/bin/python3 "$top/contrib/optuna_replay.py" "$tmp/w.json" --pruners none --quiet -o "$tmp/none.json"
/usr/bin/python3 - "$tmp/fifo.json" "$tmp/none.json" <<'EOF'
import json, sys
fifo = json.load(open(sys.argv[1]))["mean"]["fifo"]
none = json.load(open(sys.argv[2]))["mean"]["optuna-none"]
bad = 0
for key, tol in (("gpu_hours", 1e-6), ("profit", 1e-9), ("profit_bound", 1e-9), ("trials", 0), ("sweeps", 0),
                 ("sweeps_reaching_best", 1e-9), ("time_to_best_mean_h", 0.05)):
    ok = abs(fifo[key] - none[key]) <= tol * max(1.0, abs(fifo[key]))
    print("%-4s fifo vs optuna-none %-22s %r %r" % ("ok" if ok else "FAIL", key, fifo[key], none[key]))
    bad += not ok
sys.exit(1 if bad else 0)
EOF
