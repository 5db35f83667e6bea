#!/usr/bin/python3
"""A small but real training run for ExplSched's demo and tests: a two-layer MLP trained with
minibatch SGD (numpy) on a synthetic two-spirals classification set, over hyperparameters that a
sweep varies (learning rate, hidden width, batch size). Every --eval-every steps it evaluates the
validation loss, prints it, and reports it to explschedd when run under `sbatch --explore`.

It checkpoints on SIGTERM (what Slurm sends before a preemption requeue) and every --ckpt-every
steps, and resumes from its checkpoint when restarted, as a well-behaved trial does.

With --optuna-storage URL --optuna-study NAME it is what a user without ExplSched runs: an Optuna
trial of that study (created beforehand, direction minimize) that reports its validation loss at
every evaluation and stops when the study's pruner says so (`should_prune()`), printing
{"event": "pruned"}; a trial that ends is told to the study with its final loss. The study lives in
RDB storage shared by all trials (sqlite:///PATH works; python3-optuna and python3-sqlalchemy).
"""
import argparse
import json
import math
import os
import signal
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "python"))
try:
    import explsched  # contrib/python/explsched.py
except ImportError:  # pragma: no cover - reporting is optional outside a cluster
    explsched = None


def spirals(n, noise, rng):
    t = np.sqrt(rng.uniform(0.0, 1.0, n)) * 3.0 * math.pi
    cls = rng.integers(0, 2, n)
    r = t / (3.0 * math.pi)
    angle = t + cls * math.pi
    x = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1)
    x += rng.normal(0.0, noise, x.shape)
    return x.astype(np.float64), cls.astype(np.float64)


def forward(params, x):
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    logits = (h @ w2 + b2).ravel()
    return h, logits


def loss_and_grads(params, x, y):
    w1, b1, w2, b2 = params
    h, logits = forward(params, x)
    p = 1.0 / (1.0 + np.exp(-logits))
    eps = 1e-12
    loss = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
    d = (p - y)[:, None] / len(y)
    gw2 = h.T @ d
    gb2 = d.sum(axis=0)
    dh = (d @ w2.T) * (1 - h * h)
    gw1 = x.T @ dh
    gb1 = dh.sum(axis=0)
    return loss, (gw1, gb1, gw2, gb2)


# The demo's sweep (contrib/demo.sh): a shuffled 8 x 4 grid of learning rate and hidden width, one
# point per job-array index. contrib/demo/replay.py replays the same trials in the simulator.
SWEEP_LRS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8)
SWEEP_WIDTHS = (8, 16, 32, 64)
SWEEP_SIZE = len(SWEEP_LRS) * len(SWEEP_WIDTHS)


