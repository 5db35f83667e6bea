#!/bin/bash
# Attack: one user opens 2,000 connections to explschedd and sends nothing, to take every slot
# and hold it. Its connections beyond max_conns_per_user are turned away at once (the limit is
# per (address, uid): every client here is 127.0.0.1, so a per-address limit alone would lock the
# victim out with the attacker); those accepted are closed after auth_deadline. Meanwhile another
# user's reports are acknowledged within 1 s.
# Then the clients' side: against a server that accepts and never answers (what a client of a
# swamped server sees), the C library (`explsched report`) and the Python module return within
# their timeout and the Python module does not raise.
set -u
. "$(dirname "$0")/report_lib.sh"
report_setup
start_daemon
N=${IDLE_CONNS:-2000}
HOLD=12

vjob=$(held_job $VICTIM) || fail "sbatch as $VICTIM"
# The attacker needs the descriptors (setpriv keeps root's raised limit).
ulimit -n $((N + 256)) 2>/dev/null || skip "cannot raise the open-file limit to $((N + 256))"
attack $ATTACKER idle "$N" "$HOLD" >"$CLUSTER_DIR/idle.out" 2>&1 &
idler=$!
sleep 1
under=$(attack $VICTIM victim "$vjob" 8 0.05) || dfail "victim: $under"
wait $idler
idle=$(cat "$CLUSTER_DIR/idle.out")
echo "attacker: $idle"
echo "victim:   $under"
kill -USR1 "$DAEMON"
sleep 0.3
grep "stats:" "$log" | tail -1

within=$(echo "$under" | sed -n 's/.*within1s=\([0-9.]*\).*/\1/p')
busy=$(echo "$idle" | sed -n 's/.*turned_away_busy=\([0-9]*\).*/\1/p')
closed=$(echo "$idle" | sed -n 's/.*closed_by_server=\([0-9]*\).*/\1/p')
open=$(echo "$idle" | sed -n 's/.*still_open_after_[0-9]*s=\([0-9]*\).*/\1/p')
median=$(echo "$idle" | sed -n 's/.*median_close_s=\([0-9.]*\).*/\1/p')
[ -n "$within" ] && [ -n "$busy" ] && [ -n "$closed" ] && [ -n "$open" ] || dfail "could not read the figures"
awk -v w="$within" 'BEGIN { exit !(w >= 0.95) }' || dfail "only $within of the victim's reports acknowledged within 1 s"
[ "$busy" -gt 0 ] || dfail "no connection turned away"
[ "$open" = 0 ] || dfail "$open idle connections still open after $HOLD s"
awk -v m="$median" 'BEGIN { exit !(m >= 4 && m <= 8) }' || dfail "idle connections closed after ${median}s, expected auth_deadline=5s"
pass "victim within 1 s: $within; attacker: $busy turned away, $closed closed after ${median}s (auth_deadline 5 s)"

# A server that accepts and never answers.
$PY -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)' >"$CLUSTER_DIR/silent.port" &
silent=$!
wait_until 10 "[ -s $CLUSTER_DIR/silent.port ]" "the silent server"
saddr=127.0.0.1:$(head -1 "$CLUSTER_DIR/silent.port")
start=$(date +%s.%N)
out=$(as $VICTIM "$b/src/cli/explsched" report --address "$saddr" --job "$vjob" --step 1 --metric 0.5 \
    --timeout 1 --retries 0 2>&1)
rc=$?
c_elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
echo "C client (timeout 1 s): exit $rc after ${c_elapsed}s: $out"
[ $rc != 0 ] || dfail "a report to a silent server succeeded?"
awk -v t="$c_elapsed" 'BEGIN { exit !(t < 3) }' || dfail "the C client blocked ${c_elapsed}s with a 1 s timeout"
start=$(date +%s.%N)
out=$(as $VICTIM env EXPLSCHED_REPORT_ADDR="$saddr" EXPLSCHED_JOB_ID="$vjob" EXPLSCHED_REPORT_TIMEOUT=1 \
    PYTHONPATH="$s/contrib/python" $PY -c '
import explsched
print([explsched.report(step, 1.0 / step) for step in range(1, 11)])' 2>&1)
rc=$?
py_elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
kill $silent 2>/dev/null
echo "Python module (timeout 1 s), 10 reports: exit $rc after ${py_elapsed}s: $(echo "$out" | tr '\n' ' ')"
[ $rc = 0 ] || dfail "explsched.report raised into the training loop: $out"
echo "$out" | grep -q "'dropped'" || dfail "the points were not dropped: $out"
[ "$(echo "$out" | grep -c RuntimeWarning)" = 1 ] || dfail "expected exactly one warning: $out"
awk -v t="$py_elapsed" 'BEGIN { exit !(t < 4) }' || dfail "10 reports took ${py_elapsed}s with a 1 s timeout"
pass "clients facing a silent server: C library returned after ${c_elapsed}s, Python dropped 10 points in ${py_elapsed}s with one warning"
