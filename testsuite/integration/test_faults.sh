#!/bin/bash
# Faults in mid-sweep: explschedd killed with SIGKILL and restarted, then slurmctld restarted.
# No report a client saw acknowledged is lost, training goes on while explschedd is down, and
# after the restart every trial is assessed again on all its points within one ranking period.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
period=2
start_cluster --nodes 2 --gpus 2 --explschedd --params rerank_period=$period,min_run=0,hopeless_action=none
trial="/usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py"
ids=()
for i in 1 2 3 4; do
    ids+=("$(submit --gres=gpu:1 --explore=faults --explore-max-steps=3000 -o "t$i.out" \
        --wrap "$trial --a 0.$i --b 1.0 --steps 3000 --every 0.1 --checkpoint $PWD/t$i.ckpt --acks $PWD/t$i.acks")")
done
wait_until 30 '[ "$(jobs_in_state RUNNING)" = 4 ]' "4 trials running"
wait_until 30 '(for j in ${ids[@]}; do scontrol show job $j | grep -q "points=[1-9][0-9]" || exit 1; done)' \
    "every trial assessed on 10+ points"

cluster_kill_explschedd "$CLUSTER_DIR"
sleep 3   # reports fail meanwhile; the trials keep training
cluster_start_explschedd "$CLUSTER_DIR" || fail "explschedd did not restart"
pass "explschedd killed with SIGKILL and restarted"
sleep 2
cluster_restart_slurmctld "$CLUSTER_DIR" || fail "slurmctld did not restart"
restarted=$SECONDS
pass "slurmctld restarted"

# Within one period (plus the first round's own time) every trial is assessed on at least the
# points it had acknowledged before the restart.
need() { sort -un "t$1.acks" | wc -l; }
declare -A before
for i in 1 2 3 4; do before[$i]=$(need $i); done
wait_until $((period * 3)) '(for i in 1 2 3 4; do
        p=$(scontrol show job ${ids[$((i-1))]} | sed -n "s/.*points=\([0-9]*\).*/\1/p")
        [ -n "$p" ] && [ "$p" -ge "${before[$i]}" ] || exit 1; done)' \
    "all trials re-assessed on all acknowledged points after the restart"
pass "trials re-assessed $((SECONDS - restarted)) s after slurmctld came back (period $period s)"

db=$CLUSTER_DIR/state/reports.db
for i in 1 2 3 4; do
    j=${ids[$((i-1))]}
    missing=$(sort -un "t$i.acks" | while read -r s; do
        /usr/bin/python3 -c 'import sqlite3,sys; c=sqlite3.connect("file:"+sys.argv[1]+"?mode=ro",uri=True)
n=c.execute("select count(*) from reports where job_id=? and step=?",(int(sys.argv[2]),int(sys.argv[3]))).fetchone()[0]
sys.exit(0 if n==1 else 1)' "$db" "$j" "$s" || echo "$s"; done | wc -l)
    [ "$missing" = 0 ] || fail "job $j: $missing acknowledged reports missing from the store"
done
acked=$(cat t*.acks | wc -l)
lost=$(grep -h "not acknowledged" t*.out | wc -l)
[ "$lost" -gt 0 ] || fail "no report failed while explschedd was down (was it really killed?)"
pass "all $acked acknowledged reports are stored; $lost sent while explschedd was down were refused to the client, not silently lost"
