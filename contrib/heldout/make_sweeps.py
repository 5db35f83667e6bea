#!/usr/bin/python3
"""Makes the held-out learning-curve sweeps (contrib/heldout/curves/) by training small models.

Every application is one hyperparameter sweep (learning rate, width, regularisation) of a small
model on a data set that ships with scikit-learn (load_digits, load_breast_cancer, load_diabetes,
load_wine, make_friedman1, make_classification), trained with Debian's python3-torch (CPU) or
python3-sklearn. One validation metric per epoch is written in the layout of
../shared/data/curves/<app>/validation-*.csv (progress,iteration,metric,grad_sqr,grad_var), with a
`direction` file (min/max) and a `placements.csv` (one step time) so the simulator's curve
library reads them too. A run whose loss becomes NaN/inf writes that row and stops (a diverged
trial). Deterministic: fixed seeds, one torch thread. About a minute on one core.

usage: contrib/heldout/make_sweeps.py [OUTDIR]           (default: contrib/heldout/curves)
       contrib/heldout/make_sweeps.py --steps [OUTDIR]   (the step-schedule sweeps; default:
                                                         contrib/heldout/steps)
       contrib/heldout/make_sweeps.py --steps-late [OUTDIR]  (drops at half and three quarters of
                                                         the run; default: contrib/heldout/steps_late)
       contrib/heldout/make_sweeps.py --fresh [OUTDIR]   (the fresh sweeps, never used to choose a
                                                         default; default: contrib/heldout/fresh)
       contrib/heldout/make_sweeps.py --plateau [OUTDIR] (learning rate x0.1 when the validation loss
                                                         stalls, ReduceLROnPlateau: drops no trial can
                                                         declare; default: contrib/heldout/plateau)
"""
import math
import os
import sys
import warnings

import numpy as np
import torch
from sklearn import datasets
from sklearn.linear_model import SGDClassifier, SGDRegressor
from sklearn.metrics import log_loss, r2_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

torch.set_num_threads(1)
warnings.filterwarnings("ignore")


def split(x, y, seed, stratify=True):
    xt, xv, yt, yv = train_test_split(x, y, test_size=0.3, random_state=seed, stratify=y if stratify else None)
    sc = StandardScaler().fit(xt)
    return sc.transform(xt).astype(np.float32), sc.transform(xv).astype(np.float32), yt, yv


class Curve:
    """Collects one row per epoch; gradient statistics over the epoch's mini-batches."""

    def __init__(self):
        self.rows = []
        self.samples = 0
        self.iterations = 0
        self.g = []

    def batch(self, n, grad_sq):
        self.samples += n
        self.iterations += 1
        self.g.append(grad_sq)

    def epoch(self, metric):
        g = np.array(self.g) if self.g else np.zeros(1)
        self.rows.append((self.samples, self.iterations, metric, float(g.mean()), float(g.var())))
        self.g = []
        return math.isfinite(metric)


def grad_sq(model):
    total = 0.0
    for p in model.parameters():
        if p.grad is not None:
            total += float((p.grad.detach() ** 2).sum())
    return total


