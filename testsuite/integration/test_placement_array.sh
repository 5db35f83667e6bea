#!/bin/bash
# Placement of a job array's tasks (placement=yes, doc/placement.md), with accounting (slurmdbd).
# Slurm keeps an array's pending tasks in one meta record and copies its required nodes to each
# task it splits off at start; so the round splits the tasks off itself (as `scontrol update
# JobId=<array>_<task>` does) and places each. Shown on 6 nodes x 4 GPUs, Bully on n1,n2 (two GPUs
# each): a sweep of 4 two-node trials hurt by Bully, `sbatch --array=0-3 -N 2`, waiting 8 s
# (--begin). Before it starts, each task is a record of its own with a pin of its own, none on
# Bully's nodes and no pair of nodes given more tasks than its GPUs hold; the four then start
# together (Slurm's first fit would have put the first beside Bully: n1,n2 have two GPUs free
# each) and run unslowed; each trial's ranking line carries its placement; sacct has one record
# per task, each completed, and none pending. A 500-task array is split only as far as the free
# GPUs go.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
command -v slurmdbd >/dev/null || [ -x /usr/sbin/slurmdbd ] || skip "slurmdbd is not installed"
command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || skip "mariadb-server is not installed"

new_net_table "Bully Victim Friend" "1.0 1.0 1.0" "0.33 1.0 0.33" "1.0 1.0 1.0" || fail "writing the pair table"
start_cluster --nodes 6 --gpus 4 --accounting --log-level verbose --params "rerank_period=1,placement=yes,net_table=$NET_TABLE"
write_contention_model

bully=$(submit -N 2 --gres=gpu:2 -J Bully -o bully.out --export=ALL,STEPS=100000 model.sh)
wait_until 20 '[ "$(job_state $bully)" = RUNNING ]' "Bully running"
[ "$(job_field "$bully" NodeList)" = "n[1-2]" ] || fail "Bully runs on $(job_field "$bully" NodeList), want n[1-2]"
pass "Bully runs on n[1-2]"

array=$(submit --array=0-3 -N 2 --gres=gpu:2 -J Victim -o 'victim.%a.out' --begin=now+8 \
    --explore=netsweep --explore-metric=loss:min --explore-max-steps=1000 --explore-model=Victim \
    --export=ALL,STEPS=30,HURT_BY=Bully model.sh)

# records: "JOBID TASK STATE REQNODES", one line per record of the array
records() {
    scontrol show job -o "$array" 2>/dev/null | awk '{
        id = ""; t = ""; s = ""; r = ""
        for (i = 1; i <= NF; i++) {
            split($i, kv, "=")
            if (kv[1] == "JobId") id = kv[2]
            else if (kv[1] == "ArrayTaskId") t = kv[2]
            else if (kv[1] == "JobState") s = kv[2]
            else if (kv[1] == "ReqNodeList") r = substr($i, 13)
        }
        print id, t, s, r
    }'
}
pinned_tasks() { records | awk '$3 == "PENDING" && $2 ~ /^[0-9]+$/ && $4 != "(null)" && $4 != ""' | wc -l; }
wait_until 8 '[ "$(pinned_tasks)" = 4 ]' "four pending tasks, each with its own pin (now: \$(records | tr '\n' ';'))"
recs=$(records)
echo "$recs" | sed 's/^/    /'
[ "$(echo "$recs" | awk '{ print $2 }' | sort -n | tr '\n' ' ')" = "0 1 2 3 " ] || fail "the array's records: $recs"
echo "$recs" | awk '{ print $4 }' | grep -q "n[12]\b" && fail "a task is pinned onto Bully's nodes: $recs"
# each node named by at most two pins (two tasks of two GPUs fill its four)
over=$(echo "$recs" | awk '{ print $4 }' | tr ',' '\n' | sort | uniq -c | awk '$1 > 2')
[ -z "$over" ] || fail "over-full nodes: $over ($recs)"
pass "4 tasks, 4 pins, none on n1 or n2, no node over its GPUs"
# the tasks are trials: each keeps its ranking line, its placement appended
for id in $(echo "$recs" | awk '{ print $1 }'); do
    comment "$id" | grep -q "^explsched: .*; placement: nodes n[3-6],n[3-6], predicted 1.00 of isolated" \
        || fail "task $id's SystemComment: '$(comment "$id")'"
