#!/bin/bash
# `explsched predict`: extrapolates a CSV curve; --json has the documented keys; bad files and
# bad options fail with messages naming the line, column or option. Needs no cluster.
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

data=$top_srcdir/../shared/data/curves/deepspeech2/validation-80.csv
if [ -f "$data" ]; then
    expect "shared WER curve (min)" 0 '"direction":"min"' -- \
        "$explsched" predict --curve "$data" --observed-fraction 0.5 --direction min --json
fi
exit $fail
