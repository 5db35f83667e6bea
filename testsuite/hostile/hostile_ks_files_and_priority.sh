#!/bin/sh
# Hostile users against the device level (FAKE libcuda): kerneld runs as its own unprivileged
# user; user A attacks the daemon's files and another user's step, user V (the victim) runs a
# workload. Checks: (a) A cannot truncate or write the status file, socket directory or pid file,
# and the victim's launches and the daemon are unaffected; (b) A cannot create files (locks) in
# the runtime directory; (d) A claiming a higher priority (env var, naming V's step) gets the
# lowest; (e) killing kerneld mid-run: launches continue within 1 s with one warning.
. "${srcdir:-.}/../kernel_sched/ks_lib.sh"
command -v useradd >/dev/null && command -v setpriv >/dev/null || { echo "SKIP: useradd/setpriv missing"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to create test users"; exit 77; }
users="esh_kd$$ esh_a$$ esh_v$$"
for u in $users; do useradd -M -N -s /usr/sbin/nologin "$u" || { echo "SKIP: useradd $u failed"; exit 77; }; done
# cleanup first: userdel fails while kerneld still runs as its user, and under set -e a failing
# command ends the trap (it once left kerneld running after an early failure)
trap 'ks_cleanup; for u in $users; do pkill -KILL -u "$u" 2>/dev/null || true; userdel "$u" 2>/dev/null || true; done' EXIT
as() { u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups "$@"; }
chown "esh_kd$$" "$KS_TMP/gpu0"
KS_USER=esh_kd$$ KS_PIDFILE=$KS_TMP/gpu0/kerneld.pid ks_start_daemon --verbose
owner=$(stat -c %U "$KS_TMP/gpu0/kerneld.status")
echo "status file owner: $owner mode $(stat -c %a "$KS_TMP/gpu0/kerneld.status"); daemon uid: $(ps -o uid= -p "$KS_DAEMON")"
[ "$owner" = "esh_kd$$" ] || ks_fail "the daemon's files are not its user's"

# (a)+(b) file attacks by user A
for f in kerneld.status kerneld.pid kerneld.sock; do
    as "esh_a$$" truncate -s 0 "$KS_TMP/gpu0/$f" 2>/dev/null && ks_fail "user A truncated $f"
    as "esh_a$$" sh -c "echo x >> $KS_TMP/gpu0/$f" 2>/dev/null && ks_fail "user A wrote $f"
done
as "esh_a$$" sh -c "echo > $KS_TMP/gpu0/lock" 2>/dev/null && ks_fail "user A created a file in the GPU directory"
as "esh_a$$" sh -c "echo > $KS_TMP/lock" 2>/dev/null && ks_fail "user A created a file in the runtime directory"
echo "after: user A could not truncate/write the status or pid file nor create files (locks) in the runtime dirs"
kill -0 "$KS_DAEMON" || ks_fail "kerneld died"

# (d) the victim's step is registered (as slurmstepd would) with priority 10; A claims it.
ks_register "50.0" 10 "$(id -u "esh_v$$")"
ks_register "51.0" 1 "$(id -u "esh_a$$")"
run_as() {
    u=$1 job=$2; shift 2
    as "$u" env EXPLSCHED_KSCHED_MODE=enforce EXPLSCHED_KSCHED_ENDPOINTS="$KS_SOCK" EXPLSCHED_KSCHED_JOB="$job" \
        EXPLSCHED_KSCHED_PRIORITY=1000000 LD_PRELOAD="$INTERCEPT" LD_LIBRARY_PATH="$FAKEDIR" "$@"
}
run_as "esh_v$$" 50.0 "$KS_BIN/ks_fake_workload" --name victim --us 100 --count 50 --hold-ms 1500 >"$KS_TMP/v.out" 2>"$KS_TMP/v.err" &
v=$!
run_as "esh_a$$" 50.0 "$KS_BIN/ks_fake_workload" --name thief --us 100 --count 50 --hold-ms 1500 >"$KS_TMP/a.out" 2>"$KS_TMP/a.err" &
a=$!
sleep 0.7
grep "client pid" "$KS_TMP/kerneld.log" | sed 's/^/    kerneld: /'
grep "uid $(id -u "esh_v$$") job 50.0 mode enforce priority 10" "$KS_TMP/kerneld.log" >/dev/null || ks_fail "victim did not get its registered priority"
grep "uid $(id -u "esh_a$$") job 50.0 mode enforce priority 0" "$KS_TMP/kerneld.log" >/dev/null || ks_fail "user A naming the victim's step did not get the lowest priority"
echo "after: user A naming step 50.0 with EXPLSCHED_KSCHED_PRIORITY=1000000 got priority 0; the victim got 10"

# (e) kill kerneld while both run: the launches go on, one warning each.
start=$(date +%s%N)
kill -9 "$KS_DAEMON"
wait $v || ks_fail "victim failed after kerneld died"
wait $a || true
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "after kill -9 of kerneld: the victim finished ${ms} ms later; warnings: $(grep -c explsched: "$KS_TMP/v.err")"
[ "$(grep -c "explsched:" "$KS_TMP/v.err")" -le 1 ] || ks_fail "more than one warning: $(cat "$KS_TMP/v.err")"
grep -q "^done" "$KS_TMP/v.out" || ks_fail "victim did not finish: $(cat "$KS_TMP/v.out")"
echo "ok"
