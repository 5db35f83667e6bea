#!/usr/bin/python3
"""Writes doc/results.md from contrib/bench.sh's outputs.

usage: bench_report.py RESULTS_DIR OUT.md SEEDS [RECORDED_RUN.json]
RESULTS_DIR holds <scenario>.json (explsched-sim --json), <scenario>-optuna.json (the same workloads
through Optuna's pruners, contrib/optuna_replay.py), <scenario>.svg, scale-*.json/.time,
trial.svg, sweep.svg, show.txt, why.txt. RECORDED_RUN is an explsched-sim --output file of
explsched and asha on one scenario, used to show where the exploration GPU-hours go.
"""
import json
import math
import os
import sys

POLICIES = ["fifo", "tiresias", "gandiva", "gavel", "asha", "optuna-median", "optuna-sha", "optuna-hyperband", "slaq",
            "oasis", "explsched", "oracle"]

SCENARIOS = [
    ("pollux", "Pollux workload 1 (150 jobs of cifar10, deepspeech2, imagenet, ncf; bert and yolov3 rows "
               "have no curves and are skipped), 64 v100 GPUs (16 nodes of 4 would be Pollux's testbed; here 8 "
               "nodes of 8), sweeps of up to 8 jobs of one application, hp variation."),
    ("pollux-real-curves", "The same, but every trial is a recorded curve as is (--variation none): the sweep's "
                           "siblings are only the batch-size variants, whose final metrics differ by under 1% "
                           "of the application's range."),
    ("pollux-heterogeneous", "The same workload on 112 mixed GPUs (32 v100, 32 p100, 48 k80: the 48-GPU imagenet "
                             "jobs need one type that holds them), speeds from Gavel's throughput table."),
    ("demo-sweep", "The real training sweep of `contrib/demo.sh` replayed: its 32 trials (a numpy MLP on two "
                   "spirals, an 8 x 4 grid of learning rate and width), each curve from a fresh uninterrupted run "
                   "of `contrib/demo/train.py` by `contrib/demo/replay.py`, all submitted at once to 16 GPUs, "
                   "1.5 s per step (a trial lasts 15 re-ranking periods, as in the demo). Its best trial (index "
                   "18, lr 0.8, width 16) sits on a plateau for half its run, ranks 8th at its milestone, then "
                   "ends best: the sweep that tells whether a policy's early stopping costs the sweep its best "
                   "model. Not shipped data: `contrib/bench.sh` regenerates the curves (deterministic)."),
    ("philly", "The first 1,000 jobs of philly.csv (Sep 2017 arrivals) on 128 v100 GPUs: 125 sweeps of 8 "
               "consecutive jobs, each sweep one application drawn by the seed, its trials sized like its first "
               "job. The trace's load far exceeds 128 GPUs, so queues are long."),
]

# Scenarios whose input is generated rather than shipped: the command that writes it into DEMO.
GENERATED_INPUT = {"demo-sweep": "contrib/demo/replay.py DEMO"}


def command_line(name, cfg):
    """The explsched-sim command of a scenario, from the config its JSON records."""
    setup = GENERATED_INPUT.get(name)
    root = "DEMO" if setup else "DATA"
    trace = os.path.basename(cfg.get("trace", ""))
    words = ["explsched-sim --trace %s --curves %s/curves" % (root + "/" + trace if setup else trace, root)]
    words.append(("--cluster " + cfg["cluster"]) if cfg.get("throughputs") else ("--gpus %s" % cfg.get("gpus")))
    words.append("--seeds " + ",".join(str(s) for s in cfg.get("seeds", [])))
    if cfg.get("jobs"):
        words.append("--jobs %s" % cfg["jobs"])
    if cfg.get("sweep_size", 8) != 8:
        words.append("--sweep-size %s" % cfg["sweep_size"])
    if cfg.get("variation") == "none":
        words.append("--variation none")
    if cfg.get("throughputs"):
        words.append("--throughputs DATA/throughputs/gavel_simulation_throughputs.json")
    return (setup + " && " if setup else "") + " ".join(words)


