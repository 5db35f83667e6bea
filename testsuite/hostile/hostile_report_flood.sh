#!/bin/bash
# Attack: one user floods explschedd with 10,000 reports/s (real, restricted, short-lived
# credentials of its own, reused so that munge must reject the replays) over several pipelined
# connections, while another user reports one point at a time. The victim's reports must still
# be acknowledged: at least 95 % within 1 s. Prints the attacker's achieved rate, what it got
# back, and the victim's acknowledgement latencies.
set -u
. "$(dirname "$0")/report_lib.sh"
report_setup
start_daemon
RATE=${FLOOD_RATE:-10000}
SECONDS_=${FLOOD_SECONDS:-10}

vjob=$(held_job $VICTIM) || fail "sbatch as $VICTIM"
ajob=$(held_job $ATTACKER) || fail "sbatch as $ATTACKER"

# Baseline: the victim alone.
base=$(attack $VICTIM victim "$vjob" 2 0.02) || dfail "victim alone: $base"
echo "victim alone:        $base"

attack $ATTACKER flood "$ajob" "$RATE" "$SECONDS_" 8 >"$CLUSTER_DIR/flood.out" 2>&1 &
flooder=$!
sleep 1.5  # the flood is under way and the server's queues are as full as it lets them be
under=$(attack $VICTIM victim "$vjob" $((SECONDS_ - 3)) 0.02) || dfail "victim under flood: $under"
wait $flooder
flood=$(cat "$CLUSTER_DIR/flood.out")
echo "attacker:            $flood"
echo "victim under flood:  $under"
kill -USR1 "$DAEMON"
sleep 0.3
grep "stats:" "$log" | tail -1

within=$(echo "$under" | sed -n 's/.*within1s=\([0-9.]*\).*/\1/p')
rate=$(echo "$flood" | sed -n 's/.*rate=\([0-9]*\)\/s.*/\1/p')
[ -n "$within" ] && [ -n "$rate" ] || dfail "could not read the figures"
awk -v r="$rate" -v want="$RATE" 'BEGIN { exit !(r >= 0.8 * want) }' \
    || echo "note: the attacker reached only $rate of $RATE reports/s on this host"
awk -v w="$within" 'BEGIN { exit !(w >= 0.95) }' || dfail "only $within of the victim's reports acknowledged within 1 s"
echo "$flood" | grep -q "retry:rate_limited" || dfail "the flood was never rate-limited: $flood"
kill -0 "$DAEMON" || dfail "explschedd died"
stored=$(db_query "select count(*) from reports where job_id=?" "$ajob")
pass "victim acknowledged within 1 s: $within (attacker sent $rate reports/s, $stored of them stored)"