done
pass "each task's ranking line carries its placement: '$(comment "$(echo "$recs" | awk 'NR == 1 { print $1 }')" | grep -o '; placement: .*')'"
first=$(echo "$recs" | awk 'NR == 1 { print $1 }')
why_says "$first" "placement: nodes n[3-6],n[3-6], predicted 1.00 of isolated"

running_tasks() { records | awk '$3 == "RUNNING"' | wc -l; }
wait_until 20 '[ "$(running_tasks)" = 4 ]' "the four tasks running together (now: \$(records | tr '\n' ';'))"
nodes_used=$(for id in $(records | awk '{ print $1 }'); do job_field "$id" NodeList; done | tr '\n' ' ')
echo "$nodes_used" | grep -q "n[12]\b\|n\[1" && fail "a task runs on Bully's nodes: $nodes_used"
pass "the four tasks run together, away from Bully: $nodes_used"

wait_until 60 '[ "$(records | grep -c RUNNING)" = 0 ] && [ "$(wc -l <result.Victim 2>/dev/null || echo 0)" = 4 ]' \
    "the four tasks' results"
grep -v "slow_steps=0$" result.Victim && fail "a task was slowed: $(cat result.Victim)"
pass "every task ran unslowed: $(tr '\n' ';' <result.Victim)"

# A large array is split only as far as the free GPUs go: 500 tasks of four GPUs on each of two
# nodes fit twice now (n3-n6; Bully holds half of n1 and n2), so, round after round, two tasks
# are split off and the meta record keeps the other 498.
big=$(submit --array=0-499 -N 2 --gres=gpu:4 -J Victim -o /dev/null --begin=now+3600 --wrap 'sleep 1')
wait_until 10 '[ "$(scontrol show job -o "$big" 2>/dev/null | grep -c "ReqNodeList=n")" = 2 ]' \
    "two tasks of the large array split off and pinned (now: \$(scontrol show job -o $big | grep -c JobId=) records)"
sleep 5  # five rounds more
n=$(scontrol show job -o "$big" | grep -c "JobId=")
meta=$(scontrol show job -o "$big" | grep -o "ArrayTaskId=[0-9]*-[0-9]*" | head -1)
{ [ "$n" = 3 ] && [ "$meta" = "ArrayTaskId=2-499" ]; } || fail "the large array: $n records, meta '$meta'"
pass "the large array after 5 more rounds: 2 tasks split off and pinned, the meta record holds $meta"
scancel "$big"

# Accounting: one record per task, each completed; the array has no record left pending.
acct() { sacct -n -X -P -j "$array" -o JobID,State 2>/dev/null | sort; }
want=$(printf '%s_%d|COMPLETED\n' "$array" 0 "$array" 1 "$array" 2 "$array" 3)
wait_until 30 '[ "$(acct)" = "$want" ]' "sacct to list the four tasks completed (now: \$(acct | tr '\n' ' '))"
pass "sacct: $(acct | tr '\n' ' ')"
scancel "$bully"
# slurmctld said nothing amiss about the arrays' records
bad=$(grep -E "task count underflow|Unable to copy record|No tasks in task_id_bitmap|could not split|lacks array structure|_set_job_id error" \
    "$CLUSTER_DIR/log/slurmctld.log")
[ -z "$bad" ] || fail "slurmctld's log: $bad"
pass "slurmctld's log has no complaint about the arrays' records"
# three splits for the sweep (its last task is the meta record itself), two for the large array
n=$(grep -c "placement: JobId=[0-9]*_[0-9]* split off its array as JobId=" "$CLUSTER_DIR/log/slurmctld.log")
[ "$n" = 5 ] || fail "slurmctld logged $n splits, want 5"
pass "5 splits logged; their cost: $(grep -o "split [0-9]* array tasks .* in [0-9.]* ms" "$CLUSTER_DIR/log/slurmctld.log" | tr '\n' ';')"