def torch_train(model, xt, yt, xv, yv, epochs, lr, wd, batch, seed, metric, loss_fn, opt="sgd", momentum=0.9,
                step_decay=None, milestones=None, schedule=None):
    torch.manual_seed(seed)
    xt_t, xv_t = torch.from_numpy(xt), torch.from_numpy(xv)
    yt_t, yv_t = torch.from_numpy(yt), torch.from_numpy(yv)
    if opt == "adam":
        optim = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=wd)
    else:
        optim = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=wd)
    sched = torch.optim.lr_scheduler.StepLR(optim, step_size=step_decay, gamma=0.1) if step_decay else None
    if milestones:  # ImageNet's schedule: x0.1 at fixed epochs
        sched = torch.optim.lr_scheduler.MultiStepLR(optim, milestones=milestones, gamma=0.1)
    if schedule == "plateau":  # x0.1 once the validation loss has not improved for 4 epochs
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(optim, mode="min", factor=0.1, patience=4)
    if schedule == "cosine":  # annealed to 0 over the run: curves flatten as the rate does
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(optim, T_max=epochs)
    elif schedule == "warmup_linear":  # 5 epochs of warm-up, then linear decay to 0 (BERT's)
        sched = torch.optim.lr_scheduler.LambdaLR(
            optim, lambda e: (e + 1) / 5.0 if e < 5 else max(0.0, (epochs - e) / float(epochs - 5)))
    gen = torch.Generator().manual_seed(seed)
    curve = Curve()
    n = xt_t.shape[0]
    for _ in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=gen)
        bad = False
        for i in range(0, n, batch):
            idx = perm[i:i + batch]
            optim.zero_grad()
            loss = loss_fn(model(xt_t[idx]), yt_t[idx])
            if not torch.isfinite(loss):
                bad = True
                break
            loss.backward()
            curve.batch(len(idx), grad_sq(model))
            optim.step()
        if sched and schedule != "plateau":
            sched.step()
        model.eval()
        with torch.no_grad():
            value = float("nan") if bad else metric(model(xv_t), yv_t)
            if schedule == "plateau" and not bad:
                sched.step(float(loss_fn(model(xv_t), yv_t)))
        if not curve.epoch(value):
            break
    return curve.rows


def accuracy(out, y):
    return float((out.argmax(1) == y).float().mean())


def mse(out, y):
    return float(((out.squeeze(1) - y) ** 2).mean())


def ce_loss(out, y):
    return float(torch.nn.functional.cross_entropy(out, y))


def mlp(d_in, width, d_out, depth=2):
    layers, d = [], d_in
    for _ in range(depth):
        layers += [torch.nn.Linear(d, width), torch.nn.ReLU()]
        d = width
    layers.append(torch.nn.Linear(d, d_out))
    return torch.nn.Sequential(*layers)


