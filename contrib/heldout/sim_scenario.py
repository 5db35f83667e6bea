#!/usr/bin/python3
"""Sweeps of recorded learning curves as a simulator scenario, written into DIR.

    contrib/heldout/sim_scenario.py [--run-hours H] [--gpus-per-trial G] [--curves SRC] DIR

SRC (default: contrib/heldout/curves) holds one directory per sweep, each with one CSV per trial
in the format `explsched predict` and the simulator read: a header naming a step column (the
first of `step`, `iteration`, `progress`) and a `metric` column, one row per report (a `nan`
metric: the run diverged there). Optional per sweep: `direction` (`min` or `max`; without it,
`min` where the sweep's curves fall, as the simulator reads them, and the file is written into
the copy), `placements.csv` (the simulator's step-time table; without it, one is written) and
`lr_drops`.

DIR/curves: a copy of the sweeps, each trial as validation-<k>.csv (a sweep whose files are not
all named so is renumbered 1..n in natural order of their names, and the mapping printed), whose
step time makes each sweep's longest trial last an hour (the recorded CPU step times are
milliseconds: a trial would end within one 60 s round). DIR/trace.csv: each sweep submitted at
once, one sweep every 30 minutes. --run-hours H makes the longest trial last H hours (and the gap
between sweeps H/2), --gpus-per-trial G asks G GPUs per trial (default 1): a sweep of big trials,
for rules that weigh a trial's remaining GPU-hours. Run the simulator with --sweep-size at least
the largest sweep (printed) and --variation none (the curves are real sweeps: no synthetic
variation); contrib/bench_curves.sh does all of it. Bad input stops with an error naming the file,
line and column. Stdlib only; deterministic.
"""
import csv
import math
import os
import re
import shutil
import sys

RUN_S = 3600.0  # the longest trial of each sweep
GAP_S = 1800    # between two sweeps
STEP_COLUMNS = ("step", "iteration", "progress")  # the order curve_csv.cpp reads them in
SKIP = ("placements.csv", "scalability.csv")


class InputError(Exception):
    pass


def natural_key(name):
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name) if part]


def read_curve(path):
    """(steps, metrics) of one trial's CSV, as curve_csv.cpp reads it; InputError names what is wrong."""
    try:
        with open(path, newline="") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise InputError("%s: cannot read: %s" % (path, e))
    lines = [(i + 1, [c.strip() for c in r]) for i, r in enumerate(rows) if any(c.strip() for c in r)]
    if not lines:
        raise InputError("%s: empty file, expected a CSV header" % path)
    line_no, header = lines[0]
    step_col = next((header.index(n) for n in STEP_COLUMNS if n in header), None)
    if step_col is None:
        raise InputError("%s:%d: header has no step column (step, iteration or progress)" % (path, line_no))
    if "metric" not in header:
        raise InputError("%s:%d: header has no metric column 'metric'" % (path, line_no))
    metric_col = header.index("metric")
    steps, metrics = [], []
    for line_no, cells in lines[1:]:
        if len(cells) != len(header):
            raise InputError("%s:%d: %d cells, header has %d" % (path, line_no, len(cells), len(header)))
        try:
            step = float(cells[step_col])
            if not math.isfinite(step):
                raise ValueError
        except ValueError:
            raise InputError("%s:%d: column '%s': '%s' is not a finite number"
                             % (path, line_no, header[step_col], cells[step_col]))
        try:
            metric = float(cells[metric_col])
        except ValueError:
            raise InputError("%s:%d: column 'metric': '%s' is not a number" % (path, line_no, cells[metric_col]))
        if steps and step < steps[-1]:
            raise InputError("%s:%d: column '%s': step %s decreases" % (path, line_no, header[step_col],
                                                                         cells[step_col]))
        steps.append(step)
        metrics.append(metric)
    return steps, metrics


def sweep_files(src_app):
    """The sweep's trial CSVs in order, with the index k each gets (validation-<k>.csv)."""
    names = sorted((n for n in os.listdir(src_app)
                    if n.endswith(".csv") and n not in SKIP and os.path.isfile(os.path.join(src_app, n))),
                   key=natural_key)
    if not names:
        raise InputError("%s: no trial curves (*.csv other than %s)" % (src_app, ", ".join(SKIP)))
    numbered = [re.fullmatch(r"validation-([1-9][0-9]*)\.csv", n) for n in names]
    if all(numbered):
        return [(n, int(m.group(1))) for n, m in zip(names, numbered)], False
    return [(n, k + 1) for k, n in enumerate(names)], True


