#!/bin/bash
# contrib/bench_report.py's targets table on hand-made summaries whose figures are known: the
# ratios to each baseline, a target met and one missed, and the time-to-best rows (the least time
# to best any policy keeping every sweep's best can have, against asha's; each policy's time over
# that least time on its own sweeps).
set -euo pipefail
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
/usr/bin/python3 - "$top/contrib" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import bench_report as br

def run(policy, seed, **kw):
    r = {"policy": policy, "seed": seed, "profit": 10.0, "profit_bound": 10.0, "gpu_hours": 100.0,
         "profit_per_gpu_hour": 0.1, "sweeps_reaching_best": 1.0, "time_to_best_mean_h": 1.0,
         "time_to_best_bound_h": 0.5, "time_to_best_bound_all_h": 0.5}
    r.update(kw)
    return r

runs = []
for seed, asha_ttb in ((0, 1.0), (1, 2.0)):
    runs.append(run("fifo", seed, gpu_hours=400.0, profit_per_gpu_hour=0.025))
    # asha lost a long sweep's best: its mean is over the short ones (bound 0.4 on those)
    runs.append(run("asha", seed, gpu_hours=80.0, profit=9.0, profit_per_gpu_hour=9.0 / 80,
                    sweeps_reaching_best=0.9, time_to_best_mean_h=asha_ttb, time_to_best_bound_h=0.4))
    runs.append(run("optuna-sha", seed, gpu_hours=50.0))
    runs.append(run("oracle", seed, time_to_best_mean_h=0.8))
    runs.append(run("explsched", seed, gpu_hours=120.0, profit_per_gpu_hour=10.0 / 120,
                    time_to_best_mean_h=0.6, time_to_best_bound_h=0.5, time_to_best_bound_all_h=0.5))
ratios = {"time_to_best_common_vs_asha": [0.5, 0.7, None]}
text = br.targets_table([("toy", {"runs": runs, "explsched_ratios": ratios})])
rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines()}
problems = []

def expect(prefix, cell):
    row = next((v for k, v in rows.items() if k.startswith(prefix)), None)
    if row is None:
        problems.append("no row starting %r in:\n%s" % (prefix, text))
    elif cell not in row:
        problems.append("row %r: want %r, got %r" % (prefix, cell, row))

expect("GPU-hours vs asha", "1.50× ✘ (1.50× short)")
expect("GPU-hours vs Optuna", "2.40× ✘ (2.40× short)")
expect("profit per GPU-hour vs fifo", "3.33× ✔")
expect("time to best vs asha", "0.45× ✔ [0.30–0.60]")
expect("time to best vs oracle", "0.75× ✔")
# least possible over asha's: 0.5/1.0 and 0.5/2.0
expect("(least time to best", "0.38× [0.25–0.50]")
# explsched 0.6/0.5, asha (1.0/0.4 + 2.0/0.4)/2
expect("(time to best over that least time", "1.20× / 3.75×")
# over the sweeps both reached, seed by seed (a seed where they share none is left out)
expect("(time to best vs asha on the sweeps both", "0.60× [0.50–0.70]")
# a summary without the bound (an older JSON) shows a dash, not an error
for r in runs:
    r.pop("time_to_best_bound_all_h"); r.pop("time_to_best_bound_h")
text = br.targets_table([("toy", {"runs": runs})])
rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines()}
expect("(least time to best", "| - |")
expect("(time to best over that least time", "| - / - |")
expect("(time to best vs asha on the sweeps both", "| - |")

# The trade-off tables (bench_frontier.py's points): each explsched point against the cheapest
# setting of each peer (asha, Optuna SHA, any Optuna pruner) that keeps at least as many sweeps at
# their best.
def pt(policy, setting, gpu_hours, at_best):
    return {"policy": policy, "setting": setting, "gpu_hours": gpu_hours, "sweeps_at_best": at_best,
            "profit_pct": 100.0, "time_to_best_h": 1.0}
fr = {"seeds": "0,1", "points": [
    pt("asha", "reduction 3, 3 rungs", 50.0, 80.0),    # cheapest, but loses more bests
    pt("asha", "reduction 2, 2 rungs", 100.0, 95.0),   # the one to compare the defaults with
    pt("asha", "reduction 2, 1 rung", 150.0, 100.0),
    pt("optuna-sha", "reduction 4, min_resource 1", 30.0, 70.0),
    pt("optuna-sha", "reduction 2, min_resource 30", 240.0, 100.0),
    pt("optuna-hyperband", "reduction 3, min_resource 10", 110.0, 95.0),  # any pruner, for the defaults
    pt("optuna-median", "n_startup_trials 5, n_warmup_steps 0", 200.0, 100.0),  # ... keeping every best
    pt("explsched", "defaults", 120.0, 95.0),
    pt("explsched", "hopeless_min_progress=0.1", 90.0, 100.0),
    pt("explsched", "aggressive", 40.0, 90.0)]}
