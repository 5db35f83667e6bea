#!/usr/bin/python3
"""A trial of an ExplSched sweep: logistic regression by SGD (standard library only), reporting
its validation loss every --report-every steps. Submit one trial per learning rate:

    for lr in 0.01 0.03 0.1 0.3; do
        sbatch --explore=lr-sweep --explore-metric=val_loss:min --explore-max-steps=2000 \\
            --gres=gpu:1 --wrap "PYTHONPATH=/usr/share/explsched/python python3 example_train.py --lr $lr"
    done

In a PyTorch Lightning project the same call goes into a callback:

    class ExplSchedCallback(pytorch_lightning.Callback):
        def on_validation_end(self, trainer, pl_module):
            explsched.report(trainer.global_step, float(trainer.callback_metrics["val_loss"]))

and in a plain PyTorch loop after each evaluation: ``explsched.report(step, val_loss.item())``.
"""

import argparse
import math
import random

import explsched


def make_data(n, rng):
    """Two Gaussian blobs in 2-D: label 1 around (1, 1), label 0 around (-1, -1)."""
    data = []
    for _ in range(n):
        y = rng.random() < 0.5
        c = 1.0 if y else -1.0
        data.append(((rng.gauss(c, 1.2), rng.gauss(c, 1.2)), 1.0 if y else 0.0))
    return data


def loss(w, b, data):
    total = 0.0
    for (x1, x2), y in data:
        p = 1.0 / (1.0 + math.exp(-(w[0] * x1 + w[1] * x2 + b)))
        p = min(max(p, 1e-12), 1 - 1e-12)
        total -= y * math.log(p) + (1 - y) * math.log(1 - p)
    return total / len(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--report-every", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    train, val = make_data(2000, rng), make_data(500, rng)
    w, b = [0.0, 0.0], 0.0
    for step in range(1, args.steps + 1):
        (x1, x2), y = train[rng.randrange(len(train))]
        p = 1.0 / (1.0 + math.exp(-(w[0] * x1 + w[1] * x2 + b)))
        g = p - y
        w[0] -= args.lr * g * x1
        w[1] -= args.lr * g * x2
        b -= args.lr * g
        if step % args.report_every == 0:
            val_loss = loss(w, b, val)
            # Never raises: a point explschedd cannot take (down, busy, refused) is dropped with
            # one warning, and training goes on; the scheduler just knows less.
            explsched.report(step, val_loss)
            print("step %d val_loss %.4f" % (step, val_loss), flush=True)


if __name__ == "__main__":
    main()
