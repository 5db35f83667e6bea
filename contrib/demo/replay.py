#!/usr/bin/python3
"""Writes the demo's real training sweep (contrib/demo.sh) as explsched-sim input, so every policy
can be replayed on it in seconds, without a cluster.

usage: replay.py OUTDIR [--steps N] [--eval-every N] [--step-time S] [--gpus-per-trial G]

Runs contrib/demo/train.py once per trial of the demo's job array (--sweep-index 0..31, the same
seed and steps as contrib/demo.sh, no step delay), uninterrupted, and writes
  OUTDIR/curves/spirals/validation-<index+1>.csv   each trial's validation-loss curve
  OUTDIR/curves/spirals/placements.csv             --step-time seconds per step on any placement
  OUTDIR/curves/spirals/direction                  min
  OUTDIR/trace.csv                                 32 one-GPU trials of one application, all at t=0
                                                   (--gpus-per-trial G: G GPUs each)
Replay: explsched-sim --trace OUTDIR/trace.csv --curves OUTDIR/curves --gpus 16 --sweep-size 32
--variation none. The curves are real (a numpy MLP with minibatch SGD), deterministic for the
seed, and include the sweep's best trial, which plateaus for half its run before its loss falls.

The default step time (1.5 s) keeps the demo's proportions in the simulator's time scale: a demo
trial runs 15 re-ranking periods (30 s at rerank_period=2), a replayed one 15 of the simulator's
300 s periods. Needs python3-numpy.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # the source tree may be read-only (make distcheck)
sys.path.insert(0, HERE)
from train import SWEEP_SIZE  # noqa: E402  (the grid lives with the training program)

APPLICATION = "spirals"
SEED = 7  # contrib/demo.sh's


def run_trial(index, steps, eval_every):
    """The trial's (step, val_loss) points, from a real run of train.py."""
    cmd = [sys.executable, os.path.join(HERE, "train.py"), "--sweep-index", str(index), "--steps", str(steps),
           "--eval-every", str(eval_every), "--seed", str(SEED), "--ckpt-every", "0"]
    env = dict(os.environ)
    env.pop("EXPLSCHED_JOB_ID", None)  # never report to a collector from here
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError("replay: trial %d: train.py exited %d: %s" % (index, proc.returncode,
                                                                          proc.stderr.strip()[-400:]))
    points = []
    for line in proc.stdout.splitlines():
        record = json.loads(line)
        if "val_loss" in record:
            points.append((record["step"], record["val_loss"]))
    if not points:
        raise RuntimeError("replay: trial %d: train.py reported no validation point" % index)
    return points


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--step-time", type=float, default=1.5)
    ap.add_argument("--gpus-per-trial", type=int, default=1)
    args = ap.parse_args(argv[1:])
    if args.steps <= 0 or args.eval_every <= 0 or not args.step_time > 0 or args.gpus_per_trial <= 0:
        ap.error("--steps, --eval-every, --gpus-per-trial and --step-time must be positive")

    curves = os.path.join(args.outdir, "curves", APPLICATION)
    os.makedirs(curves, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        runs = list(pool.map(lambda i: run_trial(i, args.steps, args.eval_every), range(SWEEP_SIZE)))
    for index, points in enumerate(runs):
        with open(os.path.join(curves, "validation-%d.csv" % (index + 1)), "w") as out:
            out.write("iteration,metric\n")
            out.writelines("%d,%r\n" % (step, loss) for step, loss in points)
    with open(os.path.join(curves, "placements.csv"), "w") as out:
        # batch_size in the trace names the trial's curve (1..32); every size runs at one speed
        out.write("placement,local_bsz,step_time\n1,1,%r\n1,%d,%r\n" % (args.step_time, SWEEP_SIZE, args.step_time))
    with open(os.path.join(curves, "direction"), "w") as out:
        out.write("min\n")
    with open(os.path.join(args.outdir, "trace.csv"), "w") as out:
        out.write("name,time,application,num_replicas,batch_size\n")
        out.writelines("demo-%d,0,%s,%d,%d\n" % (i, APPLICATION, args.gpus_per_trial, i + 1)
                      for i in range(SWEEP_SIZE))
    best = min(range(SWEEP_SIZE), key=lambda i: min(loss for _, loss in runs[i]))
    print("replay: wrote %d curves to %s; best trial: index %d (val_loss %.4f)" % (
        SWEEP_SIZE, args.outdir, best, min(loss for _, loss in runs[best])))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (RuntimeError, OSError) as e:
        sys.stderr.write("%s\n" % e)
        sys.exit(1)
