#!/bin/bash
# Attack: restart slurmctld mid-sweep (or have it crash) so that the priority plugin judges trials
# on part of the report store, and undo a hold the plugin placed (scontrol release) hoping it is
# placed again. After a restart the plugin reads the store in bounded chunks (feed_chunk) and
# cancels, holds or requeues nothing until it has caught up; the actions it took are in
# StateSaveLocation/explsched_actions, so a hold the owner released stays released, across the
# restart too. Prints what it measured.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
start_cluster --nodes 1 --gpus 4 --explschedd --log-level verbose \
    --params rerank_period=1,min_run=0,feed_chunk=1000
log=$CLUSTER_DIR/log/slurmctld.log
trial="/usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py"
run_trial() {  # run_trial NAME ON_HOPELESS A
    submit --gres=gpu:1 --explore=sweep --explore-max-steps=4000 --explore-on-hopeless="$2" -o "$1.out" \
        --wrap "$trial --a $3 --b 1.0 --steps 4000 --every 0.25 --checkpoint $PWD/$1.ckpt"
}
best=$(run_trial best requeue 0.05)
held=$(run_trial held requeue 0.9)

wait_until 90 '[ "$(job_field $held Restarts)" -ge 1 ] && [ "$(job_field $held Priority)" = 0 ]' \
    "the hopeless trial to be requeued and held"
ledger=$(scontrol show config | sed -n 's/^StateSaveLocation *= *//p')/explsched_actions
grep -q "^$held " "$ledger" || fail "the hold of job $held is not in the action ledger $ledger"
pass "job $held requeued and held; ledger: $(grep "^$held " "$ledger")"

# The owner releases it: it runs again (resuming its checkpoint) and stays hopeless, but is not
# held a second time.
scontrol release "$held" || fail "scontrol release $held"
wait_until 30 '[ "$(job_state $held)" = RUNNING ]' "the released trial to run again"
sleep 8
acts=$(grep -c "holding hopeless job $held" "$log")
[ "$acts" = 1 ] || fail "job $held was held $acts times"
pass "released hold stays released: job $held $(job_state $held), held once"

# Many reports in the store (another job's, as root may write them): the restarted plugin needs
# several rounds of feed_chunk=1000 rows to catch up.
db=$(sed -n 's/^report_db=//p' "$CLUSTER_DIR/explschedd.conf" 2>/dev/null)
[ -n "$db" ] || db=$(ls "$CLUSTER_DIR"/*.db "$CLUSTER_DIR"/*/*.db 2>/dev/null | head -1)
[ -f "$db" ] || fail "cannot find the report store under $CLUSTER_DIR"
/usr/bin/python3 - "$db" <<'PY' || fail "filling the report store"
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], timeout=30)
cols = [r[1] for r in db.execute("PRAGMA table_info(reports)")]
now = time.time()
rows = []
for k in range(8000):
    r = {"job_id": 990000 + k // 100, "job_submit": 1, "step": k % 100, "metric": 1.0, "client_time": now,
         "server_time": now, "uid": 0, "throughput": None}
    rows.append(tuple(r[c] for c in cols if c != "id"))
names = ",".join(c for c in cols if c != "id")
db.executemany("INSERT INTO reports (%s) VALUES (%s)" % (names, ",".join("?" * (len(cols) - 1))), rows)
db.commit()
PY
mark=$(wc -l <"$log")
cluster_restart_slurmctld "$CLUSTER_DIR" || fail "slurmctld restart failed"
wait_until 60 'tail -n +$mark "$log" | grep -q "caught up with the report store"' "the restarted plugin to catch up"
after=$(tail -n +"$mark" "$log")
catching=$(echo "$after" | grep -c "catching up with the store")
first_act=$(echo "$after" | grep -n "hopeless job" | head -1 | cut -d: -f1)
caught=$(echo "$after" | grep -n "caught up with the report store" | head -1 | cut -d: -f1)
[ "$catching" -ge 2 ] || fail "the restarted plugin caught up in $catching rounds: the test did not exercise catch-up"
[ -z "$first_act" ] || [ "$first_act" -gt "$caught" ] || fail "a job was acted on before catch-up: $(echo "$after" | grep -m1 'hopeless job')"
pass "after the restart: $catching rounds catching up, no cancel/hold/requeue before '$(echo "$after" | sed -n "${caught}p" | sed 's/^\[[^]]*\] //')'"
sleep 6
acts=$(grep -c "holding hopeless job $held" "$log")
[ "$acts" = 1 ] || fail "job $held was held again after the restart ($acts times in all)"
[ "$(job_field $held Priority)" != 0 ] || fail "job $held has priority 0 after the restart"
pass "after the restart the released job $held is still not held ($(job_state $held))"
