#!/bin/bash
# A small run of the scale benchmark (testsuite/bench/bench_sweep.sh): 100 synthetic trials in four
# job arrays with --explore on 16 nodes x 8 fake GPUs (the harness's multi-slurmd start, pgid
# process tracking, a shared slurmd log), explschedd collecting. Every trial must end (completed,
# or cancelled as hopeless), some must be stopped early, and the best trial of each sweep (known
# from the seeds) must be among those that completed.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
out=$(bash "$top_srcdir/testsuite/bench/bench_sweep.sh" --nodes 16 --gpus 8 --trials 100 --sweeps 4 \
    --points 20 --every 1 --limit 240 2>&1)
rc=$?
echo "$out" | sed 's/^/    /'
[ $rc = 77 ] && skip "bench_sweep.sh: something it needs is missing"
[ $rc = 0 ] || fail "bench_sweep.sh failed ($rc)"
line=$(echo "$out" | grep '^sweep wall time') || fail "no summary"
echo "$line" | grep -q ' 0 not finished' || fail "trials left unfinished: $line"
done=$(echo "$line" | sed -n 's/.*trials: \([0-9]*\) completed.*/\1/p')
stopped=$(echo "$line" | sed -n 's/.* \([0-9]*\) stopped as hopeless.*/\1/p')
[ "${stopped:-0}" -gt 0 ] || fail "no trial was stopped: $line"
[ "${done:-0}" -gt 0 ] || fail "no trial completed: $line"
pass "100 trials on 128 GPUs: $done completed, $stopped stopped as hopeless"
echo "$out" | grep -q 'best trial of its sweep completed in 4 of 4 sweeps' \
    || fail "a sweep's best trial did not complete: $(echo "$out" | grep 'best trial')"
pass "the best trial of every sweep completed"
