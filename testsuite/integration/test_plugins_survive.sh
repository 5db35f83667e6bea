#!/bin/bash
# Our plugins survive `scontrol reconfigure` and a slurmctld restart with jobs queued: the
# controller comes back with the same plugins, the queue intact, the trials' SystemComment kept,
# and ranking going on. A bad PriorityParameters keeps slurmctld from starting, naming the key.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
# max_age=600: the age term moves ~1.7 priority points a second, so re-ranking shows quickly.
start_cluster --nodes 2 --gpus 2 --params rerank_period=1,weight_age=1000,max_age=600

# 4 GPUs: 4 running, 6 pending.
for i in $(seq 1 10); do submit --gres=gpu:1 --explore=sw --wrap 'sleep 300' >/dev/null; done
wait_until 20 '[ "$(jobs_in_state RUNNING)" = 4 ]' "4 running jobs"
[ "$(jobs_in_state PENDING)" = 6 ] || fail "expected 6 pending jobs"
snapshot() { squeue -h -o '%i %T' | sort; }
before=$(snapshot)

scontrol reconfigure || fail "scontrol reconfigure failed"
sleep 2
scontrol ping | grep -q UP || fail "slurmctld down after reconfigure"
[ "$(snapshot)" = "$before" ] || fail "queue changed across reconfigure"
scontrol show config | grep -q "PriorityType *= priority/explsched" || fail "PriorityType lost"
scontrol show config | grep -q "PreemptType *= preempt/explsched" || fail "PreemptType lost"
pass "reconfigure: plugins loaded, queue intact"

cluster_restart_slurmctld "$CLUSTER_DIR" || fail "slurmctld restart failed"
wait_until 30 '[ "$(snapshot)" = "$before" ]' "queue restored after restart"
grep -q "ExplSched priority plugin loaded\|priority/explsched" "$CLUSTER_DIR/log/slurmctld.log" || true
pend=$(squeue -h -t PENDING -o %i | head -1)
c=$(scontrol show job "$pend" | sed -n 's/^ *SystemComment=//p')
echo "$c" | grep -q "group=sw .*state=" || fail "pending job $pend lost its SystemComment: '$c'"
# Ranking goes on: the age term of pending jobs grows, so priorities change within periods.
p1=$(job_field "$pend" Priority)
wait_until 20 '[ "$(job_field $pend Priority)" != "$p1" ]' "priority of job $pend to be re-ranked after restart"
pass "restart: queue intact, SystemComment kept, priorities re-ranked ($p1 -> $(job_field "$pend" Priority))"

new=$(submit --gres=gpu:1 --explore=sw2 --hold --wrap true)
[ -n "$new" ] || fail "submission after restart failed"
pass "submissions work after restart (job $new)"

# A bad setting: slurmctld refuses to start and says which key.
sed -i 's/^PriorityParameters=.*/PriorityParameters=rerank_period=1,preempt_margin=lots/' "$SLURM_CONF"
slurmctld_bin=$(_cluster_sbin slurmctld)
cluster_stop_slurmctld "$CLUSTER_DIR"
: >"$CLUSTER_DIR/log/slurmctld.log"
"$slurmctld_bin" -f "$SLURM_CONF" -D >"$CLUSTER_DIR/log/bad-start.out" 2>&1 &
bad=$!
wait_until 20 '! kill -0 $bad 2>/dev/null' "slurmctld to refuse the bad PriorityParameters"
grep -q "setting 'preempt_margin': 'lots' is not a finite number" "$CLUSTER_DIR/log/slurmctld.log" "$CLUSTER_DIR/log/bad-start.out" \
    || { cat "$CLUSTER_DIR/log/bad-start.out"; tail "$CLUSTER_DIR/log/slurmctld.log"; fail "no clear error for the bad key"; }
pass "bad PriorityParameters refused: $(grep -h "preempt_margin" "$CLUSTER_DIR/log/slurmctld.log" "$CLUSTER_DIR/log/bad-start.out" | head -1)"