class SmallCNN(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = torch.nn.Sequential(
            torch.nn.Conv2d(1, channels, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(channels, channels, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2))
        self.head = torch.nn.Linear(channels * 16, 10)

    def forward(self, x):
        return self.head(self.conv(x.view(-1, 1, 8, 8)).flatten(1))


class RowGRU(torch.nn.Module):
    """Reads an 8x8 digit one row at a time."""

    def __init__(self, hidden):
        super().__init__()
        self.rnn = torch.nn.GRU(8, hidden, batch_first=True)
        self.head = torch.nn.Linear(hidden, 10)

    def forward(self, x):
        _, h = self.rnn(x.view(-1, 8, 8))
        return self.head(h[-1])


# --- the sweeps: one model per grid entry, trial i seeded with seed + i ---

def grid(names, values):
    """The grid's entries as dicts (hyperparameter name -> value), for the models and labels."""
    return [dict(zip(names, v)) for v in values]


def torch_sweep(data, seed, entries, model, label, epochs, batch, metric, loss_fn, **train):
    """Trains model(hp) for every entry hp with torch_train; lr and wd (default 0) come from hp."""
    xt, xv, yt, yv = data
    out = []
    for i, hp in enumerate(entries):
        torch.manual_seed(seed + i)
        rows = torch_train(model(hp), xt, yt, xv, yv, epochs, hp["lr"], hp.get("wd", 0.0), batch, seed + i,
                           metric, loss_fn, **train)
        out.append((label % hp, rows))
    return out


def sklearn_sweep(data, seed, entries, model, label, batch, score, **fit):
    """Trains model(hp, seed) for 40 epochs of partial_fit on shuffled mini-batches; score(model, xv, yv)
    is the epoch's metric."""
    xt, xv, yt, yv = data
    out = []
    for i, hp in enumerate(entries):
        m = model(hp, seed + i)
        curve = Curve()
        rng = np.random.RandomState(seed + i)
        for _ in range(40):
            perm = rng.permutation(len(yt))
            for b in range(0, len(yt), batch):
                idx = perm[b:b + batch]
                m.partial_fit(xt[idx], yt[idx], **fit)
                curve.batch(len(idx), float((m.coef_ ** 2).sum()))
            if not curve.epoch(score(m, xv, yv)):
                break
        out.append((label % hp, curve.rows))
    return out


def class_split(x, y, seed):
    """split() with integer class labels (torch's cross-entropy wants int64)."""
    xt, xv, yt, yv = split(x, y, seed)
    return xt, xv, yt.astype(np.int64), yv.astype(np.int64)


cross_entropy = torch.nn.functional.cross_entropy


# --- the applications: each returns (name, direction, [(hyperparameters, rows)]) ---

def digits_mlp():
    x, y = datasets.load_digits(return_X_y=True)
    entries = grid(("lr", "width", "wd"), [(0.001, 64, 0), (0.003, 64, 0), (0.01, 64, 0), (0.03, 64, 0),
                                           (0.1, 64, 0), (0.3, 64, 0), (1.0, 64, 0), (0.003, 16, 0),
                                           (0.01, 16, 1e-3), (0.03, 256, 1e-4), (0.001, 256, 0),
                                           (0.1, 16, 1e-2)])
    return "digits_mlp", "max", torch_sweep(class_split(x, y, 0), 100, entries, lambda hp: mlp(64, hp["width"], 10),
                                            "lr=%(lr)g width=%(width)d wd=%(wd)g", 50, 64, accuracy, cross_entropy,
                                            momentum=0.0)


def digits_cnn_loss():
    # validation cross-entropy (minimised), step decay at epoch 30 of 45: curves that drop late
    x, y = datasets.load_digits(return_X_y=True)
    entries = grid(("lr", "channels", "wd"), [(0.002, 8, 0), (0.005, 8, 0), (0.01, 8, 0), (0.02, 8, 0),
                                              (0.05, 8, 0), (0.1, 8, 0), (0.005, 16, 1e-3), (0.02, 16, 1e-3),
                                              (0.002, 4, 0), (0.05, 4, 1e-2)])
    return "digits_cnn_loss", "min", torch_sweep(class_split(x, y, 1), 200, entries,
                                                 lambda hp: SmallCNN(hp["channels"]),
                                                 "lr=%(lr)g channels=%(channels)d wd=%(wd)g stepdecay=30", 45, 64,
                                                 ce_loss, cross_entropy, momentum=0.9, step_decay=30)


def digits_gru():
    x, y = datasets.load_digits(return_X_y=True)
    entries = grid(("lr", "hidden"), [(0.0003, 32), (0.001, 32), (0.003, 32), (0.01, 32), (0.03, 32), (0.1, 32),
                                      (0.001, 8), (0.003, 8), (0.01, 64), (0.0003, 64)])
    return "digits_gru", "max", torch_sweep(class_split(x, y, 2), 300, entries, lambda hp: RowGRU(hp["hidden"]),
                                            "adam lr=%(lr)g hidden=%(hidden)d", 40, 64, accuracy, cross_entropy,
                                            opt="adam")


def diabetes_mlp():
    # regression: validation MSE of the (standardised) target, minimised; overfits at width 256
    x, y = datasets.load_diabetes(return_X_y=True)
    y = ((y - y.mean()) / y.std()).astype(np.float32)
    entries = grid(("lr", "width", "wd"), [(0.0003, 32, 0), (0.001, 32, 0), (0.003, 32, 0), (0.01, 32, 0),
                                           (0.03, 32, 0), (0.1, 32, 0), (0.003, 256, 0), (0.01, 256, 1e-2),
                                           (0.001, 8, 0), (0.03, 8, 1e-3), (0.3, 32, 0)])
    return "diabetes_mlp", "min", torch_sweep(split(x, y, 3, stratify=False), 400, entries,
                                              lambda hp: mlp(10, hp["width"], 1), "lr=%(lr)g width=%(width)d wd=%(wd)g",
                                              60, 32, mse, lambda o, t: torch.nn.functional.mse_loss(o.squeeze(1), t),
                                              momentum=0.9)


def breast_cancer_loss():
    # validation log-loss (minimised) of a wide MLP: some overfit and turn up late
    x, y = datasets.load_breast_cancer(return_X_y=True)
    entries = grid(("lr", "width", "wd"), [(0.0001, 64, 0), (0.0003, 64, 0), (0.001, 64, 0), (0.003, 64, 0),
                                           (0.01, 64, 0), (0.03, 64, 0), (0.001, 512, 0), (0.001, 512, 1e-2),
                                           (0.0003, 16, 0), (0.003, 16, 1e-3)])
    return "breast_cancer_loss", "min", torch_sweep(class_split(x, y, 4), 500, entries,
                                                    lambda hp: mlp(30, hp["width"], 2),
                                                    "lr=%(lr)g width=%(width)d wd=%(wd)g", 50, 32, ce_loss,
                                                    cross_entropy, momentum=0.9)


def r2(model, xv, yv):
    pred = model.predict(xv)
    return float(r2_score(yv, pred)) if np.all(np.isfinite(pred)) else float("nan")


def friedman_sgd_r2():
    # sklearn SGDRegressor (partial_fit epochs) on make_friedman1 with spline-free polynomial
    # features: R^2 on the validation split, maximised
    x, y = datasets.make_friedman1(n_samples=2000, n_features=10, noise=1.0, random_state=6)
    x = np.hstack([x, x ** 2, x[:, :5] * x[:, 5:10]])
    entries = grid(("eta", "alpha"), [(0.0001, 1e-4), (0.0003, 1e-4), (0.001, 1e-4), (0.003, 1e-4), (0.01, 1e-4),
                                      (0.03, 1e-4), (0.001, 1e-2), (0.003, 1e-1), (0.0003, 1e-3), (0.01, 1e-3)])

    def model(hp, seed):
        return SGDRegressor(learning_rate="invscaling", eta0=hp["eta"], power_t=0.25, alpha=hp["alpha"],
                            random_state=seed)

    return "friedman_sgd_r2", "max", sklearn_sweep(split(x, y, 6, stratify=False), 600, entries, model,
                                                   "sgd eta0=%(eta)g alpha=%(alpha)g", 50, r2)


def three_class_log_loss(model, xv, yv):
    p = model.predict_proba(xv)
    return float(log_loss(yv, p, labels=np.arange(3))) if np.all(np.isfinite(p)) else float("nan")


def classification_sgd_logloss():
    # sklearn SGDClassifier (log loss) on make_classification: validation log-loss, minimised
    x, y = datasets.make_classification(n_samples=3000, n_features=40, n_informative=12, n_redundant=8,
                                        n_classes=3, class_sep=0.8, flip_y=0.03, random_state=7)
    entries = grid(("eta", "alpha"), [(0.00003, 1e-4), (0.0001, 1e-4), (0.0003, 1e-4), (0.001, 1e-4),
                                      (0.003, 1e-4), (0.01, 1e-4), (0.001, 1e-2), (0.0003, 1e-3),
                                      (0.03, 1e-5), (0.0001, 1e-2)])

    def model(hp, seed):
        return SGDClassifier(loss="log_loss", learning_rate="constant", eta0=hp["eta"], alpha=hp["alpha"],
                             random_state=seed)

    return "classification_sgd_logloss", "min", sklearn_sweep(split(x, y, 7), 700, entries, model,
                                                              "sgd log_loss eta0=%(eta)g alpha=%(alpha)g", 100,
                                                              three_class_log_loss, classes=np.arange(3))


def wine_mlp():
    x, y = datasets.load_wine(return_X_y=True)
    entries = grid(("lr", "width"), [(0.0003, 16), (0.001, 16), (0.003, 16), (0.01, 16), (0.03, 16), (0.001, 4),
                                     (0.003, 4), (0.0003, 64)])
    return "wine_mlp_loss", "min", torch_sweep(class_split(x, y, 8), 800, entries,
                                               lambda hp: mlp(13, hp["width"], 3, depth=1), "lr=%(lr)g width=%(width)d",
                                               40, 16, ce_loss, cross_entropy, momentum=0.0)


def step_schedule_sweep(name, milestones):
    """The step-schedule sweep on a noisy 8-class problem: SGD+momentum with weight decay, learning
    rate x0.1 at the epochs `milestones` of 48; 12 trials over learning rate, width and decay."""
    x, y = datasets.make_classification(n_samples=8000, n_features=40, n_informative=30, n_redundant=5,
                                        n_classes=8, flip_y=0.1, class_sep=1.5, random_state=7)
    entries = grid(("lr", "width", "wd"), [(0.02, 128, 5e-4), (0.05, 128, 5e-4), (0.1, 128, 5e-4), (0.2, 128, 5e-4),
                                           (0.4, 128, 5e-4), (0.05, 256, 1e-3), (0.1, 256, 1e-3), (0.2, 256, 1e-3),
                                           (0.1, 64, 5e-4), (0.3, 64, 1e-4), (0.01, 256, 0), (0.15, 192, 5e-4)])
    label = "lr=%(lr)g width=%(width)d wd=%(wd)g milestones=" + ",".join(str(m) for m in milestones)
    return name, "max", torch_sweep(class_split(x, y, 3), 300, entries, lambda hp: mlp(40, hp["width"], 8), label,
                                    48, 64, accuracy, cross_entropy, momentum=0.9, milestones=list(milestones))


def steps_mlp_acc():
    # ImageNet's schedule: x0.1 at epochs 16 and 32 of 48 (ResNet's 30 and 60 of 90). High learning
    # rates sit on a noisy plateau until the first drop and then jump; low ones learn smoothly and
    # overfit.
    return step_schedule_sweep("steps_mlp_acc", (16, 32))


# --- the fresh sweeps (--fresh): made on 2026-12-07, after every default of the engine was set and
# never used to choose one; kinds of curve the other sets lack (a learning rate annealed to 0,
# warm-up then linear decay, boosting stages, an autoencoder's reconstruction error, a hinge-loss
# linear model on random features) ---

def moons_mlp_acc():
    # a 3-layer ReLU MLP on two noisy half-moons, plain SGD: validation accuracy, maximised
    x, y = datasets.make_moons(n_samples=2000, noise=0.35, random_state=11)
    entries = grid(("lr", "width"), [(0.003, 32), (0.01, 32), (0.03, 32), (0.1, 32), (0.3, 32), (1.0, 32),
                                     (0.01, 8), (0.1, 8), (0.03, 128), (0.3, 128)])
    return "moons_mlp_acc", "max", torch_sweep(class_split(x, y, 11), 1100, entries,
                                               lambda hp: mlp(2, hp["width"], 2, depth=3),
                                               "lr=%(lr)g width=%(width)d", 60, 32, accuracy, cross_entropy,
                                               momentum=0.0)


def mae(out, y):
    return float((out.squeeze(1) - y).abs().mean())


def friedman2_cosine_mae():
    # regression with the learning rate annealed to 0 (cosine): validation MAE, minimised
    x, y = datasets.make_friedman2(n_samples=3000, noise=30.0, random_state=12)
    y = ((y - y.mean()) / y.std()).astype(np.float32)
    entries = grid(("lr", "width", "wd"), [(0.0003, 64, 0), (0.001, 64, 0), (0.003, 64, 0), (0.01, 64, 0),
                                           (0.03, 64, 0), (0.1, 64, 0), (0.01, 16, 0), (0.003, 256, 1e-3),
                                           (0.03, 256, 1e-2), (0.001, 16, 0)])
    return "friedman2_cosine_mae", "min", torch_sweep(
        split(x, y, 12, stratify=False), 1200, entries, lambda hp: mlp(4, hp["width"], 1),
        "lr=%(lr)g width=%(width)d wd=%(wd)g cosine", 50, 32, mae,
        lambda o, t: torch.nn.functional.l1_loss(o.squeeze(1), t), momentum=0.9, schedule="cosine")


class AutoEncoder(torch.nn.Module):
    def __init__(self, code):
        super().__init__()
        self.enc = torch.nn.Sequential(torch.nn.Linear(64, 48), torch.nn.ReLU(), torch.nn.Linear(48, code))
        self.dec = torch.nn.Sequential(torch.nn.Linear(code, 48), torch.nn.ReLU(), torch.nn.Linear(48, 64))

    def forward(self, x):
        return self.dec(self.enc(x))


def digits_autoencoder_mse():
    # reconstruction of the (standardised) digits through a bottleneck, Adam: validation MSE, minimised
    x, _ = datasets.load_digits(return_X_y=True)
    xt, xv, _, _ = split(x, np.zeros(len(x)), 13, stratify=False)
    entries = grid(("lr", "code"), [(0.0001, 8), (0.0003, 8), (0.001, 8), (0.003, 8), (0.01, 8), (0.03, 8),
                                    (0.001, 2), (0.003, 32), (0.0003, 32), (0.01, 2)])
    return "digits_autoencoder_mse", "min", torch_sweep(
        (xt, xv, xt, xv), 1300, entries, lambda hp: AutoEncoder(hp["code"]), "adam lr=%(lr)g code=%(code)d", 40, 64,
        lambda out, y: float(((out - y) ** 2).mean()), torch.nn.functional.mse_loss, opt="adam")


def circles_rff_hinge_acc():
    # a linear SVM (SGDClassifier, hinge loss, partial_fit epochs) on random Fourier features of two
    # noisy circles: validation accuracy, maximised
    from sklearn.kernel_approximation import RBFSampler
    x, y = datasets.make_circles(n_samples=3000, noise=0.2, factor=0.5, random_state=14)
    x = RBFSampler(gamma=2.0, n_components=200, random_state=14).fit_transform(x)
    entries = grid(("eta", "alpha"), [(0.00003, 1e-4), (0.0001, 1e-4), (0.0003, 1e-4), (0.001, 1e-4),
                                      (0.003, 1e-4), (0.01, 1e-4), (0.001, 1e-2), (0.0003, 1e-3),
                                      (0.03, 1e-5), (0.0001, 1e-6)])

    def model(hp, seed):
        return SGDClassifier(loss="hinge", learning_rate="constant", eta0=hp["eta"], alpha=hp["alpha"],
                             random_state=seed)

    def acc(m, xv, yv):
        return float((m.predict(xv) == yv).mean())

    return "circles_rff_hinge_acc", "max", sklearn_sweep(split(x, y, 14), 1400, entries, model,
                                                         "sgd hinge eta0=%(eta)g alpha=%(alpha)g", 50, acc,
                                                         classes=np.arange(2))


def gbdt_logloss():
    # gradient boosting, one point per 5 stages of 200 (staged_predict_proba): validation log-loss,
    # minimised; high learning rates overfit. `iteration` is the stage, grad_* the training loss.
    from sklearn.ensemble import GradientBoostingClassifier
    x, y = datasets.make_classification(n_samples=2000, n_features=20, n_informative=10, n_redundant=4,
                                        n_classes=4, flip_y=0.05, class_sep=0.9, random_state=15)
    xt, xv, yt, yv = split(x, y, 15)
    entries = grid(("lr", "depth", "sub"), [(0.01, 3, 1.0), (0.03, 3, 1.0), (0.1, 3, 1.0), (0.3, 3, 1.0),
                                            (1.0, 3, 1.0), (0.1, 1, 1.0), (0.1, 5, 0.5), (0.03, 5, 0.5),
                                            (0.3, 1, 0.5), (0.01, 5, 1.0)])
    out = []
    for i, hp in enumerate(entries):
        m = GradientBoostingClassifier(n_estimators=200, learning_rate=hp["lr"], max_depth=hp["depth"],
                                       subsample=hp["sub"], random_state=1500 + i).fit(xt, yt)
        rows = []
        for stage, p in enumerate(m.staged_predict_proba(xv), 1):
            if stage % 5:
                continue
            loss = float(log_loss(yv, p, labels=np.arange(4))) if np.all(np.isfinite(p)) else float("nan")
            rows.append((stage * len(yt), stage, loss, float(m.train_score_[stage - 1]), 0.0))
            if not math.isfinite(loss):
                break
        out.append(("gbdt lr=%(lr)g depth=%(depth)d subsample=%(sub)g" % hp, rows))
    return "gbdt_logloss", "min", out


def digits_warmup_err():
    # a dropout MLP with 5 epochs of warm-up and a linear decay to 0 (SGD+momentum): validation error
    # rate (1 - accuracy), minimised; the decay's last epochs still improve
    x, y = datasets.load_digits(return_X_y=True)

    def model(hp):
        return torch.nn.Sequential(torch.nn.Linear(64, hp["width"]), torch.nn.ReLU(), torch.nn.Dropout(hp["drop"]),
                                   torch.nn.Linear(hp["width"], hp["width"]), torch.nn.ReLU(),
                                   torch.nn.Dropout(hp["drop"]), torch.nn.Linear(hp["width"], 10))

    entries = grid(("lr", "width", "drop"), [(0.001, 64, 0.2), (0.003, 64, 0.2), (0.01, 64, 0.2), (0.03, 64, 0.2),
                                             (0.1, 64, 0.2), (0.3, 64, 0.2), (0.01, 256, 0.5), (0.03, 256, 0.5),
                                             (0.003, 16, 0.0), (0.03, 16, 0.0), (0.1, 256, 0.5), (0.001, 256, 0.0)])
    return "digits_warmup_err", "min", torch_sweep(class_split(x, y, 16), 1600, entries, model,
                                                   "lr=%(lr)g width=%(width)d dropout=%(drop)g warmup5+linear", 50, 64,
                                                   lambda out, y: 1.0 - accuracy(out, y), cross_entropy,
                                                   momentum=0.9, schedule="warmup_linear")


FRESH_APPLICATIONS = [moons_mlp_acc, friedman2_cosine_mae, digits_autoencoder_mse, circles_rff_hinge_acc,
                      gbdt_logloss, digits_warmup_err]


# --- the plateau sweeps (--plateau): made on 2026-12-07, after every default of the engine was set
# and never used to choose one; the learning rate drops x0.1 whenever the validation loss has stalled
# for 4 epochs (ReduceLROnPlateau), so each trial drops at its own time and none can declare it ---

def plateau_mlp_acc():
    # a ReLU MLP on a noisy 6-class problem, SGD+momentum: validation accuracy, maximised. High
    # rates stall early, drop and jump; low ones learn smoothly and drop late or never.
    x, y = datasets.make_classification(n_samples=5000, n_features=30, n_informative=20, n_redundant=4,
                                        n_classes=6, flip_y=0.08, class_sep=1.2, random_state=21)
    entries = grid(("lr", "width", "wd"), [(0.005, 128, 5e-4), (0.02, 128, 5e-4), (0.05, 128, 5e-4),
                                           (0.1, 128, 5e-4), (0.2, 128, 5e-4), (0.4, 128, 5e-4), (0.1, 32, 5e-4),
                                           (0.2, 256, 1e-3), (0.05, 256, 0), (0.3, 64, 1e-4), (0.01, 256, 1e-3),
                                           (0.15, 192, 5e-4)])
    return "plateau_mlp_acc", "max", torch_sweep(class_split(x, y, 21), 2100, entries,
                                                 lambda hp: mlp(30, hp["width"], 6),
                                                 "lr=%(lr)g width=%(width)d wd=%(wd)g plateau", 40, 64, accuracy,
                                                 cross_entropy, momentum=0.9, schedule="plateau")


def friedman3_plateau_mse():
    # regression of make_friedman3's arctan target (standardised), Adam: validation MSE, minimised
    x, y = datasets.make_friedman3(n_samples=3000, noise=0.15, random_state=22)
    y = ((y - y.mean()) / y.std()).astype(np.float32)
    entries = grid(("lr", "width"), [(0.0003, 64), (0.001, 64), (0.003, 64), (0.01, 64), (0.03, 64), (0.1, 64),
                                     (0.003, 16), (0.01, 256), (0.001, 256), (0.03, 16)])
    return "friedman3_plateau_mse", "min", torch_sweep(
        split(x, y, 22, stratify=False), 2200, entries, lambda hp: mlp(4, hp["width"], 1),
        "adam lr=%(lr)g width=%(width)d plateau", 40, 32, mse,
        lambda o, t: torch.nn.functional.mse_loss(o.squeeze(1), t), opt="adam", schedule="plateau")


PLATEAU_APPLICATIONS = [plateau_mlp_acc, friedman3_plateau_mse]


def steps_late_mlp_acc():
    # steps_mlp_acc with the drops at epochs 24 and 36 of 48 (half and three quarters of the run,
    # the CIFAR ResNet recipe's 100 and 150 of 200): the high learning rates sit on their noisy
    # plateau for half the run; a low rate that learns smoothly leads until the first drop.
    return step_schedule_sweep("steps_late_mlp_acc", (24, 36))


# Sweeps with a step learning-rate schedule (--steps): a separate held-out set for the rules that
# read jumps in curves (sibling_jumps), kept out of `curves` so its figures stay comparable.
STEP_APPLICATIONS = [steps_mlp_acc]
# ... and with the drops late (--steps-late): the schedule that hopeless_min_progress must wait for
# (made 2026-12-07, after every default was set).
STEP_LATE_APPLICATIONS = [steps_late_mlp_acc]

APPLICATIONS = [digits_mlp, digits_cnn_loss, digits_gru, diabetes_mlp, breast_cancer_loss, friedman_sgd_r2,
                classification_sgd_logloss, wine_mlp]


def main(argv):
    apps, default = APPLICATIONS, "curves"
    if len(argv) > 1 and argv[1] == "--steps":
        apps, default = STEP_APPLICATIONS, "steps"
        argv = argv[1:]
    elif len(argv) > 1 and argv[1] == "--steps-late":
        apps, default = STEP_LATE_APPLICATIONS, "steps_late"
        argv = argv[1:]
    elif len(argv) > 1 and argv[1] == "--plateau":
        apps, default = PLATEAU_APPLICATIONS, "plateau"
        argv = argv[1:]
    elif len(argv) > 1 and argv[1] == "--fresh":
        apps, default = FRESH_APPLICATIONS, "fresh"
        argv = argv[1:]
    if len(argv) > 2 or (len(argv) > 1 and argv[1].startswith("-")):
        print("make_sweeps.py: unknown option or extra argument '%s'\n%s" % (" ".join(argv[1:]), __doc__.strip()),
              file=sys.stderr)
        return 2
    outdir = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), default)
    summary = []
    for make in apps:
        app, direction, trials = make()
        d = os.path.join(outdir, app)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            if f.startswith("validation-"):
                os.remove(os.path.join(d, f))
        for k, (hp, rows) in enumerate(trials, 1):
            with open(os.path.join(d, "validation-%d.csv" % k), "w") as out:
                out.write("progress,iteration,metric,grad_sqr,grad_var\n")
                for samples, it, metric, gs, gv in rows:
                    out.write("%d,%d,%s,%.6g,%.6g\n" % (samples, it, "%.6g" % metric if math.isfinite(metric)
                                                         else "nan", gs, gv))
            summary.append((app, k, hp, len(rows), rows[-1][2]))
        with open(os.path.join(d, "direction"), "w") as out:
            out.write(direction + "\n")
        with open(os.path.join(d, "placements.csv"), "w") as out:
            out.write("placement,local_bsz,step_time\n1,1,0.05\n1,%d,0.05\n" % len(trials))
    with open(os.path.join(outdir, "trials.txt"), "w") as out:
        out.write("# application trial epochs final_metric hyperparameters\n")
        for app, k, hp, n, last in summary:
            out.write("%s validation-%d %d %.6g %s\n" % (app, k, n, last, hp))
    print("make_sweeps: %d trials of %d applications in %s" % (len(summary), len(apps), outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