# The targets of the issue that set them (mean over seeds, the engine's default settings). A
# baseline of None is an absolute target on explsched's own mean (a fraction, shown in %).
TARGETS = [
    ("profit_of_bound", None, ">=", 0.995, "profit, % of the bound"),
    ("sweeps_reaching_best", None, ">=", 0.99, "sweeps reaching their best"),
    ("gpu_hours", "asha", "<=", 1.0, "GPU-hours vs asha"),
    ("gpu_hours", "optuna-sha", "<=", 1.0, "GPU-hours vs Optuna SuccessiveHalvingPruner"),
    ("time_to_best_mean_h", "asha", "<=", 0.5, "time to best vs asha"),
    ("time_to_best_mean_h", "oracle", "<=", 1.3, "time to best vs oracle"),
    ("profit_per_gpu_hour", "fifo", ">=", 2.0, "profit per GPU-hour vs fifo"),
]


def load_summary(results_dir, name):
    """<name>.json with the Optuna peer's runs (<scenario>-optuna.json) merged in, or None."""
    path = os.path.join(results_dir, name + ".json")
    if not os.path.exists(path):
        return None
    summary = json.load(open(path))
    scenario = name[:-len("-aggressive")] if name.endswith("-aggressive") else name
    peer = os.path.join(results_dir, scenario + "-optuna.json")
    if os.path.exists(peer):
        optuna = json.load(open(peer))
        summary["runs"] = summary.get("runs", []) + optuna.get("runs", [])
        summary.setdefault("mean", {}).update(optuna.get("mean", {}))
    return summary


def fin(v):
    return isinstance(v, (int, float)) and math.isfinite(v)


def f(v, digits=2, suffix=""):
    return ("%.*f%s" % (digits, v, suffix)) if fin(v) else "-"


def value(run, key):
    if key == "profit_of_bound":
        b = run.get("profit_bound")
        return run["profit"] / b if fin(b) and b else float("nan")
    return run.get(key)


def ratio(runs, policy, baseline, key):
    """Mean over seeds of policy/baseline, seed by seed (baseline None: of the policy's own value)."""
    ours = {r["seed"]: value(r, key) for r in runs if r["policy"] == policy}
    if baseline is None:
        vals = [v for v in ours.values() if fin(v)]
        return sum(vals) / len(vals) if vals else float("nan"), len(vals)
    theirs = {r["seed"]: value(r, key) for r in runs if r["policy"] == baseline}
    vals = [ours[s] / theirs[s] for s in ours if s in theirs and fin(ours[s]) and fin(theirs[s]) and theirs[s] != 0]
    return sum(vals) / len(vals) if vals else float("nan"), len(vals)


