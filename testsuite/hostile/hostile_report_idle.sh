#!/bin/bash
# Attack: one user opens 2,000 connections to explschedd and sends nothing, to take every slot
# and hold it. Its connections beyond max_conns_per_user are turned away at once (the limit is
# per (address, uid): every client here is 127.0.0.1, so a per-address limit alone would lock the
# victim out with the attacker); those accepted are closed after auth_deadline. Meanwhile another
# user's reports are acknowledged within 1 s.
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
