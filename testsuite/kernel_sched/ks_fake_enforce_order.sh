#!/bin/sh
# FAKE driver, enforce mode: while a high-priority job (priority 10) fills the GPU, two
# best-effort jobs queue up: be1 (priority 1) first, be2 (priority 5) 100 ms later. The
# algorithm admits strictly by priority when the GPU frees: every be2 kernel reaches the driver
# before any be1 kernel, be1's launches are counted as held, and `explsched kstat` shows it.
. "${srcdir:-.}/ks_lib.sh"
ks_start_daemon --trace-file "$KS_TMP/trace.log"
export FAKECUDA_LOG="$KS_TMP/fake.log"
# 264 blocks of 1024 threads occupy all 132 SMs of the fake device.
ks_run enforce hp.0 10 "$KS_BIN/ks_fake_workload" --name hp_kernel --us 600000 --count 1 --hold-ms 3000 \
    >"$KS_TMP/hp.out" 2>"$KS_TMP/hp.err" &
hp=$!; KS_PIDS="$KS_PIDS $hp"
sleep 0.2
ks_run enforce be1.0 1 "$KS_BIN/ks_fake_workload" --name be1_kernel --us 20000 --count 5 \
    >"$KS_TMP/be1.out" 2>"$KS_TMP/be1.err" &
be1=$!
sleep 0.1
ks_run enforce be2.0 5 "$KS_BIN/ks_fake_workload" --name be2_kernel --us 20000 --count 5 \
    >"$KS_TMP/be2.out" 2>"$KS_TMP/be2.err" &
be2=$!
sleep 0.1
if [ -n "${EXPLSCHED:-}" ]; then
    "$EXPLSCHED" kstat --endpoint "$KS_SOCK" > "$KS_TMP/kstat.log" 2>&1 || ks_fail "explsched kstat failed"
fi
wait $be1 || ks_fail "be1 failed"
wait $be2 || ks_fail "be2 failed"
"$PYTHON" - "$KS_TMP/fake.log" <<'PY' || ks_fail "admission order is not by priority"
import sys
order = [line.split()[3] for line in open(sys.argv[1]) if line.startswith("launch ")]
print("driver order:", " ".join(order))
assert order[0] == "hp_kernel", "the high-priority kernel ran first"
be = [k for k in order if k != "hp_kernel"]
assert be == ["be2_kernel"] * 5 + ["be1_kernel"] * 5, be
PY
kill $hp 2>/dev/null || true
wait $hp 2>/dev/null || true
ks_stop_daemon
"$PYTHON" - "$KS_TMP/stats.json" <<'PY' || ks_fail "statistics"
import json, sys
jobs = {j["job"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
for name in ("be1.0", "be2.0"):
    j = jobs[name]
    print(name, "admitted", j["admitted"], "held", j["held"], "wait_us_max", j["wait_us_max"])
    assert j["admitted"] == 5 and j["held"] >= 1 and j["wait_us_max"] > 100000, j
assert jobs["hp.0"]["held"] == 0, jobs["hp.0"]
PY
if [ -n "${EXPLSCHED:-}" ]; then
    cat "$KS_TMP/kstat.log"
    grep -q "be1.0" "$KS_TMP/kstat.log" || ks_fail "kstat does not list be1.0"
fi