def table(summary):
    mean = summary["mean"]
    fifo = mean.get("fifo", {}).get("profit_per_gpu_hour")
    lines = [
        "| policy | profit (% of bound) | GPU-h | profit/GPU-h | × fifo | non-best GPU-h | stopped GPU-h "
        "| sweeps at best | time to best (h) | JCT mean / p99 (h) | makespan (h) | preemptions | decision ms/round "
        "(mean / p99) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in POLICIES:
        if p not in mean:
            continue
        m = mean[p]
        pct = 100.0 * m["profit"] / m["profit_bound"] if fin(m.get("profit_bound")) and m["profit_bound"] else float("nan")
        x = m["profit_per_gpu_hour"] / fifo if fin(fifo) and fifo else float("nan")
        name = "**%s**" % p if p == "explsched" else p
        lines.append("| %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s / %s |" % (
            name, f(m["profit"], 2), f(pct, 1, "%"), f(m["gpu_hours"], 0), f(m["profit_per_gpu_hour"], 5), f(x, 2),
            f(m["non_best_gpu_hours"], 0), f(m["stopped_gpu_hours"], 0), f(100 * m["sweeps_reaching_best"], 0, "%"),
            f(m["time_to_best_mean_h"], 2), f(m["jct_mean_h"], 2), f(m["jct_p99_h"], 1), f(m["makespan_h"], 1),
            m["preemptions"], f(m["decision_ms_mean"], 2), f(m["decision_ms_p99"], 2)))
    return "\n".join(lines)


def targets_table(results):
    lines = ["| target | " + " | ".join(name for name, _ in results) + " |",
             "|---|" + "---|" * len(results)]
    for key, base, op, goal, text in TARGETS:
        cells = []
        for _, summary in results:
            r, n = ratio(summary["runs"], "explsched", base, key)
            if not fin(r):
                cells.append("-")
                continue
            met = r >= goal if op == ">=" else r <= goal
            shown = "%.1f%%" % (100 * r) if base is None else "%.2f×" % r
            if met:
                cells.append(shown + " ✔")
            else:
                short = (goal / r if op == ">=" else r / goal) if r else float("inf")
                cells.append("%s ✘ (%.2f× short)" % (shown, short))
        goal_text = "%.1f%%" % (100 * goal) if base is None else "%.1f×" % goal
        lines.append("| %s %s %s | %s |" % (text, op, goal_text, " | ".join(cells)))
    r = []
    for _, summary in results:
        v, _ = ratio(summary["runs"], "explsched", "fifo", "profit")
        r.append(f(v, 3) + "×")
    lines.append("| (profit vs fifo, for reference) | %s |" % " | ".join(r))
    return "\n".join(lines)


def trial_class(t):
    tr = t["truth"]
    if tr["diverges"]:
        return "diverging"
    g = tr["g"]
    return "strong (g ≥ 0.985)" if g >= 0.985 else ("fair (0.85 ≤ g < 0.985)" if g >= 0.85 else "poor (g < 0.85)")


def where_hours_go(recorded):
    """Non-best trials of one recorded run, by hp class and outcome, for explsched and asha."""
    run_of = {r["policy"]: r for r in recorded["results"]}
    lines = ["| policy | trial class | finished: n, GPU-h | stopped: n, GPU-h, mean fraction of its steps run |",
             "|---|---|---|---|"]
    for policy in ("explsched", "asha"):
        run = run_of.get(policy)
        if run is None:
            continue
        agg = {}
        for t in run["trials"]:
            if t["sweep_best"]:
                continue
            c = agg.setdefault(trial_class(t), {"finished": [0, 0.0], "stopped": [0, 0.0, 0.0]})
            frac = t["points"][-1][0] / t["max_step"] if t["points"] else 0.0
            if t["status"] == "stopped":
                c["stopped"][0] += 1
                c["stopped"][1] += t["gpu_hours"]
                c["stopped"][2] += frac
            else:
                c["finished"][0] += 1
                c["finished"][1] += t["gpu_hours"]
        for cls in sorted(agg):
            c = agg[cls]
            s = c["stopped"]
            lines.append("| %s | %s | %d, %.0f | %d, %.0f, %s |" % (
                policy, cls, c["finished"][0], c["finished"][1], s[0], s[1],
                f(s[2] / s[0], 2) if s[0] else "-"))
    return "\n".join(lines)


def biggest_waste(recorded):
    """The non-best trial of a recorded explsched run that held the most GPU-hours."""
    run = [r for r in recorded["results"] if r["policy"] == "explsched"][0]
    total = sum(t["gpu_hours"] for t in run["trials"])
    worst = max((t for t in run["trials"] if not t["sweep_best"]), key=lambda t: t["gpu_hours"])
    sweep = [t for t in run["trials"] if t["sweep"] == worst["sweep"]]
    best = max(t["truth"]["best_quality"] for t in sweep)
    ended_before = sum(1 for t in sweep if t is not worst and fin(t.get("end")) and
                       t["truth"]["best_quality"] > worst["truth"]["best_quality"] and
                       t["end"] < worst["end"] - 0.5 * (worst["end"] - worst["arrival"]))
    reason = (worst.get("assessment") or {}).get("reason", "")
    return ("In scenario `pollux-heterogeneous` (seed 0) the costliest non-best trial, job %d (%s, %d GPUs), "
            "held %.0f GPU-hours, %.0f%% of everything explsched spent: its curve ends at quality %.2f "
            "while its sweep's best reaches %.2f, yet it was %s. %d better member(s) of its sweep had already "
            "ended before it was half done, and the engine's last word on it was \"%s\"." % (
                worst["id"], worst["application"], worst["gpus"], worst["gpu_hours"],
                100.0 * worst["gpu_hours"] / total, worst["truth"]["final_quality"], best,
                "stopped late" if worst["status"] == "stopped" else "trained to the end", ended_before, reason))


def scale_section(results_dir):
    rows = []
    for policy in ("fifo", "explsched"):
        tfile = os.path.join(results_dir, "scale-%s.time" % policy)
        jfile = os.path.join(results_dir, "scale-%s.json" % policy)
        if not (os.path.exists(tfile) and os.path.exists(jfile)):
            continue
        wall, user = open(tfile).read().split()[:2]
        m = json.load(open(jfile))["mean"][policy]
        rows.append("| %s | %s | %s | %d | %s | %s |" % (policy, wall, user, m["rounds"], f(m["decision_ms_mean"], 2),
                                                     f(m["decision_ms_p99"], 2)))
    if not rows:
        return "(not run: bench.sh --quick)"
    return "\n".join(["| policy | wall s | CPU s | rounds | decision ms/round mean | p99 |", "|---|---|---|---|---|---|"]
                     + rows)


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    results_dir, out_path, seeds = argv[1], argv[2], argv[3]
    recorded = json.load(open(argv[4])) if len(argv) > 4 and os.path.exists(argv[4]) else None
    recorded_het = json.load(open(argv[5])) if len(argv) > 5 and os.path.exists(argv[5]) else None
    results = []
    for name, _ in SCENARIOS:
        summary = load_summary(results_dir, name)
        if summary is not None:
            results.append((name, summary))
    rel = os.path.relpath(results_dir, os.path.dirname(out_path))
    md = []
    md.append("# Policy comparison on the shipped data\n")
    md.append("Written by `contrib/bench.sh` (seeds %s); every number below is a mean over those seeds and can be "
              "regenerated with that one command. The simulator runs the core engine (`src/core/sched/engine.hpp`) "
              "unchanged for the `explsched` policy, driven as the slurmctld plugins drive it.\n" % seeds)
    md.append(open(os.path.join(os.path.dirname(os.path.abspath(argv[0])), "bench_method.md")).read())
    md.append("## Targets (explsched vs each baseline: mean over seeds of the per-seed ratio)\n")
    md.append(targets_table(results) + "\n")
    aggressive = []
    for name, _ in SCENARIOS:
        summary = load_summary(results_dir, name + "-aggressive")
        if summary is not None:
            aggressive.append((name, summary))
    if aggressive:
        params = aggressive[0][1].get("config", {}).get("params", "")
        md.append("### The same targets with the aggressive profile (`--params %s`)\n" % params)
        md.append("`hopeless_min_progress=0` lets every extrapolation-based rule act as soon as a curve can be "
                  "extrapolated, `milestone_stop_probability=1` stops a trial behind at a milestone whatever its "
                  "prediction says and `milestone_stop_unpredicted=yes` also before its curve can be "
                  "extrapolated (ASHA's rule, on the ranking alone), and `min_expected_gain=0.02` stops trials expected to "
                  "add under 2 % of the sweep's range to its best. Not the default: on the demo sweep "
                  "(scenario `demo-sweep`) it cancels the trial that ends best, which starts slowly.\n")
        md.append(targets_table(aggressive) + "\n")
    for name, text in SCENARIOS:
        summary = dict(results).get(name)
        if summary is None:
            continue
        cfg = summary.get("config", {})
        md.append("## Scenario `%s`\n" % name)
        md.append(text + "\n")
        md.append("Command: `%s`\n" % command_line(name, cfg))
        md.append(table(summary) + "\n")
        md.append("![%s](%s/%s.svg)\n" % (name, rel, name))
    if recorded is not None:
        md.append("## Where the exploration GPU-hours go (scenario `pollux`, seed 0)\n")
        md.append("Non-best trials only, by the class of their hp variation (see Method). \"Fraction of its steps "
                  "run\" is how far into its training a stopped trial got.\n")
        md.append(where_hours_go(recorded) + "\n")
    if os.path.exists(os.path.join(results_dir, "trial.svg")):
        md.append("## One trial and its sweep as the scheduler saw them (scenario `pollux`, seed 0)\n")
        md.append("![trial](%s/trial.svg)\n\n![sweep](%s/sweep.svg)\n" % (rel, rel))
        for name in ("show", "why"):
            p = os.path.join(results_dir, name + ".txt")
            if os.path.exists(p):
                md.append("`explsched %s --sim RESULT.json JOBID`:\n\n```\n%s```\n" % (name, open(p).read()))
    md.append("## Scale: 10,000 Philly jobs on 1,000 GPUs\n")
    md.append("One seed, `explsched-sim --trace philly.csv --jobs 10000 --gpus 1000 --policies P`, on the build "
              "machine (2 cores shared with other work, so wall time exceeds CPU time). Target: under a minute.\n")
    md.append(scale_section(results_dir) + "\n")
    analysis = open(os.path.join(os.path.dirname(os.path.abspath(argv[0])), "bench_analysis.md")).read()
    example = biggest_waste(recorded_het) if recorded_het is not None else "(not recorded)"
    md.append(analysis.replace("@BIGGEST_WASTE@", example))
    with open(out_path, "w") as out:
        out.write("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
