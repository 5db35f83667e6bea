#!/bin/bash
# Migration (placement=yes, migrate_below=0.6; doc/placement.md): Victim runs on n1,n2; then an
# admin-pinned Bully (--nodelist, which placement never changes) lands beside it, predicting
# Victim at 0.35 of isolated (0.33, floored) while n3,n4 are free (1.00). The plugin requeues
# Victim (Slurm's SIGTERM is its checkpoint signal), says why in slurmctld's log and its
# SystemComment, and the next rounds place it on n3,n4, where it runs again.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster

new_net_table "Bully Victim" "1.0 1.0" "0.33 1.0" || fail "writing the pair table"
table=$NET_TABLE

start_cluster --nodes 4 --gpus 4 --params "rerank_period=1,placement=yes,migrate_below=0.6,net_table=$table"

victim=$(submit -N 2 --gres=gpu:2 -J Victim -o victim.%j.out --wrap 'sleep 300')
wait_until 20 '[ "$(job_state $victim)" = RUNNING ]' "Victim running"
[ "$(job_field $victim NodeList)" = "n[1-2]" ] || fail "Victim runs on $(job_field $victim NodeList), the test expects n[1-2]"
pass "Victim runs on n[1-2]"

bully=$(submit -N 2 --gres=gpu:2 -J Bully --nodelist=n1,n2 -o bully.out --wrap 'sleep 300')
wait_until 20 '[ "$(job_state $bully)" = RUNNING ]' "Bully running"
pass "Bully (admin-pinned) runs beside it on $(job_field $bully NodeList)"

wait_until 20 '[ "$(job_field $victim Restarts)" = 1 ]' "Victim requeued to move it"
c=$(comment "$victim")
echo "$c" | grep -q "^migrate: predicted 0.35 of isolated here, 1.00 on n3,n4$\|^placement: nodes n3,n4, predicted 1.00 of isolated$" \
    || fail "Victim's SystemComment after the requeue: '$c'"
grep -q "JobId=$victim migrate: predicted 0.35 of isolated here, 1.00 on n3,n4: requeueing it" \
    "$CLUSTER_DIR/log/slurmctld.log" || fail "slurmctld's log does not say why it requeued Victim"
pass "Victim requeued: $(grep -o "JobId=$victim migrate:.*" "$CLUSTER_DIR/log/slurmctld.log" | head -1)"

wait_until 40 '[ "$(job_state $victim)" = RUNNING ]' "Victim running again"
[ "$(job_field $victim NodeList)" = "n[3-4]" ] || fail "moved Victim runs on $(job_field $victim NodeList)"
[ "$(job_field $bully Restarts)" = 0 ] || fail "Bully was requeued"
pass "Victim runs again on n[3-4]: $(comment $victim)"
scancel "$victim" "$bully"