text = br.frontier_tables([("toy", fr)])
summary = next((l for l in text.splitlines() if l.startswith("| toy |")), "")
want = "| toy | 120.0, 95.0% | reduction 2, 2 rungs: 100.0, 95.0% | 1.20× | reduction 2, min_resource 30: " \
       "240.0, 100.0% | 0.50× | Hyperband reduction 3, min_resource 10: 110.0, 95.0% | 1.09× | " \
       "`hopeless_min_progress=0.1`: 90.0 | 0.60× | 0.38× | 0.45× |"
if summary != want:
    problems.append("frontier summary:\n want %r\n got  %r" % (want, summary))
detail = {l.split(" | ")[1]: l for l in text.splitlines() if l.startswith("| explsched |")}
want = {"`defaults`": "| 1.20× (reduction 2, 2 rungs) | 0.50× (reduction 2, min_resource 30) | "
                      "1.09× (Hyperband reduction 3, min_resource 10) |",
        "`hopeless_min_progress=0.1`": "| 0.60× (reduction 2, 1 rung) | 0.38× (reduction 2, min_resource 30) | "
                                       "0.45× (Median n_startup_trials 5, n_warmup_steps 0) |",
        "`aggressive`": "| 0.40× (reduction 2, 2 rungs) | 0.17× (reduction 2, min_resource 30) | "
                        "0.36× (Hyperband reduction 3, min_resource 10) |"}
for setting, cell in want.items():
    if not detail.get(setting, "").endswith(cell):
        problems.append("frontier row %s: want %r, got %r" % (setting, cell, detail.get(setting)))
# one setting for every scenario: a second scenario where the asha setting that matched falls short
fr2 = {"seeds": "0,1", "points": [pt("asha", "reduction 2, 2 rungs", 300.0, 90.0),
                                   pt("asha", "reduction 2, 1 rung", 400.0, 99.0),
                                   pt("explsched", "defaults", 200.0, 98.0)]}
one = br.frontier_one_setting([("toy", fr), ("toy2", fr2)])
rows1 = {l.split(" | ")[1]: l for l in one.splitlines() if l.startswith("| asha |")}
for setting, cell in (("reduction 2, 1 rung", "| 2 of 2 | 0.50–0.80× | - |"),
                      ("reduction 2, 2 rungs", "| 1 of 2 | 1.20–1.20× | toy2 8.0 |"),
                      ("reduction 3, 3 rungs", "| 0 of 1 | - | toy 15.0 |")):
    if not rows1.get(setting, "").endswith(cell):
        problems.append("one setting %s: want %r, got %r" % (setting, cell, rows1.get(setting)))
if not one.splitlines()[2].startswith("| asha | reduction 2, 1 rung |"):
    problems.append("one setting: the setting matching in most scenarios first:\n" + one)
# no setting of a peer keeps as many: said, not a ratio to a worse one
fr["points"] = [p for p in fr["points"] if p["sweeps_at_best"] < 100.0 or p["policy"] != "asha"]
text = br.frontier_tables([("toy", fr)])
row = next((l for l in text.splitlines() if "`hopeless_min_progress=0.1`" in l and l.startswith("| explsched")), "")
if "no asha setting" not in row:
    problems.append("frontier: a point no asha setting matches: %r" % row)
# nor the defaults: the peer's setting that keeps the most is named instead
fr["points"] = [p for p in fr["points"] if p["sweeps_at_best"] < 95.0 or p["policy"] != "asha"]
text = br.frontier_tables([("toy", fr)])
summary = next((l for l in text.splitlines() if l.startswith("| toy |")), "")
if "| none (the most: reduction 3, 3 rungs, 80.0% at 50.0 GPU-h) | - |" not in summary:
    problems.append("frontier: no asha setting keeps as many as the defaults: %r" % summary)
# without Optuna's points (no python3-optuna) its columns are left out
fr["points"] = [p for p in fr["points"] if not p["policy"].startswith("optuna-")]
text = br.frontier_tables([("toy", fr)])
if "Optuna" in text:
    problems.append("frontier: Optuna columns without Optuna points:\n" + text)
if problems:
    print("FAIL:\n" + "\n".join(problems))
    sys.exit(1)
print("ok: targets table, ratios and time-to-best rows as computed by hand; trade-off tables against the "
      "cheapest asha setting keeping as many sweeps at their best")
EOF
