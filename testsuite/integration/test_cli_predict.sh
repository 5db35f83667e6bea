#!/bin/bash
# `explsched predict`: extrapolates a CSV curve; --json has the documented keys; --sibling mixes in
# the sweep's other curves; bad files and bad options fail with messages naming the line, column,
# file or option. Needs no cluster.
set -u
. "$(dirname "$0")/lib.sh"

explsched=$top_builddir/src/cli/explsched
[ -x "$explsched" ] || skip "explsched not built"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {  # expect NAME STATUS PATTERN -- command...
    local name=$1 status=$2 pattern=$3
    shift 4
    local out rc
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" != "$status" ] || ! grep -qE -- "$pattern" <<<"$out"; then
        echo "FAIL: $name: exit $rc (want $status), output:"; sed 's/^/    /' <<<"$out"; fail=1
    else
        echo "ok: $name"
    fi
}

# a power law rising to 0.9: from 30 of 100 points the prediction lands near the truth
/usr/bin/python3 - "$tmp/acc.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("progress,step,metric\n")
    for i in range(1, 101):
        f.write("%d,%d,%.6f\n" % (i, 100 * i, 0.9 - 0.6 * i ** -0.6))
PY
json=$("$explsched" predict --curve "$tmp/acc.csv" --observed 30 --json) || fail=1
/usr/bin/python3 - "$json" <<'PY' || fail=1
import json, sys
d = json.loads(sys.argv[1])
truth = 0.9 - 0.6 * 100 ** -0.6
assert list(d)[:5] == ["predicted", "lower", "upper", "horizon", "observed"], d
assert d["observed"] == 30 and d["horizon"] == 10000.0, d
assert abs(d["predicted"] - truth) < 0.02, (d, truth)
assert d["lower"] <= truth <= d["upper"], (d, truth)
print("ok: --json prediction %.4f (truth %.4f)" % (d["predicted"], truth))
PY
expect "text output" 0 "predicted: .* at step 5000, 80% interval" -- \
    "$explsched" predict --curve "$tmp/acc.csv" --observed-fraction 0.25 --horizon 5000
expect "direction inferred" 0 "max, inferred" -- \
    "$explsched" predict --curve "$tmp/acc.csv" --observed 10

printf 'step,metric\n1,0.5\n2,0.6\n3,oops\n' >"$tmp/bad.csv"
expect "bad cell names line and column" 1 "bad.csv:4: column 'metric': 'oops' is not a number" -- \
    "$explsched" predict --curve "$tmp/bad.csv" --observed 2
printf 'epoch,metric\n1,0.5\n' >"$tmp/nostep.csv"
expect "missing step column" 1 "nostep.csv:1: header has no step column" -- \
    "$explsched" predict --curve "$tmp/nostep.csv" --observed 1
expect "missing metric column" 1 "no metric column 'loss'" -- \
    "$explsched" predict --curve "$tmp/acc.csv" --metric-column loss --observed 5
expect "too many points asked" 1 "200 points asked" -- \
    "$explsched" predict --curve "$tmp/acc.csv" --observed 200
expect "one of --observed/--observed-fraction" 2 "exactly one of" -- \
    "$explsched" predict --curve "$tmp/acc.csv"
expect "bad fraction" 2 "--observed-fraction: '1.5' is not in" -- \
    "$explsched" predict --curve "$tmp/acc.csv" --observed-fraction 1.5
expect "bad direction" 2 "direction: 'up'" -- \
    "$explsched" predict --curve "$tmp/acc.csv" --observed 5 --direction up
expect "missing file" 1 "cannot open" -- \
    "$explsched" predict --curve "$tmp/none.csv" --observed 5

# --sibling: a trial on a plateau at 30 % of its run whose two siblings jumped at half of theirs
# (a learning-rate drop): its own fit sees the plateau, the siblings pull the forecast towards the
# jump; a sibling unlike it (far below, flat) weighs nothing and leaves its own fit alone.
/usr/bin/python3 - "$tmp" <<'PY'
import math, sys
def curve(path, lvl, jump_at, after):
    with open(path, "w") as f:
        f.write("step,metric\n")
        for i in range(1, 101):
            s = 100 * i
            v = (lvl + 0.02 * math.log(i)) if s < jump_at else (after - 0.05 * math.exp(-(s - jump_at) / 1500))
            f.write("%d,%.6f\n" % (s, v + 0.003 * ((i % 3) - 1)))
curve(sys.argv[1] + "/trial.csv", 0.30, 5200, 0.72)
curve(sys.argv[1] + "/sib1.csv", 0.31, 5000, 0.70)
curve(sys.argv[1] + "/sib2.csv", 0.29, 5100, 0.71)
curve(sys.argv[1] + "/far.csv", 0.05, 90000, 0.0)
PY
alone=$("$explsched" predict --curve "$tmp/trial.csv" --observed-fraction 0.3 --json) || fail=1
with=$("$explsched" predict --curve "$tmp/trial.csv" --observed-fraction 0.3 --json \
    --sibling "$tmp/sib1.csv" --sibling "$tmp/sib2.csv") || fail=1