def add_sweep(src_app, dst_app, app, run_s):
    """Copies one sweep into dst_app, normalised; returns its trial indices."""
    files, renumbered = sweep_files(src_app)
    os.makedirs(dst_app)
    iterations, rise = 0.0, 0.0
    for name, k in files:
        steps, metrics = read_curve(os.path.join(src_app, name))
        finite = [(s, m) for s, m in zip(steps, metrics) if math.isfinite(m)]
        if finite:
            iterations = max(iterations, finite[-1][0])
        if len(finite) >= 2:
            rise += finite[-1][1] - finite[0][1]
        shutil.copyfile(os.path.join(src_app, name), os.path.join(dst_app, "validation-%d.csv" % k))
        if renumbered:
            print("sim_scenario.py: %s: %s -> validation-%d.csv" % (app, name, k), file=sys.stderr)
    if not iterations > 0:
        raise InputError("%s: no trial reports a positive step with a finite metric" % src_app)
    for extra in ("direction", "lr_drops", "trials.txt"):
        if os.path.isfile(os.path.join(src_app, extra)):
            shutil.copyfile(os.path.join(src_app, extra), os.path.join(dst_app, extra))
    direction = os.path.join(dst_app, "direction")
    if not os.path.exists(direction):
        word = "min" if rise < 0 else "max"
        with open(direction, "w") as out:
            out.write(word + "\n")
        print("sim_scenario.py: %s: no direction file: '%s' (its curves %s; write %s/direction to say otherwise)"
              % (app, word, "fall" if rise < 0 else "rise", src_app), file=sys.stderr)
    # without a table: one step time for every trial (the simulator reads the trial index as its
    # batch size, so the rows span 1..n)
    last = max(k for _, k in files)
    table = [["placement", "local_bsz", "step_time"], ["1", "1"]] + ([["1", str(last)]] if last > 1 else [])
    placements = os.path.join(src_app, "placements.csv")
    if os.path.isfile(placements):
        with open(placements, newline="") as fh:
            table = [r for r in csv.reader(fh) if r]
        if len(table) < 2 or any(len(r) < 2 for r in table):
            raise InputError("%s: want a header and rows of placement,local_bsz,..." % placements)
    with open(os.path.join(dst_app, "placements.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(table[0])
        for r in table[1:]:
            w.writerow([r[0], r[1], "%.6g" % (run_s / iterations)])
    return [k for _, k in files]


def main(argv):
    run_s, gap_s, gpus = RUN_S, GAP_S, 1
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "curves")
    args = argv[1:]
    try:
        while len(args) > 1 and args[0].startswith("--"):
            if args[0] == "--run-hours":
                run_s = float(args[1]) * 3600.0
                gap_s = int(run_s / 2)
            elif args[0] == "--gpus-per-trial":
                gpus = int(args[1])
            elif args[0] == "--curves":
                src = args[1]
                if not os.path.isdir(src):
                    raise ValueError("--curves %s: no such directory" % src)
            else:
                raise ValueError("unknown option '%s'" % args[0])
            args = args[2:]
        if not run_s > 0 or gpus < 1:
            raise ValueError("--run-hours must be > 0 and --gpus-per-trial >= 1")
    except ValueError as e:
        print("sim_scenario.py: %s" % e, file=sys.stderr)
        return 2
    if len(args) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = args[0]
    dst = os.path.join(out, "curves")
    apps = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)) and not d.startswith("."))
    if not apps:
        print("sim_scenario.py: %s: no sweep directories (one per sweep, each with a CSV per trial)" % src,
              file=sys.stderr)
        return 1
    if os.path.exists(dst):
        shutil.rmtree(dst)
    os.makedirs(dst)
    rows = [("name", "time", "application", "num_replicas", "batch_size")]
    largest = 0
    try:
        for k, app in enumerate(apps):
            index = sorted(add_sweep(os.path.join(src, app), os.path.join(dst, app), app, run_s))
            largest = max(largest, len(index))
            for b in index:
                rows.append(("%s-%d" % (app, b), k * gap_s, app, gpus, b))
    except InputError as e:
        print("sim_scenario.py: %s" % e, file=sys.stderr)
        return 1
    with open(os.path.join(out, "trace.csv"), "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    print("sim_scenario.py: %d trials of %d sweeps in %s (largest sweep: %d trials)"
          % (len(rows) - 1, len(apps), out, largest), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
