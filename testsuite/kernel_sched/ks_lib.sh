# Helpers for the kernel-scheduler tests (sourced). The harness passes KERNELD, INTERCEPT,
# FAKEDIR (the FAKE libcuda.so.1), KS_BIN (test programs), EXPLSCHED (the CLI) and PYTHON.
set -eu
: "${KERNELD:?}" "${INTERCEPT:?}" "${FAKEDIR:?}" "${KS_BIN:?}"
PYTHON=${PYTHON:-/usr/bin/python3}

KS_TMP=$(mktemp -d "${TMPDIR:-/tmp}/explsched-ks.XXXXXX")
chmod 755 "$KS_TMP"
mkdir -p "$KS_TMP/gpu0"
KS_SOCK=$KS_TMP/gpu0/kerneld.sock
KS_PIDS=""
KS_PIDFILES=""
ks_cleanup() {
    for p in $KS_PIDS; do kill -9 "$p" 2>/dev/null || true; done
    # every pid file a daemon was started with (a test may name its own, as KS_PIDFILE=... on the
    # call, which leaves no trace here otherwise): kerneld may have left the pid it was started as
    for f in "$KS_TMP/kerneld.pid" $KS_PIDFILES; do
        if [ -f "$f" ]; then kill -9 "$(cat "$f")" 2>/dev/null || true; fi
    done
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

# ks_start_daemon [extra kerneld options...]: serves $KS_SOCK, as the service manager would
# (these tests run it as root with --user root; the hostile tests use a dedicated user).
ks_start_daemon() {
    KS_PIDFILE=${KS_PIDFILE:-$KS_TMP/kerneld.pid}
    KS_PIDFILES="${KS_PIDFILES:-} $KS_PIDFILE"
    rm -f "$KS_PIDFILE"
    "$KERNELD" --socket "$KS_SOCK" --pid-file "$KS_PIDFILE" --user "${KS_USER:-root}" \
        --stats-file "$KS_TMP/stats.json" "$@" >"$KS_TMP/kerneld.log" 2>&1 &
    KS_DAEMON=$!
    KS_PIDS="$KS_PIDS $KS_DAEMON"
    i=0
    while [ ! -f "$KS_PIDFILE" ]; do
        i=$((i + 1)); [ $i -lt 500 ] || ks_fail "kerneld did not start"
        sleep 0.01
    done
}

# ks_stop_daemon: SIGTERM, wait for it to write its statistics and exit.
ks_stop_daemon() {
    kill -TERM "$KS_DAEMON"
    wait "$KS_DAEMON" || ks_fail "kerneld exited with status $?"
}

# ks_register STEP PRIORITY [UID]: what slurmstepd's SPANK plugin does for a step (as root).
ks_register() {
    "$KERNELD" register "$KS_SOCK" "$1" "${3:-$(id -u)}" "$2" $$ || ks_fail "cannot register step $1"
}

# ks_run MODE JOB PRIORITY CMD...: runs CMD as a task of step JOB (registered with PRIORITY).
ks_run() {
    mode=$1 job=$2 prio=$3; shift 3
    ks_register "$job" "$prio"
    env EXPLSCHED_KSCHED_MODE="$mode" EXPLSCHED_KSCHED_ENDPOINTS="$KS_SOCK" \
        EXPLSCHED_KSCHED_JOB="$job" LD_PRELOAD="$INTERCEPT" LD_LIBRARY_PATH="$FAKEDIR" "$@"
}
