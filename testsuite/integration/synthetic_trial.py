#!/usr/bin/python3
"""A trial for integration tests: reports loss = a + b * step^-c every --every seconds up to
--steps (with --drop STEP --after LOSS a late bloomer: that curve up to STEP, then an exponential
fall to LOSS, reached by --steps), through the explsched Python module (contrib/python). Like a real training program it
checkpoints (the last step) on SIGTERM, Slurm's preemption signal, and every step, and resumes
from the checkpoint when requeued. Prints one line per event."""
import argparse
import math
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib", "python"))
import explsched  # noqa: E402

# One short attempt per point, as the fault tests expect: a point sent while explschedd is down is
# lost (and printed), not retried across the outage.
os.environ.setdefault("EXPLSCHED_REPORT_TIMEOUT", "1")

ap = argparse.ArgumentParser()
ap.add_argument("--a", type=float, required=True)
ap.add_argument("--b", type=float, required=True)
ap.add_argument("--c", type=float, default=0.5)
ap.add_argument("--steps", type=int, default=1000)
ap.add_argument("--stride", type=int, default=10)
ap.add_argument("--every", type=float, default=0.2)
ap.add_argument("--checkpoint", required=True)
ap.add_argument("--drop", type=int, default=0, help="late bloomer: the curve falls from this step on")
ap.add_argument("--after", type=float, default=0.0, help="late bloomer: the loss it falls to")
ap.add_argument("--acks", default="", help="append each acknowledged step to this file")
args = ap.parse_args()

step = 0
if os.path.exists(args.checkpoint):
    with open(args.checkpoint) as f:
        step = int(f.read().strip() or 0)
    print("resumed from step %d (restart %s)" % (step, os.environ.get("SLURM_RESTART_COUNT", "?")), flush=True)
else:
    print("started", flush=True)

stop = False


def loss_at(s):
    loss = args.a + args.b * s ** (-args.c)
    if args.drop > 0 and s > args.drop:
        start = args.a + args.b * args.drop ** (-args.c)
        tau = max(1.0, (args.steps - args.drop) / 5.0)
        loss = args.after + (start - args.after) * math.exp(-(s - args.drop) / tau)
    return loss



def on_term(signum, frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
while step < args.steps and not stop:
    step += args.stride
    loss = loss_at(step)
    try:
        explsched.report(step, loss, throughput=args.stride / args.every, strict=True)
        if args.acks:
            with open(args.acks, "a") as f:
                f.write("%d\n" % step)
    except explsched.ReportRefused as e:
        print("refused at step %d: %s" % (step, e), flush=True)
    except explsched.ReportError as e:  # explschedd down: training goes on, the point is lost
        print("not acknowledged at step %d: %s" % (step, e), flush=True)
    with open(args.checkpoint + ".tmp", "w") as f:
        f.write(str(step))
    os.replace(args.checkpoint + ".tmp", args.checkpoint)
    time.sleep(args.every)
if stop:
    print("checkpointed at step %d" % step, flush=True)
else:
    print("done at step %d loss %.6f" % (step, loss_at(step)), flush=True)
