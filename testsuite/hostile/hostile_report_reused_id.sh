#!/bin/bash
# Attack: a job id is reused (the controller's state was reset, as after a wrap-around at
# MaxJobId) and now belongs to another user. The new owner's reports start a new, empty curve (the
# job INSTANCE is (job id, submit time), taken from slurmctld); the old owner can no longer report
# for the id; neither curve is mixed into the other. explschedd keeps running across the reset,
# so its owner cache must not hand the id to the old owner either.
set -u
. "$(dirname "$0")/report_lib.sh"
report_setup
start_daemon

ajob=$(held_job $VICTIM) || fail "sbatch as $VICTIM"
for step in 10 20 30 40 50; do
    out=$(attack $VICTIM report "$ajob" $step 0.$((99 - step))) || dfail "report: $out"
    echo "$out" | grep -q " stored " || dfail "first owner's report not stored: $out"
done
submit_a=$(db_query "select distinct job_submit from reports where job_id=?" "$ajob")
[ -n "$submit_a" ] && [ "$submit_a" != 0 ] || dfail "the first instance has no submit time: '$submit_a'"
pass "job $ajob of $VICTIM: 5 points stored as instance (job $ajob, submitted $submit_a)"

# Reset the controller's state: job ids start over.
sleep 1
cluster_stop_slurmctld "$CLUSTER_DIR"
# slurmctld -c still numbers on past the batch-script directories it finds: remove the whole state.
rm -rf "$CLUSTER_DIR"/state/hash.* "$CLUSTER_DIR"/state/job_state* "$CLUSTER_DIR"/state/last_*
slurmctld -c -f "$SLURM_CONF" || fail "slurmctld -c did not start"
wait_until 30 "scontrol ping 2>/dev/null | grep -q 'is UP'" "slurmctld up with clean state"
bjob=$(held_job $ATTACKER) || fail "sbatch as $ATTACKER after the reset"
[ "$bjob" = "$ajob" ] || skip "slurmctld gave job id $bjob after a clean start, not $ajob again"
pass "after a state reset job id $bjob belongs to $ATTACKER"

# The new owner's first point is stored (with job ids alone it would be step_behind the old
# curve's step 50, or mixed into it).
out=$(attack $ATTACKER report "$bjob" 1 0.75)
echo "new owner, step 1: $out"
echo "$out" | grep -q " stored " || dfail "the new owner's first report was not stored: $out"
submit_b=$(db_query "select distinct job_submit from reports where job_id=? and uid=?" "$bjob" "$(id -u $ATTACKER)")
[ -n "$submit_b" ] && [ "$submit_b" != "$submit_a" ] || dfail "new instance submit '$submit_b' vs old '$submit_a'"
new_rows=$(db_query "select count(*) from reports where job_id=? and job_submit=?" "$bjob" "$submit_b")
old_rows=$(db_query "select count(*) from reports where job_id=? and job_submit=?" "$ajob" "$submit_a")
[ "$new_rows" = 1 ] || dfail "the new instance holds $new_rows rows, expected 1 (it starts empty)"
[ "$old_rows" = 5 ] || dfail "the old instance holds $old_rows rows, expected 5"
pass "the new instance (submitted $submit_b) starts empty: 1 row; the old one keeps its 5"

# The old owner may not report for the id any more (its cached ownership is not trusted).
out=$(attack $VICTIM report "$ajob" 60 0.3)
echo "old owner, step 60: $out"
echo "$out" | grep -q "refused code=forbidden" || dfail "the old owner could still report: $out"
echo "$out" | grep -q "$ATTACKER\|uid $(id -u $ATTACKER)" && dfail "the refusal names the new owner: $out"
# The tools show the newest instance of an id.
curve=$("$b/src/cli/explsched" show "$bjob" --db "$db" 2>&1 || true)
echo "explsched show $bjob: $(echo "$curve" | head -3 | tr '\n' ' ')"
pass "the old owner is refused for the reused id; no curve mixed"
