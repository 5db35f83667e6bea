#!/bin/bash
# Network-contention-aware placement (placement=yes, doc/placement.md) on a 4-node x 4-GPU local
# cluster. Synthetic two-node "models" whose step time a test-side model slows (0.1 s -> 0.3 s)
# while a job they are hurt by shares one of their nodes; the plugin reads the same pairwise table
# (DeepShare's format). Shown: a pending Victim is required onto the nodes Bully does not use and
# runs unslowed; a pending Friend (harmless to Bully, harmful to Victim) joins Bully rather than
# Victim; the decision is in each job's SystemComment; the pin survives `scontrol reconfigure`
# and a slurmctld restart, and a requeued job is placed again; placement=no is the control.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster

# row's throughput while the column job shares its nodes, as a fraction of alone
new_net_table "Bully Victim Friend" "1.0 1.0 1.0" "0.33 1.0 0.33" "1.0 1.0 1.0" || fail "writing the pair table"
table=$NET_TABLE

start_cluster --nodes 4 --gpus 4 --params "rerank_period=1,placement=yes,net_table=$table"

# The test-side model: STEPS steps of 0.1 s, 0.3 s while a job named in HURT_BY shares a node.
write_contention_model

bully=$(submit -N 2 --gres=gpu:2 -J Bully -o bully.out --export=ALL,STEPS=100000 model.sh)
wait_until 20 '[ "$(job_state $bully)" = RUNNING ]' "Bully running"
bully_nodes=$(job_field "$bully" NodeList)
[ "$bully_nodes" = "n[1-2]" ] || fail "Bully runs on $bully_nodes, the test expects n[1-2] (Slurm's first fit)"
pass "Bully runs on n[1-2]"

# Victim waits 8 s (--begin): the plugin places it meanwhile, away from Bully.
victim=$(submit -N 2 --gres=gpu:2 -J Victim -o victim.out --begin=now+8 \
    --export=ALL,STEPS=150,HURT_BY="Bully Friend" model.sh)
wait_until 10 '[ "$(req_nodes $victim)" = "n3,n4" ]' "Victim required onto n3,n4"
c=$(comment "$victim")
[ "$c" = "placement: nodes n3,n4, predicted 1.00 of isolated" ] || fail "Victim's SystemComment: '$c'"
pass "Victim pinned: ReqNodeList=n3,n4, SystemComment '$c'"

scontrol reconfigure || fail "scontrol reconfigure"
sleep 2
[ "$(req_nodes $victim)" = "n3,n4" ] || fail "after reconfigure ReqNodeList=$(req_nodes $victim)"
pass "the pin survives scontrol reconfigure"

wait_until 20 '[ "$(job_state $victim)" = RUNNING ]' "Victim running"
[ "$(job_field $victim NodeList)" = "n[3-4]" ] || fail "Victim runs on $(job_field $victim NodeList)"
pass "Victim runs on n[3-4]"

# Friend (hurts Victim, harmless to Bully) waits 3 s: it should join Bully, not Victim.
friend=$(submit -N 2 --gres=gpu:2 -J Friend -o friend.out --begin=now+3 --export=ALL,STEPS=20 model.sh)
wait_until 10 '[ "$(req_nodes $friend)" = "n1,n2" ]' "Friend required onto n1,n2 (ReqNodeList=\$(req_nodes $friend), SystemComment '\$(comment $friend)')"
c=$(comment "$friend")
echo "$c" | grep -q "^placement: nodes n1,n2, predicted 1.00 of isolated, joins 1 job" || fail "Friend's SystemComment: '$c'"
pass "Friend pinned beside Bully: '$c'"
why_says "$friend" "placement: nodes n1,n2, predicted 1.00 of isolated"
runs_on "$friend" "n[1-2]" Friend

# Requeue Victim while it runs: pending again, placed again (n3,n4 are still the only B-free pair).
scontrol requeue "$victim" || fail "scontrol requeue $victim"
wait_until 30 '[ "$(job_field $victim Restarts)" = 1 ] && [ "$(job_state $victim)" = RUNNING ]' "Victim running again"
[ "$(job_field $victim NodeList)" = "n[3-4]" ] || fail "requeued Victim runs on $(job_field $victim NodeList)"
[ "$(comment $victim)" = "placement: nodes n3,n4, predicted 1.00 of isolated" ] || fail "after requeue: '$(comment $victim)'"
pass "requeued Victim placed again on n3,n4"

