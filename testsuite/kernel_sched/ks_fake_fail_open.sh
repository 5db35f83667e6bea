#!/bin/sh
# FAKE driver: the intercept never blocks a process for good. (1) With no daemon at all, the
# launches go straight through after one warning. (2) A best-effort job waiting for admission
# gets through within a second of the daemon being killed (SIGKILL), with one warning.
. "${srcdir:-.}/ks_lib.sh"

# (1) endpoint missing
EXPLSCHED_KSCHED_MODE=enforce EXPLSCHED_KSCHED_ENDPOINTS="$KS_TMP/missing.sock" LD_PRELOAD="$INTERCEPT" \
    LD_LIBRARY_PATH="$FAKEDIR" "$KS_BIN/ks_fake_workload" --us 10 --count 20 \
    >"$KS_TMP/nodaemon.out" 2>"$KS_TMP/nodaemon.err" || ks_fail "workload failed without a daemon"
[ "$(grep -c "explsched:" "$KS_TMP/nodaemon.err")" = 1 ] || ks_fail "expected one warning, got: $(cat "$KS_TMP/nodaemon.err")"

# (2) daemon killed while a launch waits
ks_start_daemon
ks_run enforce hp.0 10 "$KS_BIN/ks_fake_workload" --name hp_kernel --us 5000000 --count 1 --hold-ms 6000 \
    >/dev/null 2>"$KS_TMP/hp.err" &
hp=$!; KS_PIDS="$KS_PIDS $hp"
sleep 0.2
ks_run enforce be.0 1 "$KS_BIN/ks_fake_workload" --name be_kernel --us 1000 --count 20 \
    >"$KS_TMP/be.out" 2>"$KS_TMP/be.err" &
be=$!
sleep 0.5
kill -0 $be 2>/dev/null || ks_fail "the best-effort job was not held while the GPU was full"
start=$(date +%s%N)
kill -9 "$KS_DAEMON"
wait $be || ks_fail "best-effort job failed after the daemon died"
end=$(date +%s%N)
ms=$(( (end - start) / 1000000 ))
echo "best-effort job finished ${ms} ms after the daemon was killed"
# Under ThreadSanitizer (tsan_check.sh sets KS_SLOWDOWN) every process runs several times slower,
# its exit included: the bound is scaled, the one-warning checks below are not.
limit=$((1000 * ${KS_SLOWDOWN:-1}))
[ $ms -lt $limit ] || ks_fail "fail-open took ${ms} ms (limit $limit)"
[ "$(grep -c "explsched:" "$KS_TMP/be.err")" = 1 ] || ks_fail "expected one warning, got: $(cat "$KS_TMP/be.err")"
grep -q "stopped responding" "$KS_TMP/be.err" || ks_fail "warning does not say the daemon stopped: $(cat "$KS_TMP/be.err")"
