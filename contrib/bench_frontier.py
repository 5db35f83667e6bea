#!/usr/bin/python3
"""bench_frontier.py: the trade-off between GPU-hours and the sweeps kept at their best, for asha
at each of its settings and explsched at each of a few of its own, on one scenario.

    bench_frontier.py SIM SEEDS OUT.json -- SCENARIO-ARGS...

Runs `SIM --seeds SEEDS --json --quiet SCENARIO-ARGS` once per setting: asha with
--asha-reduction E (2, 3, 4) and --asha-rungs K (1, 2, 3), explsched with its defaults and with
the --params below (each one setting moved, then the aggressive profile); and, where
python3-optuna is installed, the same workloads (SIM --export-workload) through Optuna's pruners
(contrib/optuna_replay.py --pruners): SuccessiveHalvingPruner and HyperbandPruner at
reduction_factor R (2, 3, 4) and min_resource M (1, 10, 30 epochs; sha:R:M, hyperband:R:M),
and MedianPruner at n_startup_trials S (1, 5) and n_warmup_steps W (0, 10, 30 epochs;
median:S:W); policies "optuna-sha", "optuna-hyperband", "optuna-median". Writes OUT.json:
{"seeds", "args", "points": [{"policy", "setting", "gpu_hours", "sweeps_at_best", "profit_pct",
"time_to_best_h"}]}, means over the seeds. bench_report.py turns it into tables: each explsched
setting against the cheapest asha and Optuna settings that keep at least as many sweeps at
their best, and each of their settings over all scenarios against explsched's defaults. asha at
its usual setting (E=3, K=3) loses best models that another keeps, so the targets' "GPU-hours vs
asha" alone does not say which policy spends less for the same sweeps kept.
"""
import json
import os
import subprocess
import sys
import tempfile

ASHA = [(e, k) for e in (2, 3, 4) for k in (1, 2, 3)]
# Optuna's pruners at each setting: (optuna_replay.py's name, policy, setting as the tables name it)
OPTUNA = ([("sha:%d:%d" % (r, m), "optuna-sha", "reduction %d, min_resource %d" % (r, m))
           for r in (2, 3, 4) for m in (1, 10, 30)]
          + [("hyperband:%d:%d" % (r, m), "optuna-hyperband", "reduction %d, min_resource %d" % (r, m))
             for r in (2, 3, 4) for m in (1, 10, 30)]
          + [("median:%d:%d" % (n, w), "optuna-median", "n_startup_trials %d, n_warmup_steps %d" % (n, w))
             for n in (1, 5) for w in (0, 10, 30)])
AGGRESSIVE = "hopeless_min_progress=0,milestone_stop_probability=1,milestone_stop_unpredicted=yes,min_expected_gain=0.02"
EXPLSCHED = [
    "",
    "hopeless_probability=0.05",
    "hopeless_probability=0.1",
    "hopeless_min_progress=0.2",
    "hopeless_min_progress=0.1",
    "milestone_stop_probability=1",
    AGGRESSIVE,
]


def run(sim, seeds, args, policy, extra):
    cmd = [sim, "--seeds", seeds, "--json", "--quiet", "--policies", policy] + args + extra
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit("bench_frontier.py: %s failed (%d): %s" % (" ".join(cmd), done.returncode,
                                                                    done.stderr.strip()[-400:]))
    m = json.loads(done.stdout)["mean"][policy]
    bound = m.get("profit_bound") or 0.0
    return {
        "gpu_hours": m["gpu_hours"],
        "sweeps_at_best": 100.0 * m["sweeps_reaching_best"],
        "profit_pct": 100.0 * m["profit"] / bound if bound > 0 else None,
        "time_to_best_h": m.get("time_to_best_mean_h"),
    }


def optuna_points(sim, seeds, args):
    """The points of Optuna's pruners (OPTUNA), or [] (with a warning) without python3-optuna."""
    try:
        import optuna  # noqa: F401
    except ImportError:
        sys.stderr.write("bench_frontier.py: warning: no python3-optuna: Optuna's points are left out\n")
        return []
    replay = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optuna_replay.py")
    with tempfile.TemporaryDirectory(prefix="explsched-frontier-") as tmp:
        workload, summary = os.path.join(tmp, "workload.json"), os.path.join(tmp, "optuna.json")
        cmd = [sim, "--seeds", seeds, "--quiet"] + args + ["--export-workload", workload]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit("bench_frontier.py: %s failed (%d): %s" % (" ".join(cmd), done.returncode,
                                                                        done.stderr.strip()[-400:]))
        pruners = ",".join(name for name, _, _ in OPTUNA)
        cmd = [sys.executable, replay, workload, "--pruners", pruners, "--quiet", "-o", summary]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit("bench_frontier.py: %s failed (%d): %s" % (" ".join(cmd), done.returncode,
                                                                        done.stderr.strip()[-400:]))
        means = json.load(open(summary))["mean"]
    points = []
    for name, policy, setting in OPTUNA:
        x = means["optuna-" + name]
        bound = x.get("profit_bound") or 0.0
        points.append({"policy": policy, "setting": setting,
                       "gpu_hours": x["gpu_hours"], "sweeps_at_best": 100.0 * x["sweeps_reaching_best"],
                       "profit_pct": 100.0 * x["profit"] / bound if bound > 0 else None,
                       "time_to_best_h": x.get("time_to_best_mean_h")})
    return points


def main(argv):
    if len(argv) < 5 or argv[4] != "--":
        sys.stderr.write(__doc__)
        return 2
    sim, seeds, out = argv[1], argv[2], argv[3]
    args = argv[5:]
    points = []
    for e, k in ASHA:
        p = run(sim, seeds, args, "asha", ["--asha-reduction", str(e), "--asha-rungs", str(k)])
        p.update(policy="asha", setting="reduction %d, %d rung%s" % (e, k, "" if k == 1 else "s"))
        points.append(p)
    for params in EXPLSCHED:
        p = run(sim, seeds, args, "explsched", ["--params", params] if params else [])
        p.update(policy="explsched", setting=params or "defaults")
        points.append(p)
    points += optuna_points(sim, seeds, args)
    with open(out, "w") as f:
        json.dump({"seeds": seeds, "args": args, "points": points}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
