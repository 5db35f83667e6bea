#!/usr/bin/python3
"""Replays the simulator's workloads through Optuna's pruners: the peer a user already has.

usage: optuna_replay.py WORKLOAD.json [--pruners median,sha,hyperband] [-o SUMMARY.json]
       (WORKLOAD.json: explsched-sim ... --export-workload WORKLOAD.json)

Every seed's workload is the one explsched-sim's policies run (same trials, arrivals, GPUs,
speeds, curves with their hp variation). It is replayed event by event on the same cluster:
trials start in arrival order as soon as their GPUs are free, on the first GPU type with room
(later trials that fit may go ahead, as the simulator's fifo does), which is an Optuna sweep run by
K parallel workers (K = GPUs / GPUs per trial). Each sweep is one Optuna study (in memory,
direction maximize, the sweep's normalised quality as the value): a trial is study.ask()ed when
it starts, reports every curve point with trial.report(quality, epoch) -- epoch = 1, 2, ... the
point's index, as a training loop reports once per epoch -- and asks trial.should_prune() after
each report; a pruned trial ends there (study.tell(PRUNED)) and frees its GPUs at once. A
diverged trial reports NaN, which Optuna's pruners prune. Pruners:
  median     MedianPruner(): Optuna's default pruner, as is (n_startup_trials=5: it prunes only
             once 5 trials of the study have completed; n_warmup_steps=0)
  sha        SuccessiveHalvingPruner(min_resource=1) (reduction_factor 4): the 1 that
             min_resource="auto" would pick for curves under 200 epochs, given up front, since
             "auto" prunes nothing until a trial has completed (in a parallel sweep, most of it)
  hyperband  HyperbandPruner(min_resource=1, max_resource=E) (reduction_factor 3), E the sweep's
             epochs (its longest trial's report count), given up front for the same reason
  sha:R:M    SuccessiveHalvingPruner(min_resource=M, reduction_factor=R), R in 2..10, M >= 1
  hyperband:R:M  HyperbandPruner(min_resource=min(M, E), max_resource=E, reduction_factor=R),
             R in 2..10, M >= 1
  median:S:W MedianPruner(n_startup_trials=S, n_warmup_steps=W), S >= 1 (Optuna's MedianPruner
             prunes nothing before a trial has completed), W >= 0
             (the settings are the trade-off runs' of contrib/bench_frontier.py)
  none       NopPruner()               (every trial to the end: the replay's check against fifo)

Figures are src/sim/metrics.hpp's, computed the same way (profit = sum over sweeps of the best
quality any trial reported; time to best = from the sweep's first arrival until a report reaches
the best trial's final quality minus the tolerance in WORKLOAD.json; means and linear-interpolation
quantiles as there). Differences from the simulator: starts are not aligned to its 60 s rounds,
preemptions are 0, "rounds" counts should_prune() calls and "decision ms" is Optuna's time per
should_prune() call. Output: explsched-sim --json's shape ({"runs", "mean"}), policies named
optuna-<pruner>. Needs python3-optuna and python3-numpy.
"""
import argparse
import heapq
import json
import math
import sys
import time

NAMED_PRUNERS = ("median", "sha", "hyperband", "none")
PRUNERS = NAMED_PRUNERS + ("sha:R:M", "hyperband:R:M", "median:S:W")
# The pruners with settings: kind -> (form, (lowest, highest) of each of the two numbers, what they are)
SET_PRUNERS = {
    "sha": ("sha:R:M", ((2, 10), (1, 1000000)), "R must be in 2..10 and M >= 1"),
    "hyperband": ("hyperband:R:M", ((2, 10), (1, 1000000)), "R must be in 2..10 and M >= 1"),
    "median": ("median:S:W", ((1, 1000000), (0, 1000000)), "S must be >= 1 and W >= 0"),
}


def pruner_params(name):
    """(kind, a, b) of a pruner with settings (sha:R:M, hyperband:R:M, median:S:W), None for any
    other name; ValueError for such a name whose numbers are malformed or out of range."""
    kind = name.split(":", 1)[0]
    if ":" not in name or kind not in SET_PRUNERS:
        return None
    form, ranges, says = SET_PRUNERS[kind]
    parts = name.split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        a, b = int(parts[1]), int(parts[2])
    except ValueError:
        raise ValueError("'%s' is not %s (whole numbers)" % (name, form)) from None
    if not all(lo <= v <= hi for v, (lo, hi) in zip((a, b), ranges)):
        raise ValueError("'%s': %s" % (name, says))
    return kind, a, b


