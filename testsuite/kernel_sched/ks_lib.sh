# Helpers for the kernel-scheduler tests (sourced). The harness passes KERNELD, INTERCEPT,
# FAKEDIR (the FAKE libcuda.so.1), KS_BIN (test programs), EXPLSCHED (the CLI) and PYTHON.
set -eu
: "${KERNELD:?}" "${INTERCEPT:?}" "${FAKEDIR:?}" "${KS_BIN:?}"
PYTHON=${PYTHON:-/usr/bin/python3}

KS_TMP=$(mktemp -d "${TMPDIR:-/tmp}/explsched-ks.XXXXXX")
KS_PIDS=""
ks_cleanup() {
    for p in $KS_PIDS; do kill -9 "$p" 2>/dev/null || true; done
    if [ -f "$KS_TMP/kerneld.pid" ]; then kill -9 "$(cat "$KS_TMP/kerneld.pid")" 2>/dev/null || true; fi
    if [ "${KS_KEEP:-0}" = 1 ]; then echo "kept $KS_TMP"; else rm -rf "$KS_TMP"; fi
}
trap ks_cleanup EXIT

ks_fail() {
    echo "FAIL: $*" >&2
    for f in "$KS_TMP"/*.log "$KS_TMP"/*.err; do
        [ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
    done
    exit 1
}

# ks_start_daemon [extra kerneld options...]: serves $KS_TMP/gpu0.shm
ks_start_daemon() {
    rm -f "$KS_TMP/kerneld.pid"
    "$KERNELD" --endpoint "$KS_TMP/gpu0.shm" --pid-file "$KS_TMP/kerneld.pid" \
        --stats-file "$KS_TMP/stats.json" "$@" >"$KS_TMP/kerneld.log" 2>&1 &
    KS_DAEMON=$!
    KS_PIDS="$KS_PIDS $KS_DAEMON"
    i=0
    while [ ! -f "$KS_TMP/kerneld.pid" ]; do
        i=$((i + 1)); [ $i -lt 500 ] || ks_fail "kerneld did not start"
        sleep 0.01
    done
}

# ks_stop_daemon: SIGTERM, wait for it to write its statistics and exit.
ks_stop_daemon() {
    kill -TERM "$KS_DAEMON"
    wait "$KS_DAEMON" || ks_fail "kerneld exited with status $?"
}

# ks_env MODE JOB PRIORITY: the environment a step's task gets from the SPANK plugin.
ks_run() {
    mode=$1 job=$2 prio=$3; shift 3
    env EXPLSCHED_KSCHED_MODE="$mode" EXPLSCHED_KSCHED_ENDPOINTS="$KS_TMP/gpu0.shm" \
        EXPLSCHED_KSCHED_JOB="$job" EXPLSCHED_KSCHED_PRIORITY="$prio" \
        LD_PRELOAD="$INTERCEPT" LD_LIBRARY_PATH="$FAKEDIR" "$@"
}
