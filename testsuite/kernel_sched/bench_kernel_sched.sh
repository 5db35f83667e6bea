#!/bin/sh
# Device-level benchmarks (`make -C testsuite/kernel_sched bench`), printing figures measured in
# this run against a baseline measured in the same process or script:
#   1. hook overhead per launch (ns): observe mode, and enforce mode for a protected job, against
#      a direct call into the same FAKE driver function (FAKECUDA_FAST=1: the driver only counts);
#   2. the same as instructions per launch under callgrind (the stable figure);
#   3. admission round trip (us): a low-priority enforce-mode job whose every launch is granted
#      by the daemon, minus the direct call;
#   4. the contention simulator on the shipped Orion profiles.
. "${srcdir:-$(dirname "$0")}/ks_lib.sh"
export FAKECUDA_FAST=1
BENCH="$KS_BIN/bench_hook_overhead"

echo "== hook overhead per launch (median of timed batches of 1000 launches)"
ks_start_daemon
printf "observe:                   "; ks_run observe bench.0 1 "$BENCH"
printf "enforce, protected job:    "; EXPLSCHED_KSCHED_TRACK=0 ks_run enforce bench.0 1 "$BENCH"
printf "enforce, protected+track:  "; ks_run enforce bench.0 1 "$BENCH" --batches 300
ks_stop_daemon

echo "== admission round trip (each launch waits for a grant; budget large so all are admitted)"
ks_start_daemon --budget-us 100000000 --default-kernel-us 1
ks_register bench-helper.0 100  # the --rtt helper's step: protected, above bench.1
printf "enforce, best effort:      "; EXPLSCHED_KSCHED_TRACK=0 ks_run enforce bench.1 1 "$BENCH" --rtt --batches 300 --pause-us 0
ks_stop_daemon

if command -v valgrind >/dev/null 2>&1; then
    echo "== instructions per launch (callgrind, inclusive of the driver call)"
    ks_start_daemon
    for side in direct hooked; do
        out="$KS_TMP/callgrind.$side"
        ks_run observe cg.0 1 valgrind --tool=callgrind --callgrind-out-file="$out" \
            --toggle-collect="bench_loop_$side" "$BENCH" --only "$side" --batches 50 --launches 1000 \
            >/dev/null 2>"$KS_TMP/valgrind.$side.log"
        ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' "$out" | head -n 1)
        # 50 batches plus one warm-up batch of 1000 launches are collected.
        echo "$side $ir" >> "$KS_TMP/ir"
        printf "%-8s %8.1f instructions/launch\n" "$side" "$(echo "$ir / 51000" | bc -l)"
    done
    ks_stop_daemon
    awk '/^direct/{d=$2} /^hooked/{h=$2} END{printf "observe-mode overhead: %.1f instructions/launch\n", (h-d)/51000}' "$KS_TMP/ir"
else
    echo "== callgrind: valgrind not installed, skipped"
fi

if [ -n "${CONTENTION:-}" ] && [ -d "${DATA:-}/kernel-profiles" ]; then
    echo "== contention simulator (shipped Orion profiles; HP inference at 10/30/50% load, BE resnet50 training)"
    "$CONTENTION" --profiles "$DATA/kernel-profiles" --load 0.1,0.3,0.5
    echo "== training vs training (HP closed loop)"
    "$CONTENTION" --profiles "$DATA/kernel-profiles" --hp resnet50_32_fb1_new --hp-closed-loop
fi