unlike=$("$explsched" predict --curve "$tmp/trial.csv" --observed-fraction 0.3 --json --sibling "$tmp/far.csv") ||
    fail=1
/usr/bin/python3 - "$alone" "$with" "$unlike" "$(tail -1 "$tmp/trial.csv")" <<'PY' || fail=1
import json, sys
alone, with_, unlike = (json.loads(a) for a in sys.argv[1:4])
truth = float(sys.argv[4].split(",")[1])
assert alone["siblings"] == 0 and alone["sibling_weight"] == 0, alone
assert with_["siblings"] == 2 and with_["sibling_weight"] > 0.5, with_
assert abs(with_["predicted"] - truth) < 0.75 * abs(alone["predicted"] - truth), (alone, with_, truth)
assert with_["upper"] > alone["upper"] + 0.1, (alone, with_)
assert unlike["siblings"] == 1 and unlike["sibling_weight"] == 0, unlike
assert unlike["predicted"] == alone["predicted"] and unlike["upper"] == alone["upper"], (alone, unlike)
print("ok: --sibling moves the forecast %.3f -> %.3f towards the final %.3f; an unlike sibling leaves it"
      % (alone["predicted"], with_["predicted"], truth))
PY
expect "siblings named in the text" 0 "siblings: +2 given; those like it so far weigh" -- \
    "$explsched" predict --curve "$tmp/trial.csv" --observed-fraction 0.3 --sibling "$tmp/sib1.csv" \
    --sibling "$tmp/sib2.csv"
expect "bad sibling file is named" 1 "--sibling: .*bad.csv:4: column 'metric'" -- \
    "$explsched" predict --curve "$tmp/trial.csv" --observed 30 --sibling "$tmp/bad.csv"
printf 'step,metric\n1,0.5\n' >"$tmp/one.csv"
expect "one-point sibling" 1 "one.csv: a sibling needs at least 2 points, it has 1" -- \
    "$explsched" predict --curve "$tmp/trial.csv" --observed 30 --sibling "$tmp/one.csv"
many=()
for i in $(seq 65); do many+=(--sibling "$tmp/sib1.csv"); done
expect "too many siblings" 2 "at most 64 siblings" -- \
    "$explsched" predict --curve "$tmp/trial.csv" --observed 30 "${many[@]}"

# without --direction: the sweep's `direction` file beside the curve (as the simulator reads a
# sweep), before the observed points: an accuracy curve that dips first stays maximised
mkdir -p "$tmp/sweep"
printf 'step,metric\n1,0.54\n2,0.57\n3,0.55\n4,0.44\n5,0.37\n6,0.48\n7,0.63\n8,0.73\n' >"$tmp/sweep/dip.csv"
expect "direction inferred from a dip" 0 "min, inferred" -- \
    "$explsched" predict --curve "$tmp/sweep/dip.csv" --observed 6
echo max >"$tmp/sweep/direction"
expect "direction from the sweep's file" 0 "max, from $tmp/sweep/direction" -- \
    "$explsched" predict --curve "$tmp/sweep/dip.csv" --observed 6
expect "--direction over the sweep's file" 0 '"direction":"min"' -- \
    "$explsched" predict --curve "$tmp/sweep/dip.csv" --observed 6 --direction min --json
echo min >"$tmp/sweep/direction"  # what the rising whole curve would not be read as
expect "show --curve reads the sweep's file too" 0 "lower is better" -- \
    "$explsched" show --curve "$tmp/sweep/dip.csv"
expect "why --curve reads the sweep's file too" 0 "Decision:" -- \
    "$explsched" why --curve "$tmp/sweep/dip.csv"
echo up >"$tmp/sweep/direction"
expect "bad direction file is named" 1 "$tmp/sweep/direction: .*'up'.*or give --direction" -- \
    "$explsched" predict --curve "$tmp/sweep/dip.csv" --observed 6
expect "bad direction file is named by show" 1 "$tmp/sweep/direction: .*'up'.*or give --direction" -- \
    "$explsched" show --curve "$tmp/sweep/dip.csv"
rm "$tmp/sweep/direction"
expect "show --curve infers without the file" 0 "higher is better" -- \
    "$explsched" show --curve "$tmp/sweep/dip.csv"

# make -C testsuite/bench bench's scoring of predict on whole sweeps runs (one real sweep here)
if [ -d "$top_srcdir/contrib/heldout/fresh/moons_mlp_acc" ]; then
    mkdir -p "$tmp/roots/fresh" && cp -r "$top_srcdir/contrib/heldout/fresh/moons_mlp_acc" "$tmp/roots/fresh/"
    expect "bench_predict_siblings.py" 0 "^ALL +25% .* n=10$" -- \
        /usr/bin/python3 "$top_srcdir/testsuite/bench/bench_predict_siblings.py" "$explsched" "$tmp/roots/fresh"
fi

data=$top_srcdir/../shared/data/curves/deepspeech2/validation-80.csv
if [ -f "$data" ]; then
    expect "shared WER curve (min)" 0 '"direction":"min"' -- \
        "$explsched" predict --curve "$data" --observed-fraction 0.5 --direction min --json
fi
exit $fail
