#!/bin/bash
# The trade-off runs of contrib/bench.sh (contrib/bench_frontier.py): asha at each reduction factor
# and rung count (explsched-sim --asha-reduction/--asha-rungs), explsched at a few settings, Optuna's
# SuccessiveHalving and Hyperband pruners at each reduction factor and min_resource and its
# MedianPruner at each n_startup_trials and n_warmup_steps (where installed), on the
# Pollux workload (60 jobs, seed 0); bench_report.py's table from them. Checks that every point is
# there, that asha's settings act (one rung at reduction 2 spends more GPU-hours than three rungs
# at 4, and keeps at least as many sweeps at their best), that the report compares explsched's
# defaults with the cheapest asha setting keeping as many sweeps at their best, and that a bad
# scenario argument stops the runs with the simulator's error. Needs ../shared/data, no cluster.
set -u
. "$(dirname "$0")/lib.sh"
require_sim_pollux
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
sim_tmp
fr=$top_srcdir/contrib/bench_frontier.py
args=(--trace "$data/traces/pollux-workloads/workload-1.csv" --curves "$data/curves" --gpus 64 --jobs 60)

/usr/bin/python3 "$fr" "$sim" 0 "$tmp/pollux-frontier.json" -- "${args[@]}" || fail "bench_frontier.py failed"
/usr/bin/python3 - "$tmp/pollux-frontier.json" <<'PY' || fail "the trade-off points"
import json, sys
fr = json.load(open(sys.argv[1]))
pts = fr["points"]
asha = {p["setting"]: p for p in pts if p["policy"] == "asha"}
ex = {p["setting"]: p for p in pts if p["policy"] == "explsched"}
assert len(asha) == 9 and len(ex) == 7, (sorted(asha), sorted(ex))
wide, narrow = asha["reduction 2, 1 rung"], asha["reduction 4, 3 rungs"]
print("asha reduction 2, 1 rung: %.1f GPU-h, %.1f %% at best; reduction 4, 3 rungs: %.1f GPU-h, %.1f %%"
      % (wide["gpu_hours"], wide["sweeps_at_best"], narrow["gpu_hours"], narrow["sweeps_at_best"]))
assert wide["gpu_hours"] > narrow["gpu_hours"], "asha's settings changed nothing"
assert wide["sweeps_at_best"] >= narrow["sweeps_at_best"]
assert "defaults" in ex and all(0 <= p["sweeps_at_best"] <= 100 for p in pts)
try:
    import optuna  # noqa: F401
    sha = {p["setting"]: p for p in pts if p["policy"] == "optuna-sha"}
    assert len(sha) == 9, sorted(sha)
    late, early = sha["reduction 2, min_resource 30"], sha["reduction 4, min_resource 1"]
    print("Optuna SHA reduction 2, min_resource 30: %.1f GPU-h; reduction 4, min_resource 1: %.1f"
          % (late["gpu_hours"], early["gpu_hours"]))
    assert late["gpu_hours"] > early["gpu_hours"], "Optuna SHA's settings changed nothing"
    hb = {p["setting"]: p for p in pts if p["policy"] == "optuna-hyperband"}
    med = {p["setting"]: p for p in pts if p["policy"] == "optuna-median"}
    assert len(hb) == 9 and len(med) == 6, (sorted(hb), sorted(med))
    late, early = hb["reduction 2, min_resource 30"], hb["reduction 4, min_resource 1"]
    print("Optuna Hyperband reduction 2, min_resource 30: %.1f GPU-h; reduction 4, min_resource 1: %.1f"
          % (late["gpu_hours"], early["gpu_hours"]))
    assert late["gpu_hours"] > early["gpu_hours"], "Optuna Hyperband's settings changed nothing"
    late, early = med["n_startup_trials 5, n_warmup_steps 30"], med["n_startup_trials 1, n_warmup_steps 0"]
    print("Optuna Median n_startup_trials 5, n_warmup_steps 30: %.1f GPU-h; 1, 0: %.1f"
          % (late["gpu_hours"], early["gpu_hours"]))
    assert late["gpu_hours"] > early["gpu_hours"], "Optuna Median's settings changed nothing"
except ImportError:
    print("no python3-optuna: Optuna's points left out")
    assert not any(p["policy"].startswith("optuna-") for p in pts)
PY
pass "bench_frontier.py: 9 asha, 7 explsched and (with python3-optuna) 9 Optuna SHA, 9 Hyperband and 6 Median points"

out=$(/usr/bin/python3 -c "
import json, sys
sys.path.insert(0, '$top_srcdir/contrib')
import bench_report as br
print(br.frontier_tables([('pollux', json.load(open('$tmp/pollux-frontier.json')))]))") || fail "bench_report.py's trade-off table: $out"
row=$(echo "$out" | grep '^| pollux |')
echo "$row"
echo "$row" | grep -Eq '^\| pollux \| [0-9.]+, [0-9.]+% \| (reduction [234], [123] rungs?: [0-9.]+, [0-9.]+%|none) \|' ||
    fail "no comparison of the defaults with the cheapest asha setting: $out"
pass "bench_report.py compares the defaults with the cheapest asha keeping as many sweeps at their best"

err=$(/usr/bin/python3 "$fr" "$sim" 0 "$tmp/bad.json" -- "${args[@]}" --gpus 0 2>&1) && fail "a bad scenario argument was accepted: $err"
echo "$err" | grep -q "bench_frontier.py: .*explsched-sim .*failed" || fail "no clear error for a bad scenario argument: $err"
[ ! -e "$tmp/bad.json" ] || fail "a failed run wrote $tmp/bad.json"
pass "a bad scenario argument: $(echo "$err" | grep -o "explsched-sim: --gpus.*" | head -1 | cut -c1-160)"
