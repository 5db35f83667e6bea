#!/bin/bash
# explsched show / why / plot on a live cluster: the curve from explschedd's store, the assessment
# from slurmctld (SystemComment), for a running trial and after it ended.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
start_cluster --nodes 1 --gpus 2 --explschedd --params rerank_period=1
cli=$top_builddir/src/cli/explsched
job=$(submit --gres=gpu:1 --explore=cli --explore-max-steps=2000 --wrap \
    "exec /usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py --a 0.2 --b 1 --steps 2000 --every 0.05 --checkpoint $PWD/c.ckpt")
wait_until 30 'scontrol show job $job | grep -q "SystemComment=.*extrapolated=yes"' "job $job assessed on an extrapolated curve"
out=$("$cli" show "$job" 2>&1) || fail "explsched show failed: $out"
echo "$out" | sed 's/^/    /'
echo "$out" | grep -q "source: *live" || fail "show did not read the live store"
echo "$out" | grep -q "decision:" || fail "show lacks the decision"
echo "$out" | grep -qE "curve: *[0-9]+ points" || fail "show lacks the curve"
pass "explsched show $job"
why=$("$cli" why "$job" 2>&1) || fail "explsched why failed: $why"
[ -n "$why" ] || fail "explsched why printed nothing"
echo "$why" | head -8 | sed 's/^/    /'
pass "explsched why $job"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    "$cli" plot "$job" -o "$PWD/trial.png" >/dev/null 2>&1 || fail "explsched plot failed: $("$cli" plot "$job" -o "$PWD/trial.png" 2>&1)"
    [ -s trial.png ] && head -c 8 trial.png | grep -q PNG || fail "plot wrote no PNG"
    pass "explsched plot $job -o trial.png ($(stat -c %s trial.png) bytes)"
fi
"$cli" show 999999 >/dev/null 2>&1 && fail "show of an unknown job succeeded"
pass "an unknown job is an error: $("$cli" show 999999 2>&1 | head -1)"