wait_until 60 '[ "$(job_state $victim)" = "" ] || [ "$(job_state $victim)" = COMPLETED ]' "Victim to finish"
wait_until 10 '[ -s result.Victim ]' "Victim's result"
last=$(tail -1 result.Victim)
echo "$last" | grep -q "^Victim n3 n4 slow_steps=0$" || { cat result.*; fail "Victim was slowed: $last"; }
pass "Victim ran unslowed: $last"

# A pin survives a slurmctld restart (saved in its state; the plugin knows it by the SystemComment).
late=$(submit -N 2 --gres=gpu:2 -J Victim -o late.out --begin=now+3600 --export=ALL,STEPS=1,HURT_BY=Bully model.sh)
wait_until 10 '[ "$(req_nodes $late)" = "n3,n4" ]' "job $late required onto n3,n4"
# A multi-node trial (an array task, its model from --explore-model): the ranking owns its
# SystemComment, so the placement is appended to the ranking line, and `explsched why` prints it.
trial=$(submit -N 2 --gres=gpu:2 --array=0 -J sweep --begin=now+3600 --explore=netsweep \
    --explore-metric=loss:min --explore-max-steps=1000 --explore-model=Victim --wrap 'sleep 60')
trial=${trial}_0
wait_until 15 'comment $trial | grep -q "^explsched: .*; placement: nodes n3,n4, predicted 1.00 of isolated"' \
    "trial $trial's ranking line with its placement (now '\$(comment $trial)')"
[ "$(req_nodes $trial)" = "n3,n4" ] || fail "trial $trial: ReqNodeList=$(req_nodes $trial)"
task_id=$(scontrol show job "$trial" | sed -n 's/^ *JobId=\([0-9]*\) .*/\1/p' | head -1)
why=$("$top_builddir/src/cli/explsched" why "$task_id" 2>&1) || fail "explsched why $task_id: $why"
echo "$why" | grep -q "^  placement: nodes n3,n4, predicted 1.00 of isolated" || fail "explsched why $task_id: '$why'"
echo "$why" | grep -q "Decision:" || fail "explsched why $task_id does not treat it as a trial: '$why'"
echo "$why" | grep "Decision:" | grep -q "placement" && fail "explsched why $task_id prints the placement in its Decision line: '$why'"
pass "trial $trial: '$(comment $trial | grep -o '; placement: .*')', and explsched why prints it"
cluster_restart_slurmctld "$CLUSTER_DIR" || fail "slurmctld did not restart"
sleep 3
[ "$(req_nodes $late)" = "n3,n4" ] || fail "after restart ReqNodeList=$(req_nodes $late)"
[ "$(comment $late)" = "placement: nodes n3,n4, predicted 1.00 of isolated" ] || fail "after restart: '$(comment $late)'"
# the trial's pin is still known as ours (by the note on its ranking line): kept, not left stale
[ "$(req_nodes $trial)" = "n3,n4" ] || fail "after restart trial ReqNodeList=$(req_nodes $trial)"
comment "$trial" | grep -q "; placement: nodes n3,n4," || fail "after restart the trial's comment: '$(comment $trial)'"
pass "the pins survive a slurmctld restart"
scancel "$late" "${trial%_0}"

# Control: placement=no (slurm.conf edited, scontrol reconfigure). Slurm's own choice for the same
# job, with Bully still on n1,n2.
sed -i 's/placement=yes/placement=no/' "$SLURM_CONF"
scontrol reconfigure || fail "scontrol reconfigure"
sleep 2
control=$(submit -N 2 --gres=gpu:2 -J Victim -o control.out --export=ALL,STEPS=20,HURT_BY=Bully model.sh)
wait_until 40 '[ "$(tail -1 result.Victim 2>/dev/null | grep -c "slow_steps")" = 1 ] && [ "$(wc -l <result.Victim)" = 2 ]' "the control job's result"
last=$(tail -1 result.Victim)
case $last in
    "Victim n1 n2 slow_steps="[1-9]*) pass "without placement Slurm put the same job beside Bully, slowed: $last" ;;
    *) echo "note: without placement Slurm chose: $last" ;;
esac
case "$(req_nodes $control)" in ""|"(null)") ;; *) fail "placement=no still required nodes for job $control";; esac
pass "placement=no leaves jobs alone"
scancel "$bully"
