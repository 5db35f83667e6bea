#!/bin/bash
# Online learning of the pair table (placement=yes, placement_learn=yes; doc/placement.md): the
# loaded table believes Victim and Bully harmless to each other. A multi-node trial of model Victim
# reports its throughput alone (10 steps/s), then with an admin-pinned Bully beside it (4 steps/s):
# slurmctld learns "Victim beside Bully: 0.40 of alone", and a pending Victim job that placement
# first put beside a Bully (fullest nodes, all believed harmless) is moved to the empty pair.
# What was learned survives a slurmctld restart (StateSaveLocation/explsched_net_learned.json):
# a Victim job submitted after it goes to the empty pair without new reports; a damaged state
# file is set aside (.bad) with an error, and placement goes on from the loaded table.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster

new_net_table "Bully Victim" "1.0 1.0" "1.0 1.0" || fail "writing the pair table"
table=$NET_TABLE

start_cluster --nodes 6 --gpus 4 --explschedd --log-level verbose \
    --params "rerank_period=1,placement=yes,placement_learn=yes,net_table=$table"
log="$CLUSTER_DIR/log/slurmctld.log"
step=0
report_speed() {  # report_speed JOB SPEED ROUNDS: one report per round at SPEED steps/s
    local job=$1 speed=$2 rounds=$3 i
    for i in $(seq 1 "$rounds"); do
        step=$((step + 10))
        "$top_builddir/src/cli/explsched" report --retries 2 --job "$job" --step "$step" \
            --metric "$(awk -v s=$step 'BEGIN { printf "%.6f", 0.1 + 5 / s }')" --throughput "$speed" >/dev/null \
            || fail "report for job $job refused"
        sleep 1.2
    done
}

bully1=$(submit -N 2 --gres=gpu:2 -J Bully --nodelist=n1,n2 --wrap 'sleep 600')
victim=$(submit -N 2 --gres=gpu:2 --nodelist=n3,n4 --explore=learnsweep --explore-metric=loss:min \
    --explore-max-steps=1000000 --explore-on-hopeless=none --explore-model=Victim --wrap 'sleep 600')
wait_until 20 '[ "$(job_state $bully1)" = RUNNING ] && [ "$(job_state $victim)" = RUNNING ]' "Bully and the Victim trial running"

# Before any report: a pending Victim job goes to the fullest nodes (every pair believed harmless),
# beside a running job, not to the empty n5,n6.
probe=$(submit -N 2 --gres=gpu:2 -J Victim --begin=now+3600 --wrap 'sleep 60')
wait_until 10 '[ -n "$(req_nodes $probe)" ] && [ "$(req_nodes $probe)" != "(null)" ]' "the probe placed"
before=$(req_nodes "$probe")
case $before in n1,n2|n3,n4) ;; *) fail "before learning the probe was placed on $before" ;; esac
pass "before learning: probe placed on $before ($(comment $probe))"

report_speed "$victim" 10 4
wait_until 10 "grep -q 'placement: learned JobId=$victim Victim,4,2 alone: 10 steps/s' '$log'" "slurmctld to learn Victim's speed alone"
pass "learned: $(grep -o "learned JobId=$victim Victim,4,2 alone.*" "$log" | tail -1)"

bully2=$(submit -N 2 --gres=gpu:2 -J Bully --nodelist=n3,n4 --wrap 'sleep 600')
wait_until 20 '[ "$(job_state $bully2)" = RUNNING ]' "the second Bully running beside the Victim trial"
sleep 2  # a round sees the new company; what was reported before it is set aside
report_speed "$victim" 4 5
wait_until 10 "grep -q 'placement: learned JobId=$victim Victim,4,2 beside Bully,4,2: 0.40 of alone' '$log'" \
    "slurmctld to learn Victim beside Bully"
pass "learned: $(grep -o "learned JobId=$victim Victim,4,2 beside.*" "$log" | tail -1)"

