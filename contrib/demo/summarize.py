#!/usr/bin/python3
"""Summarises demo sweeps run under different priority plugins, from the trials' own logs.

Each trial log (trial.<task>.out) holds run_start/run_end lines (epoch seconds, one pair per run:
a preempted trial runs more than once) and train.py's JSON lines (step, val_loss, t). The state
file (states.<policy>) holds "task JobState Restarts" from scontrol at the end.

Figures, per policy:
  best     the best final validation loss of a trial that ran to its last step
  t_best   seconds from submission until some trial first reached the sweep's best final loss
           (the best over all policies: same hyperparameters and seeds give the same curves;
           with --own-best, each run's own best: different sweeps, e.g. two users')
  gpu_h    GPU-hours used by the whole sweep (1 GPU per trial; sum of run lengths)
  stopped  trials ExplSched stopped as hopeless; gpu_h_stopped: GPU-hours spent on those same
           trials under each policy (with --own-best: on each run's own stopped trials)
  pruned   trials that Optuna's pruner stopped (train.py printed {"event": "pruned"})
With explsched, basic and optuna all given, it also checks the live demo's targets: time to best
<= 0.5x basic's and <= 0.7x optuna's, GPU-hours <= optuna's, and the sweep's best kept.
"""
import json
import os
import sys


def read_policy(d):
    trials = {}
    for name in os.listdir(d):
        if not (name.startswith("trial.") and name.endswith(".out")):
            continue
        task = int(name.split(".")[1])
        runs, evals, open_start, pruned = [], [], None, False
        with open(os.path.join(d, name)) as f:
            for line in f:
                line = line.strip()
                if line.startswith("run_start "):
                    open_start = float(line.split()[1])
                elif line.startswith("run_end ") and open_start is not None:
                    runs.append((open_start, float(line.split()[1])))
                    open_start = None
                elif line.startswith("{"):
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    if "val_loss" in rec:
                        evals.append(rec)
                    elif rec.get("event") == "pruned":
                        pruned = True
        trials[task] = {"runs": runs, "evals": evals, "pruned": pruned}
    states = {}
    with open(os.path.join(d, "states")) as f:
        for line in f:
            task, state, restarts = line.split()
            states[int(task)] = (state, int(restarts))
    with open(os.path.join(d, "submitted")) as f:
        submitted = float(f.read())
    return trials, states, submitted


def main():
    args = sys.argv[1:]
    # --own-best: the runs are different sweeps (two users), each timed to its own best final loss
    own_best = bool(args) and args[0] == "--own-best"
    if own_best:
        args = args[1:]
    steps = int(args[0])
    dirs = dict(arg.split("=", 1) for arg in args[1:])
    data = {p: read_policy(d) for p, d in dirs.items()}
    finals = []
    for p, (trials, states, _) in data.items():
        for task, t in trials.items():
            if t["evals"] and t["evals"][-1]["step"] >= steps:
                finals.append(t["evals"][-1]["val_loss"])
    target = min(finals)
    # The trials ExplSched stopped: with an explsched arm, its stopped tasks, costed under every
    # arm (the same sweep); with --own-best (each run its own sweep under ExplSched, e.g. two
    # users'), each run's own.
    def stopped_in(states):
        return {task for task, (state, _) in states.items() if state != "COMPLETED"}
    shared_stopped = None
    if not own_best:
        shared_stopped = stopped_in(data["explsched"][1]) if "explsched" in data else set()
    rows = []
    for p, (trials, states, submitted) in data.items():
        stopped = stopped_in(states) if own_best else shared_stopped
        done = [t["evals"][-1]["val_loss"] for t in trials.values() if t["evals"] and t["evals"][-1]["step"] >= steps]
        goal = (min(done) if done else float("nan")) if own_best else target
        reach = [e["t"] for t in trials.values() for e in t["evals"] if e["val_loss"] <= goal + 1e-12]
        gpu_s = sum(b - a for t in trials.values() for a, b in t["runs"])
        gpu_s_stopped = sum(b - a for task, t in trials.items() if task in stopped for a, b in t["runs"])
        preempted = sorted(task for task, (_, r) in states.items() if r > 0 and states[task][0] == "COMPLETED")
        cancelled = sorted(task for task, (s, _) in states.items() if s == "CANCELLED")
        held = sorted(task for task, (s, _) in states.items() if s == "PENDING")
        rows.append({
            "policy": p, "best": min(done) if done else float("nan"),
            "t_best": (min(reach) - submitted) if reach else float("nan"),
            "gpu_h": gpu_s / 3600.0, "gpu_h_stopped": gpu_s_stopped / 3600.0,
            "completed": len(done), "cancelled": cancelled, "held": held, "preempted_resumed": preempted,
            "pruned": sorted(task for task, t in trials.items() if t["pruned"]),
            "n_stopped": len(stopped),
        })
    if own_best:
        print("each sweep timed to its own best final val_loss (the best of all: %.6f)" % target)
    else:
        print("sweep best final val_loss (all policies): %.6f" % target)
    print("%-10s %10s %12s %9s %14s %9s  %s" % ("policy", "best", "t_best [s]", "GPU-h", "GPU-h stopped*", "completed",
                                              "stopped / preempted"))
    for r in rows:
        print("%-10s %10.6f %12.1f %9.4f %14.4f %9d  cancelled %s held %s preempted+resumed %s%s" % (
            r["policy"], r["best"], r["t_best"], r["gpu_h"], r["gpu_h_stopped"], r["completed"],
            r["cancelled"] or "-", r["held"] or "-", r["preempted_resumed"] or "-",
            (" pruned by Optuna %s" % r["pruned"]) if r["pruned"] else ""))
    if shared_stopped is not None:
        print("* GPU-hours spent on the trials ExplSched stopped as hopeless (%d trials), under each policy"
              % len(shared_stopped))
    else:
        print("* GPU-hours spent on each run's own trials that ExplSched stopped or holds (%s)"
              % ", ".join("%s %d" % (r["policy"], r["n_stopped"]) for r in rows))
    by = {r["policy"]: r for r in rows}
    if "explsched" in by and "basic" in by:
        e, b = by["explsched"], by["basic"]
        print("ratios explsched/basic: time to best %.2f, GPU-hours %.2f, GPU-hours on stopped trials %.2f" % (
            e["t_best"] / b["t_best"], e["gpu_h"] / b["gpu_h"],
            (e["gpu_h_stopped"] / b["gpu_h_stopped"]) if b["gpu_h_stopped"] > 0 else float("nan")))
    if "explsched" in by and "optuna" in by:
        e, o = by["explsched"], by["optuna"]
        print("ratios explsched/optuna: time to best %.2f, GPU-hours %.2f" % (
            e["t_best"] / o["t_best"], e["gpu_h"] / o["gpu_h"]))
    if all(p in by for p in ("explsched", "basic", "optuna")):
        e, b, o = by["explsched"], by["basic"], by["optuna"]
        checks = [
            ("time to best <= 0.5x basic's", e["t_best"] <= 0.5 * b["t_best"]),
            ("time to best <= 0.7x optuna's", e["t_best"] <= 0.7 * o["t_best"]),
            ("GPU-hours <= optuna's", e["gpu_h"] <= o["gpu_h"]),
            ("best kept", e["best"] <= target + 1e-12),
        ]
        print("targets: " + ", ".join("%s %s" % (what, "met" if ok else "MISSED") for what, ok in checks))
    with open(os.path.join(os.path.dirname(list(dirs.values())[0]), "summary.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
