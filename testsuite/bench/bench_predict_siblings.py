#!/usr/bin/python3
"""What `explsched predict` reports, scored on whole sweeps: with and without --sibling.

    bench_predict_siblings.py EXPLSCHED ROOT...

Each ROOT holds one directory per sweep with one CSV per trial (as contrib/heldout and
../shared/data/curves). Every trial whose curve ends on a finite metric is forecast at 10, 25 and
50 % of its points observed, to its last step, twice: `explsched predict` alone (the shipped
interval calibration) and with `--sibling` for each other trial of its sweep (every sibling ended,
bench_calibration's sib-ended). The direction is the sweep's `direction` file, else the one the
simulator reads (minimised where the sweep's curves fall in sum), given with --direction. Prints,
per root and pooled, the 80 % interval's coverage of the final metric and the mean absolute error
over the curve's metric range, beside the last observed value's error and the ratio. Figures,
not a test: exit status 0, or 2 when a root or a run of explsched fails. Stdlib only.
"""
import csv
import json
import math
import os
import subprocess
import sys

FRACTIONS = (0.10, 0.25, 0.50)
SKIP = ("placements.csv", "scalability.csv")
MAX_SIBLINGS = 64  # explsched predict's limit


def read_metrics(path):
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [float(r["metric"]) for r in rows if r.get("metric", "").strip()]


def sweeps(root):
    for app in sorted(os.listdir(root)):
        d = os.path.join(root, app)
        if not os.path.isdir(d):
            continue
        files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".csv") and f not in SKIP)
        curves = [(f, read_metrics(f)) for f in files]
        direction = None
        if os.path.isfile(os.path.join(d, "direction")):
            direction = open(os.path.join(d, "direction")).read().split()[0]
        if direction not in ("min", "max"):
            rise = sum(m[-1] - m[0] for _, m in curves if len(m) >= 2 and math.isfinite(m[-1]) and math.isfinite(m[0]))
            direction = "min" if rise < 0 else "max"
        yield app, direction, curves


def predict(explsched, path, fraction, direction, siblings):
    cmd = [explsched, "predict", "--curve", path, "--observed-fraction", str(fraction), "--direction", direction,
           "--json"]
    for s in siblings[:MAX_SIBLINGS]:
        cmd += ["--sibling", s]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd[:6]), out.stderr.strip()))
    return json.loads(out.stdout)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    explsched, roots = argv[1], argv[2:]
    tallies = {}  # (set, fraction) -> [n, own covered, own err, sib covered, sib err, last err]
    for root in roots:
        name = os.path.basename(os.path.normpath(os.path.dirname(os.path.normpath(root)))) \
            if os.path.basename(os.path.normpath(root)) == "curves" else os.path.basename(os.path.normpath(root))
        if not os.path.isdir(root):
            print("bench_predict_siblings.py: %s: no such directory" % root, file=sys.stderr)
            return 2
        for app, direction, curves in sweeps(root):
            for path, metrics in curves:
                if not metrics or not all(math.isfinite(m) for m in metrics):
                    continue  # a diverged trial has no final metric to forecast
                truth = metrics[-1]
                span = max(max(metrics), truth) - min(min(metrics), truth) or 1e-12
                others = [p for p, m in curves if p != path and m and all(math.isfinite(x) for x in m)]
                for fraction in FRACTIONS:
                    seen = max(1, math.ceil(fraction * len(metrics) - 1e-9))
                    try:
                        own = predict(explsched, path, fraction, direction, [])
                        sib = predict(explsched, path, fraction, direction, others)
                    except (RuntimeError, ValueError) as e:
                        print("bench_predict_siblings.py: %s" % e, file=sys.stderr)
                        return 2
                    for key in ((name, fraction), ("ALL", fraction)):
                        t = tallies.setdefault(key, [0, 0, 0.0, 0, 0.0, 0.0])
                        t[0] += 1
                        t[1] += own["lower"] <= truth <= own["upper"]
                        t[2] += abs(own["predicted"] - truth) / span
                        t[3] += sib["lower"] <= truth <= sib["upper"]
                        t[4] += abs(sib["predicted"] - truth) / span
                        t[5] += abs(metrics[seen - 1] - truth) / span
    print("explsched predict on whole sweeps: 80 % interval coverage of the final metric and its error over the "
          "curve's range, alone and with --sibling (every other trial of the sweep, ended)")
    print("%-10s %5s  %-22s  %-22s  %s" % ("set", "obs", "predict", "predict --sibling", "last value"))
    for key in sorted(tallies, key=lambda k: (k[0] == "ALL", k[0], k[1])):
        n, oc, oe, sc, se, le = tallies[key]
        print("%-10s %4.0f%%  %5.1f%% %6.3f %5.2fx  %5.1f%% %6.3f %5.2fx  %6.3f  n=%d"
              % (key[0], 100 * key[1], 100.0 * oc / n, oe / n, oe / le if le else float("nan"), 100.0 * sc / n, se / n,
                 se / le if le else float("nan"), le / n, n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