# Now the probe (n3,n4 full; n1,n2 beside a Bully) goes to the empty pair.
wait_until 10 '[ "$(req_nodes $probe)" = "n5,n6" ]' "the probe moved to n5,n6 (ReqNodeList=\$(req_nodes $probe))"
c=$(comment "$probe")
[ "$c" = "placement: nodes n5,n6, predicted 1.00 of isolated" ] || fail "probe's SystemComment: '$c'"
pass "after learning: probe required onto n5,n6: '$c'"
# what it would be predicted beside the Bully: in the log of the learned table, not a guess
grep -q "Victim,4,2 beside Bully,4,2: 0.40" "$log" || fail "no learned pair in the log"

# Out-of-range reports teach nothing: 100x faster beside the Bully than alone is ignored.
n_before=$(grep -c "placement: learned JobId=$victim " "$log")
report_speed "$victim" 1000 3
sleep 2
n_after=$(grep -c "placement: learned JobId=$victim " "$log")
[ "$n_after" = "$n_before" ] || fail "an out-of-range report was learned from ($n_before -> $n_after lines)"
[ "$(req_nodes $probe)" = "n5,n6" ] || fail "after out-of-range reports the probe moved to $(req_nodes $probe)"
pass "reports 100x faster than alone are ignored; the probe stays on n5,n6"

# A restart: the learned table comes back from StateSaveLocation (saved after the learning round,
# and at shutdown at the latest); nothing is reported after it.
state="$CLUSTER_DIR/state/explsched_net_learned.json"
scancel "$probe"
lines=$(wc -l <"$log")
cluster_restart_slurmctld "$CLUSTER_DIR" || fail "slurmctld did not restart"
[ -f "$state" ] || fail "no learned state $state after the restart"
[ "$(stat -c %a "$state")" = 600 ] || fail "$state has mode $(stat -c %a "$state"), not 600"
after_restart() { tail -n +"$((lines + 1))" "$log"; }
wait_until 30 "after_restart | grep -q 'placement: $state: loaded the learned table: 0 types beyond net_table, 1 pairs learned'" \
    "slurmctld to load the learned table"
pass "restart: $(after_restart | grep -o 'placement: .*: loaded the learned table.*' | head -1)"
probe2=$(submit -N 2 --gres=gpu:2 -J Victim --begin=now+3600 --wrap 'sleep 60')
wait_until 30 '[ "$(req_nodes $probe2)" = "n5,n6" ]' "the new probe $probe2 on n5,n6 (ReqNodeList=\$(req_nodes $probe2))"
after_restart | grep -q "placement: learned JobId" && fail "learned from reports after the restart: $(after_restart | grep 'placement: learned JobId')"
pass "after the restart a new Victim job is placed away from Bully without new reports: $(comment $probe2)"

# A damaged state file: set aside with an error; placement goes on from the loaded table (the
# probe, a pin of ours, moves back to the fullest nodes, beside a Bully believed harmless).
cluster_stop_slurmctld "$CLUSTER_DIR"
printf '{"format": "explsched-net-learned", "version": 1, "prior": {"fingerprint"' >"$state"
lines=$(wc -l <"$log")
cluster_restart_slurmctld "$CLUSTER_DIR" || fail "slurmctld did not restart"
wait_until 30 "after_restart | grep -q 'error: .*placement: $state: not valid JSON (truncated or garbage) (starting from the loaded table)'" \
    "the error about the damaged state file"
[ -f "$state.bad" ] || fail "the damaged state file was not set aside as $state.bad"
grep -q '"fingerprint"$' "$state.bad" || fail "$state.bad is not the damaged file"
wait_until 30 '[ "$(req_nodes $probe2)" = n1,n2 ]' "the probe back on n1,n2 from the loaded table (ReqNodeList=\$(req_nodes $probe2))"
pass "damaged state: '$(after_restart | grep -o 'placement: .*(starting from the loaded table)' | head -1)', set aside as .bad; probe placed on $(req_nodes $probe2)"
scancel "$bully1" "$bully2" "$victim" "$probe2"
