#!/usr/bin/python3
"""Draws what `explsched plot` prepared: usage: explsched_plot.py SPEC.json OUT.png|OUT.svg

SPEC kinds:
  trial    one trial's reported curve, the engine's predicted path with its interval, the curve it
           would have followed (simulator results), and decision marks; its sweep siblings faint;
  group    every trial of one sweep;
  compare  the policy comparison of an explsched-sim result (means over seeds, one dot per seed).
Needs only Debian's python3-matplotlib (Agg backend: no display).
"""
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MARK_STYLE = {
    "start": ("^", "tab:green"),
    "preempt": ("v", "tab:orange"),
    "stop": ("x", "tab:red"),
    "finish": ("o", "tab:blue"),
    "unfinished": ("s", "tab:gray"),
}


def finite(v):
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def metric_at(points, step):
    """The last reported metric at or before `step` (for placing a mark on the curve)."""
    best = None
    for s, m in points:
        if s <= step + 1e-9 and finite(m):
            best = m
    return best


def draw_trial(ax, t, faint=False):
    pts = [(s, m) for s, m in t.get("points", []) if finite(m)]
    truth = [(s, m) for s, m in t.get("truth", []) if finite(m)]
    alpha = 0.35 if faint else 1.0
    label = t["name"] + (" (" + t.get("state", "") + ")" if t.get("state") else "")
    if truth:
        ax.plot([s for s, _ in truth], [m for _, m in truth], ":", color="gray", alpha=0.6 * alpha, lw=1)
    line = None
    if pts:
        (line,) = ax.plot([s for s, _ in pts], [m for _, m in pts], "-", lw=1.8 if not faint else 1.0,
                          alpha=alpha, label=label)
    path = [row for row in t.get("path", []) if finite(row[1])]
    if path:
        color = line.get_color() if line else "tab:purple"
        ax.plot([r[0] for r in path], [r[1] for r in path], "--", color=color, lw=1.2, label="predicted")
        lo = [r[2] if finite(r[2]) else r[1] for r in path]
        hi = [r[3] if finite(r[3]) else r[1] for r in path]
        ax.fill_between([r[0] for r in path], lo, hi, color=color, alpha=0.15, label="prediction interval")
    pred = t.get("prediction")
    if pred and finite(pred[0]) and finite(pred[3]) and not path:
        ax.errorbar([pred[3]], [pred[0]],
                    yerr=[[pred[0] - (pred[1] if finite(pred[1]) else pred[0])],
                          [(pred[2] if finite(pred[2]) else pred[0]) - pred[0]]],
                    fmt="D", ms=4, alpha=alpha, color=line.get_color() if line else None)
    for mk in t.get("marks", []):
        style = MARK_STYLE.get(mk.get("what"))
        y = metric_at(pts, mk.get("step", 0.0))
        if style is None or y is None:
            continue
        ax.plot([mk["step"]], [y], style[0], color=style[1], ms=7 if not faint else 5, alpha=alpha)


def plot_trials(spec, out):
    fig, ax = plt.subplots(figsize=(8, 5))
    trials = spec.get("trials", [])
    for t in trials:
        draw_trial(ax, t, faint=spec["kind"] == "trial" and not t.get("highlight"))
    ax.set_xlabel("step")
    ax.set_ylabel("metric (%s is better)" % ("lower" if spec.get("direction") == "min" else "higher"))
    ax.set_title(spec.get("title", ""))
    handles = [plt.Line2D([], [], marker=m, color=c, ls="", label=w) for w, (m, c) in MARK_STYLE.items()]
    leg1 = ax.legend(loc="lower right" if spec.get("direction") != "min" else "upper right", fontsize=7)
    ax.add_artist(leg1)
    ax.legend(handles=handles, loc="center right", fontsize=7, title="decisions")
    for t in trials:
        if t.get("highlight") and t.get("decision"):
            fig.text(0.01, 0.01, t["decision"][:140], fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(out)


COMPARE_PANELS = [
    ("profit_per_gpu_hour", "profit per GPU-hour"),
    ("profit", "profit (sum over sweeps)"),
    ("gpu_hours", "GPU-hours"),
    ("non_best_gpu_hours", "GPU-hours on non-best trials"),
    ("time_to_best_mean_h", "time to sweep's best (h)"),
    ("jct_mean_h", "mean JCT (h)"),
]


def plot_compare(spec, out):
    mean = spec.get("mean", {})
    runs = spec.get("runs", [])
    order = ["fifo", "tiresias", "gandiva", "gavel", "asha", "slaq", "oasis", "explsched", "oracle"]
    policies = [p for p in order if p in mean] + sorted(p for p in mean if p not in order)
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    for ax, (key, title) in zip(axes.flat, COMPARE_PANELS):
        values = [mean[p].get(key) for p in policies]
        xs = range(len(policies))
        colors = ["tab:red" if p == "explsched" else ("tab:gray" if p == "oracle" else "tab:blue") for p in policies]
        ax.bar(xs, [v if finite(v) else 0 for v in values], color=colors, alpha=0.8)
        for i, p in enumerate(policies):
            seeds = [r.get(key) for r in runs if r.get("policy") == p and finite(r.get(key))]
            ax.plot([i] * len(seeds), seeds, "k.", ms=4)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(policies, rotation=45, ha="right", fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    cfg = spec.get("config", {})
    fig.suptitle("%s  (%s, %s GPUs, seeds %s)" % (spec.get("title", ""), cfg.get("trace", "").split("/")[-1],
                                                  cfg.get("gpus", "?"), cfg.get("seeds", "")), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(out)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        spec = json.load(f)
    kind = spec.get("kind")
    if kind in ("trial", "group"):
        plot_trials(spec, argv[2])
    elif kind == "compare":
        plot_compare(spec, argv[2])
    else:
        sys.stderr.write("explsched_plot.py: unknown kind %r\n" % kind)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