def make_pruner(name, epochs):
    """Optuna's pruner `name` for a study whose trials report at most `epochs` times."""
    import optuna
    if name == "median":
        return optuna.pruners.MedianPruner()
    if name == "sha":
        return optuna.pruners.SuccessiveHalvingPruner(min_resource=1)
    params = pruner_params(name)
    if params is not None:
        kind, a, b = params
        if kind == "sha":
            return optuna.pruners.SuccessiveHalvingPruner(min_resource=b, reduction_factor=a)
        if kind == "hyperband":
            top = max(epochs, 1)
            return optuna.pruners.HyperbandPruner(min_resource=min(b, top), max_resource=top, reduction_factor=a)
        return optuna.pruners.MedianPruner(n_startup_trials=a, n_warmup_steps=b)
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=1, max_resource=max(epochs, 1))
    if name == "none":
        return optuna.pruners.NopPruner()
    raise ValueError("unknown pruner '%s' (one of %s)" % (name, ", ".join(PRUNERS)))


def quantile(values, p):
    """src/sim/metrics.cpp's quantile(): linear interpolation, NaN if empty."""
    if not values:
        return float("nan")
    v = sorted(values)
    pos = min(max(p, 0.0), 1.0) * (len(v) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def replay(workload, pruner_name):
    """One seed's workload under one pruner: the metrics dict of explsched-sim --json."""
    import optuna
    wall0 = time.monotonic()
    trials, sweeps = workload["trials"], workload["sweeps"]
    types = [c["type"] for c in workload["cluster"]]
    free = {c["type"]: c["gpus"] for c in workload["cluster"]}
    total_gpus = sum(free.values())
    studies = [None] * len(sweeps)
    epochs = [0] * len(sweeps)
    for t in trials:
        epochs[t["sweep"]] = max(epochs[t["sweep"]], len(t["steps"]))
    n = len(trials)
    start = [None] * n        # start time
    end = [None] * n
    gtype = [None] * n
    handle = [None] * n       # optuna trial
    status = ["future"] * n
    best_q = [0.0] * n
    reached = [float("nan")] * len(sweeps)
    prune_ms = []
    events = []  # (time, order, kind, trial, report index)
    order = 0
    for i, t in enumerate(trials):
        heapq.heappush(events, (t["arrival"], order, "arrive", i, 0))
        order += 1
    queue = []  # pending trial indices in arrival order

    def study_of(s):
        if studies[s] is None:
            studies[s] = optuna.create_study(direction="maximize", pruner=make_pruner(pruner_name, epochs[s]),
                                             study_name=sweeps[s]["name"])
        return studies[s]

    def start_pending(now):
        nonlocal order
        started = []
        for i in queue:
            if sum(free.values()) == 0:
                break
            g = trials[i]["gpus"]
            room = next((ty for ty in types if free[ty] >= g), None)
            if room is None:
                continue
            free[room] -= g
            gtype[i], start[i], status[i] = room, now, "running"
            handle[i] = study_of(trials[i]["sweep"]).ask()
            speed = trials[i]["speed"][room]
            heapq.heappush(events, (now + trials[i]["steps"][0] / speed, order, "report", i, 0))
            order += 1
            started.append(i)
        for i in started:
            queue.remove(i)

    def finish(i, now, state):
        t = trials[i]
        free[gtype[i]] += t["gpus"]
        end[i], status[i] = now, state
        study = studies[t["sweep"]]
        if state == "stopped":
            study.tell(handle[i], state=optuna.trial.TrialState.PRUNED)
        else:
            last = t["quality"][-1]
            if last is None:
                study.tell(handle[i], state=optuna.trial.TrialState.FAIL)
            else:
                study.tell(handle[i], last)

    while events:
        now = events[0][0]
        while events and events[0][0] == now:
            _, _, kind, i, k = heapq.heappop(events)
            t = trials[i]
            if kind == "arrive":
                status[i] = "pending"
                queue.append(i)
                continue
            q = t["quality"][k]
            value = float("nan") if q is None else q
            if q is not None:
                best_q[i] = max(best_q[i], q)
                s = t["sweep"]
                if math.isnan(reached[s]) and q >= sweeps[s]["target_quality"]:
                    reached[s] = now - sweeps[s]["first_arrival"]
            handle[i].report(value, k + 1)
            c0 = time.perf_counter()
            prune = handle[i].should_prune()
            prune_ms.append(1000.0 * (time.perf_counter() - c0))
            if prune:
                finish(i, now, "stopped")
            elif k + 1 < len(t["steps"]):
                speed = t["speed"][gtype[i]]
                nxt = start[i] + t["steps"][k + 1] / speed
                heapq.heappush(events, (nxt, order, "report", i, k + 1))
                order += 1
            else:
                finish(i, start[i] + t["max_step"] / t["speed"][gtype[i]], "finished")
        start_pending(now)

    m = {"policy": "optuna-" + pruner_name, "seed": workload["seed"], "trials": n, "sweeps": len(sweeps)}
    m["finished"] = status.count("finished")
    m["stopped"] = status.count("stopped")
    m["unfinished"] = n - m["finished"] - m["stopped"]
    sweep_best = [0.0] * len(sweeps)
    gpu_s, non_best, stopped_h, jct = 0.0, 0.0, 0.0, []
    for i, t in enumerate(trials):
        s = t["sweep"]
        sweep_best[s] = max(sweep_best[s], best_q[i])
        held = (end[i] - start[i]) * t["gpus"] if start[i] is not None else 0.0
        gpu_s += held
        if sweeps[s]["best_trial"] != i:
            non_best += held / 3600.0
        if status[i] == "stopped":
            stopped_h += held / 3600.0
        if end[i] is not None:
            jct.append((end[i] - t["arrival"]) / 3600.0)
    m["profit"] = sum(sweep_best)
    m["profit_bound"] = sum(s["best_quality"] for s in sweeps)
    m["gpu_hours"] = gpu_s / 3600.0
    m["profit_per_gpu_hour"] = m["profit"] / m["gpu_hours"] if m["gpu_hours"] > 0 else 0.0
    m["non_best_gpu_hours"] = non_best
    m["stopped_gpu_hours"] = stopped_h
    got = [r / 3600.0 for r in reached if not math.isnan(r)]
    m["sweeps_reaching_best"] = len(got) / len(sweeps) if sweeps else 0.0
    m["time_to_best_mean_h"] = mean(got)
    m["time_to_best_median_h"] = quantile(got, 0.5)
    m["jct_mean_h"] = mean(jct)
    m["jct_p99_h"] = quantile(jct, 0.99)
    ends = [e for e in end if e is not None]
    first = min((t["arrival"] for t in trials), default=0.0)
    m["makespan_h"] = (max(ends) - first) / 3600.0 if ends else 0.0
    m["utilisation"] = m["gpu_hours"] / (m["makespan_h"] * total_gpus) if m["makespan_h"] > 0 else 0.0
    m["preemptions"] = 0
    m["rounds"] = len(prune_ms)
    m["decision_ms_mean"] = mean(prune_ms)
    m["decision_ms_p99"] = quantile(prune_ms, 0.99)
    m["decision_ms_max"] = max(prune_ms) if prune_ms else float("nan")
    m["wall_s"] = time.monotonic() - wall0
    return m


def mean_metrics(runs):
    """src/sim/report.cpp's mean_metrics(): finite values averaged, counts rounded."""
    out = {"policy": runs[0]["policy"]}
    counts = {"finished", "stopped", "unfinished", "preemptions", "rounds"}
    for key in runs[0]:
        if key in ("policy", "seed"):
            continue
        if key in ("trials", "sweeps"):
            out[key] = runs[0][key]
            continue
        vals = [r[key] for r in runs if isinstance(r[key], (int, float)) and math.isfinite(r[key])]
        v = sum(vals) / len(vals) if vals else float("nan")
        out[key] = int(round(v)) if key in counts and vals else v
    return out


def nulls(obj):
    """NaN and infinities as JSON null, as explsched-sim writes them."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: nulls(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [nulls(v) for v in obj]
    return obj


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workload")
    ap.add_argument("--pruners", default="median,sha,hyperband")
    ap.add_argument("-o", "--output", help="write the summary JSON here (default: stdout)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv[1:])
    pruners = [p.strip() for p in args.pruners.split(",") if p.strip()]
    for p in pruners:
        try:
            known = p in NAMED_PRUNERS or pruner_params(p) is not None
        except ValueError as e:
            ap.error("--pruners: %s" % e)
        if not known:
            ap.error("--pruners: '%s' is not one of %s" % (p, ", ".join(PRUNERS)))
    try:
        import optuna
    except ImportError:
        sys.stderr.write("optuna_replay: python3-optuna is not installed\n")
        return 77
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with open(args.workload) as f:
        data = json.load(f)
    runs = []
    for workload in data["seeds"]:
        for p in pruners:
            m = replay(workload, p)
            runs.append(m)
            if not args.quiet:
                sys.stderr.write("optuna_replay: seed %s %-16s %d trials, %d pruned, %.1f GPU-h, %.1f s\n" % (
                    workload["seed"], m["policy"], m["trials"], m["stopped"], m["gpu_hours"], m["wall_s"]))
    summary = {"runs": runs, "mean": {}}
    for p in pruners:
        mine = [r for r in runs if r["policy"] == "optuna-" + p]
        if mine:
            summary["mean"]["optuna-" + p] = mean_metrics(mine)
    summary["config"] = {"workload": data.get("config", {}), "pruners": pruners,
                         "optuna": optuna.__version__}
    text = json.dumps(nulls(summary), indent=1)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
