#!/bin/sh
# Hostile users against explsched-kerneld's input (FAKE libcuda): kerneld runs as its own
# unprivileged user; user A attacks through what it may legitimately write, user V (the victim)
# runs enforce-mode launches. Checks and prints:
#  (c) A's processes launch with absurd dimensions and registers (blockDimZ=0xFFFFFFFF,
#      regs=0xFFFFFFFF, zero dimensions, grids beyond CUDA's limits) through the intercept: kerneld
#      keeps running, those records are refused and counted (kstat `refused`), V's launches go on
#      (all admitted, no fail-open warning);
#  (f) A scribbles garbage over its own channel (ring cells and records, sequence numbers, header,
#      function table; absurd device limits in its hello) and spams the socket's wake-up: V's
#      enforce-mode launches are still admitted with bounded delay, V protected (A at a lower
#      priority) and V best effort (A at a higher one). V's launch-call time p50/p99 before and
#      during the attack are printed; V must see no fail-open (which would mean a 1 s wait).
. "${srcdir:-.}/../kernel_sched/ks_lib.sh"
command -v useradd >/dev/null && command -v setpriv >/dev/null || { echo "SKIP: useradd/setpriv missing"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to create test users"; exit 77; }
[ -x "$KS_BIN/ks_hostile_scribble" ] || { echo "SKIP: ks_hostile_scribble not built (make check builds it)"; exit 77; }
: "${EXPLSCHED:?}"
users="esh_kd$$ esh_a$$ esh_v$$"
for u in $users; do useradd -M -N -s /usr/sbin/nologin "$u" || { echo "SKIP: useradd $u failed"; exit 77; }; done
trap 'for u in $users; do pkill -KILL -u "$u" 2>/dev/null || true; userdel "$u" 2>/dev/null || true; done; ks_cleanup' EXIT
as() { u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups "$@"; }
chown "esh_kd$$" "$KS_TMP/gpu0"
KS_USER=esh_kd$$ KS_PIDFILE=$KS_TMP/gpu0/kerneld.pid ks_start_daemon
V=$(id -u "esh_v$$")
A=$(id -u "esh_a$$")
kstat_field() {  # kstat_field STEP FIELD
    "$EXPLSCHED" kstat --endpoint "$KS_SOCK" --json 2>/dev/null | "$PYTHON" -c 'import json,sys
for j in json.load(sys.stdin):
    if j["job"] == sys.argv[1]: print(j[sys.argv[2]])' "$1" "$2"
}
run_as() {  # run_as USER MODE STEP CMD...: a task of STEP (the intercept preloaded)
    u=$1 mode=$2 job=$3; shift 3
    as "$u" env EXPLSCHED_KSCHED_MODE="$mode" EXPLSCHED_KSCHED_ENDPOINTS="$KS_SOCK" EXPLSCHED_KSCHED_JOB="$job" \
        LD_PRELOAD="$INTERCEPT" LD_LIBRARY_PATH="$FAKEDIR" "$@"
}
# victim LABEL STEP: V's enforce workload (2000 launches, 200 us apart); checks it finished without
# falling open and prints its launch-call time distribution.
victim() {
    run_as "esh_v$$" enforce "$2" "$KS_BIN/ks_fake_workload" --name victim --count 2000 --us 20 --gap-us 200 \
        --latency 1 >"$KS_TMP/v.out" 2>"$KS_TMP/v.err" || ks_fail "victim failed ($1): $(cat "$KS_TMP/v.err")"
    grep -q "^done" "$KS_TMP/v.out" || ks_fail "victim did not finish ($1)"
    [ "$(grep -c "explsched:" "$KS_TMP/v.err")" = 0 ] || ks_fail "victim fell open ($1): $(cat "$KS_TMP/v.err")"
    echo "  victim $1: $(grep launch_us "$KS_TMP/v.out"), $(grep done "$KS_TMP/v.out" | sed 's/done \(.*\)/total \1 ms/')"
}
alive() { kill -0 "$KS_DAEMON" 2>/dev/null || ks_fail "kerneld died ($1): $(tail -5 "$KS_TMP/kerneld.log")"; }

ks_register 60.0 10 "$V"
ks_register 61.0 1 "$A"
echo "baseline (no attack):"
victim "before" 60.0

# (c) absurd launches through the intercept, while the victim runs.
echo "(c) user A launches with absurd dimensions and registers:"
run_as "esh_a$$" enforce 61.0 "$KS_BIN/ks_fake_workload" --name absurd_z --count 200 --us 1 \
    --block 1,1,0xFFFFFFFF --regs 0xFFFFFFFF >"$KS_TMP/a1.out" 2>"$KS_TMP/a1.err" &
a1=$!
run_as "esh_a$$" observe 61.0 "$KS_BIN/ks_fake_workload" --name zero_dims --count 200 --us 1 \
    --grid 0,0,0 --block 0,0,0 >"$KS_TMP/a2.out" 2>"$KS_TMP/a2.err" &
a2=$!
run_as "esh_a$$" observe 61.0 "$KS_BIN/ks_fake_workload" --name huge_grid --count 200 --us 1 \
    --grid 0xFFFFFFFF,0xFFFFFFFF,0xFFFFFFFF --block 1024,1024,64 >"$KS_TMP/a3.out" 2>"$KS_TMP/a3.err" &
a3=$!
run_as "esh_a$$" observe 61.0 "$KS_BIN/ks_fake_workload" --name max_regs --count 200 --us 1 \
    --regs 0xFFFFFFFF >"$KS_TMP/a4.out" 2>"$KS_TMP/a4.err" &
a4=$!
victim "during (c)" 60.0
for p in $a1 $a2 $a3 $a4; do wait $p || ks_fail "attacker process failed: $(cat "$KS_TMP"/a*.err)"; done
alive "(c)"
refused=$(kstat_field 61.0 refused)
launches=$(kstat_field 61.0 launches)
echo "  user A: 600 absurd launches (blockDimZ=0xFFFFFFFF regs=0xFFFFFFFF enforce; zero dims; grid 2^32-1 x block 2^26) + 200 with regs=0xFFFFFFFF only"
echo "  A's enforce process (absurd_z): $(cat "$KS_TMP/a1.out") ms; fail-open warnings $(grep -c explsched: "$KS_TMP/a1.err" || true)"
echo "  kerneld alive; kstat step 61.0: refused $refused, launches accepted $launches"
# The zero-dimension and huge-grid launches (observe) are all posted; the enforce one stops posting
# once its first refused request made it fall open (1 s, unless A was protected at the time).
[ "${refused:-0}" -ge 401 ] || ks_fail "kerneld refused $refused of A's 600 absurd records (expected >= 401)"
[ "${launches:-0}" -ge 200 ] || ks_fail "A's regs=0xFFFFFFFF launches (valid dimensions, registers clamped) were not counted: $launches"
[ "$(kstat_field 60.0 refused)" = 0 ] || ks_fail "victim records refused"

# (f) garbage in A's own channel and a wake-up storm, A below the victim, then above it. Before
# each attack the victim is measured beside a benign process of A's at the same priority (a
# protected client present changes a best-effort victim's admission by design).
echo "(f) user A scribbles over its own channel and spams wake-ups (3 s each):"
for case in "protected:1" "best-effort:20"; do
    label=${case%%:*} prio=${case#*:}
    ks_register 61.0 "$prio" "$A"
    run_as "esh_a$$" enforce 61.0 "$KS_BIN/ks_fake_workload" --name benign --count 100 --us 20 --gap-us 10000 \
        >/dev/null 2>&1 &
    b=$!
    sleep 0.2
    victim "before (f), victim $label (A benign at priority $prio)" 60.0
    wait $b || true
    before_refused=$(kstat_field 61.0 refused)
    as "esh_a$$" "$KS_BIN/ks_hostile_scribble" "$KS_SOCK" 61.0 --ms 3000 --enforce >"$KS_TMP/s.out" 2>"$KS_TMP/s.err" &
    s=$!
    sleep 0.3
    victim "during (f), victim $label (A scribbling at priority $prio)" 60.0
    wait $s || ks_fail "scribbler failed: $(cat "$KS_TMP/s.err")"
    alive "(f) $label"
    echo "  user A: $(cat "$KS_TMP/s.out"); its garbage records refused by kerneld: $(( $(kstat_field 61.0 refused) - before_refused ))"
    [ $(( $(kstat_field 61.0 refused) - before_refused )) -gt 0 ] || ks_fail "kerneld read none of A's garbage (the attack did not happen)"
done
ks_register 61.0 1 "$A"
victim "after the attacks" 60.0
alive "after"
[ "$(kstat_field 60.0 refused)" = 0 ] || ks_fail "victim records refused"
echo "  victim step 60.0: launches $(kstat_field 60.0 launches), admitted $(kstat_field 60.0 admitted), held $(kstat_field 60.0 held), wait_us_max $(kstat_field 60.0 wait_us_max), dropped $(kstat_field 60.0 dropped)"
ks_stop_daemon
echo "ok"