def sweep_point(index):
    """(learning rate, hidden width) of the demo sweep's trial `index` (0 <= index < 32)."""
    if not 0 <= index < SWEEP_SIZE:
        raise ValueError("--sweep-index: %d is not in 0..%d" % (index, SWEEP_SIZE - 1))
    k = (index * 13 + 5) % SWEEP_SIZE
    return SWEEP_LRS[k % len(SWEEP_LRS)], SWEEP_WIDTHS[k // len(SWEEP_LRS)]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--ckpt-every", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--checkpoint", default="")
    ap.add_argument("--step-delay", type=float, default=0.0,
                    help="seconds to sleep per step (stretches the demo to cluster time scales)")
    ap.add_argument("--sweep-index", type=int, default=None,
                    help="take --lr and --hidden from the demo sweep's grid point INDEX (0..31)")
    ap.add_argument("--optuna-storage", default="", help="Optuna RDB storage URL of the sweep's study")
    ap.add_argument("--optuna-study", default="", help="the study's name (with --optuna-storage)")
    ap.add_argument("--optuna-pruner", default="median", choices=("median", "sha", "hyperband"),
                    help="MedianPruner() (Optuna's default), SuccessiveHalvingPruner(min_resource=1) or "
                         "HyperbandPruner(min_resource=1, max_resource=steps/eval-every)")
    args = ap.parse_args()
    if bool(args.optuna_storage) != bool(args.optuna_study):
        ap.error("--optuna-storage and --optuna-study go together")
    if args.sweep_index is not None:
        try:
            args.lr, args.hidden = sweep_point(args.sweep_index)
        except ValueError as e:
            ap.error(str(e))

    data_rng = np.random.default_rng(1234)  # same data for every trial of the sweep
    xtr, ytr = spirals(2000, 0.05, data_rng)
    xva, yva = spirals(1000, 0.05, data_rng)
    rng = np.random.default_rng(args.seed)
    params = [rng.normal(0, 1.0 / math.sqrt(2), (2, args.hidden)), np.zeros(args.hidden),
              rng.normal(0, 1.0 / math.sqrt(args.hidden), (args.hidden, 1)), np.zeros(1)]
    step = 0
    if args.checkpoint and os.path.exists(args.checkpoint):
        with np.load(args.checkpoint) as ck:
            params = [ck["w1"], ck["b1"], ck["w2"], ck["b2"]]
            step = int(ck["step"])
            # the minibatch generator's state: a resumed trial draws the batches the uninterrupted
            # one would (so a pause or preemption does not change where it ends); checkpoints
            # without it reseed
            if "rng_state" in ck.files:
                rng.bit_generator.state = json.loads(str(ck["rng_state"]))
            else:
                rng = np.random.default_rng(args.seed + step)
        print(json.dumps({"event": "resumed", "step": step}), flush=True)

    def save():
        if not args.checkpoint:
            return
        tmp = args.checkpoint + ".tmp.npz"
        np.savez(tmp, w1=params[0], b1=params[1], w2=params[2], b2=params[3], step=step,
                 rng_state=json.dumps(rng.bit_generator.state))
        os.replace(tmp, args.checkpoint)

    stop = {"now": False}

    def on_term(signum, frame):  # Slurm's preemption signal: checkpoint, then leave
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_term)

    study = trial = None
    if args.optuna_storage:
        import optuna
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        # SQLite under concurrent trials: wait for the lock rather than fail.
        storage = optuna.storages.RDBStorage(args.optuna_storage, engine_kwargs={"connect_args": {"timeout": 120}})
        evals = max(args.steps // args.eval_every, 1)
        # The step reported is the evaluation's number (1, 2, ...), as a loop that reports per epoch.
        pruner = {"median": lambda: optuna.pruners.MedianPruner(),
                  "sha": lambda: optuna.pruners.SuccessiveHalvingPruner(min_resource=1),
                  "hyperband": lambda: optuna.pruners.HyperbandPruner(min_resource=1, max_resource=evals)}
        study = optuna.load_study(study_name=args.optuna_study, storage=storage, pruner=pruner[args.optuna_pruner]())
        trial = study.ask()
        trial.set_user_attr("lr", args.lr)
        trial.set_user_attr("hidden", args.hidden)
        print(json.dumps({"event": "optuna_trial", "number": trial.number}), flush=True)

    last_reported = None
    while step < args.steps and not stop["now"]:
        idx = rng.integers(0, len(ytr), args.batch)
        loss, grads = loss_and_grads(params, xtr[idx], ytr[idx])
        if not math.isfinite(loss):
            print(json.dumps({"event": "diverged", "step": step}), flush=True)
            if trial is not None:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
            return 3
        for p, g in zip(params, grads):
            p -= args.lr * g
        step += 1
        if args.step_delay > 0:
            time.sleep(args.step_delay)
        if step % args.eval_every == 0 or step == args.steps:
            val, _ = loss_and_grads(params, xva, yva)
            acc = float(np.mean((forward(params, xva)[1] > 0) == (yva > 0.5)))
            print(json.dumps({"step": step, "val_loss": round(float(val), 6), "val_acc": acc,
                              "t": round(time.time(), 3)}), flush=True)
            if trial is not None and math.isfinite(val):
                trial.report(float(val), step // args.eval_every)
                if trial.should_prune():
                    study.tell(trial, state=optuna.trial.TrialState.PRUNED)
                    print(json.dumps({"event": "pruned", "step": step}), flush=True)
                    return 0
            if explsched is not None and os.environ.get("EXPLSCHED_JOB_ID"):
                try:
                    explsched.report(step, float(val))
                    last_reported = step
                except Exception as e:  # reporting must never kill training
                    print(json.dumps({"event": "report_failed", "step": step, "error": str(e)}),
                          file=sys.stderr, flush=True)
        if args.ckpt_every and step % args.ckpt_every == 0:
            save()
    save()
    if stop["now"]:
        print(json.dumps({"event": "checkpointed", "step": step}), flush=True)
        return 0
    if trial is not None:
        val, _ = loss_and_grads(params, xva, yva)
        study.tell(trial, float(val))
    print(json.dumps({"event": "done", "step": step, "last_reported": last_reported}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
