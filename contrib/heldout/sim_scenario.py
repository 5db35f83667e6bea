#!/usr/bin/python3
"""The held-out sweeps (contrib/heldout/curves) as a simulator scenario, written into DIR.

    contrib/heldout/sim_scenario.py [--run-hours H] [--gpus-per-trial G] [--curves SRC] DIR

DIR/curves: a copy of the curves whose placements.csv step time makes each application's longest
trial last an hour (the recorded CPU step times are milliseconds: a trial would end within one
60 s round). DIR/trace.csv: each application one sweep of all its trials, submitted together,
one application every 30 minutes. --run-hours H makes the longest trial last H hours (and the gap
between applications H/2), --gpus-per-trial G asks G GPUs per trial (default 1): a sweep of big
trials, for rules that weigh a trial's remaining GPU-hours. --curves SRC reads the sweeps from SRC
instead (contrib/heldout/steps: the step-schedule sweeps of make_sweeps.py --steps). Run with --sweep-size 16 --variation none (the curves are real
sweeps: no synthetic variation). Stdlib only; deterministic.
"""
import csv
import glob
import os
import shutil
import sys

RUN_S = 3600.0  # the longest trial of each application
GAP_S = 1800    # between two applications' sweeps


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
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    rows = [("name", "time", "application", "num_replicas", "batch_size")]
    apps = sorted(d for d in os.listdir(dst) if os.path.isdir(os.path.join(dst, d)))
    for k, app in enumerate(apps):
        files = glob.glob(os.path.join(dst, app, "validation-*.csv"))
        index = sorted(int(os.path.basename(f)[len("validation-"):-len(".csv")]) for f in files)
        iterations = 0.0
        for f in files:
            with open(f) as fh:
                body = [r for r in csv.reader(fh)][1:]
            iterations = max([iterations] + [float(r[1]) for r in body if r])
        if iterations <= 0:
            print("sim_scenario.py: %s: no iterations" % app, file=sys.stderr)
            return 1
        placements = os.path.join(dst, app, "placements.csv")
        with open(placements) as fh:
            table = [r for r in csv.reader(fh) if r]
        with open(placements, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(table[0])
            for r in table[1:]:
                w.writerow([r[0], r[1], "%.6g" % (run_s / iterations)])
        for b in index:
            rows.append(("%s-%d" % (app, b), k * gap_s, app, gpus, b))
    with open(os.path.join(out, "trace.csv"), "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    print("sim_scenario.py: %d trials of %d applications in %s" % (len(rows) - 1, len(apps), out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
