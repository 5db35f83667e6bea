#!/bin/bash
# Attack: user A floods the queue with large job arrays of two-node jobs, so that the placement
# round (which splits an array's pending tasks off its meta record to place each, doc/placement.md
# "Job arrays") spends itself on A's records: splitting thousands of them, or none of user B's.
# What the design guarantees:
#  - per array, no more tasks are split off than the free GPUs would hold now (here two), so A's
#    1,600 tasks cost 2 records per array, not 1,600;
#  - 64 splits per round for all arrays together, the highest priority first, and an array with
#    its share split off takes none the next round: B's array, submitted last at the same
#    priority, has its tasks split off within a few rounds. (Which tasks are pinned is then the
#    planner's choice by priority, as for any job: the room is for two.)
# Two real users on 4 nodes x 4 GPUs.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
require_users
a=esh_aflood_a b=esh_avictim_b
make_user $a
make_user $b
new_net_table "Bully Victim" "1.0 1.0" "0.33 1.0" || fail "writing the pair table"
start_cluster --nodes 4 --gpus 4 --log-level verbose --params "rerank_period=1,placement=yes,net_table=$NET_TABLE"
chmod o+x "$CLUSTER_DIR" 2>/dev/null

# A's 80 arrays of 20 tasks, each task four GPUs on each of two nodes (room for two now), all
# waiting for a start time so that the rounds keep placing them.
for i in $(seq 1 80); do
    submit_as $a --array=0-19 -N 2 --gres=gpu:4 -J Victim --begin=now+3600 -o /dev/null --wrap 'sleep 60' >/dev/null \
        || fail "user A could not submit array $i"
done
barray=$(submit_as $b --array=0-3 -N 2 --gres=gpu:4 -J Victim --begin=now+3600 -o /dev/null --wrap 'sleep 60')
[ -n "$barray" ] || fail "user B could not submit"

b_records() { scontrol show job -o "$barray" 2>/dev/null | grep -c "JobId="; }
wait_until 20 '[ "$(b_records)" = 3 ]' "two of B's tasks split off (now \$(b_records) records)"
pass "B's array: two tasks split off, to be placed, after A's flood of 80 arrays"
sleep 3  # three rounds more
records=$(scontrol show job -o | grep -c "UserId=$a(")  # one line per record
tasks=$(squeue -h -r -u $a -o %i | wc -l)                 # one line per task
[ "$tasks" = 1600 ] || fail "A has $tasks tasks, want 1600"
[ "$records" = 240 ] || fail "A's arrays are $records records, want 240 (80 meta records + 2 tasks each)"
over=$(scontrol show job -o | grep "UserId=$a(" | grep -o "ArrayJobId=[0-9]*" | sort | uniq -c | awk '$1 > 3')
[ -z "$over" ] || fail "arrays with more than two tasks split off: $over"
pass "A's 1,600 tasks are $records records: 80 meta records and 2 tasks split off each"
n=$(b_records)
[ "$n" = 3 ] || fail "B's array is $n records, want 3 (2 split off, the meta record with 2)"
bad=$(grep -E "task count underflow|Unable to copy record|No tasks in task_id_bitmap|could not split|lacks array structure" \
    "$CLUSTER_DIR/log/slurmctld.log")
[ -z "$bad" ] || fail "slurmctld's log: $bad"
pass "splits per round: $(grep -o "split [0-9]* array tasks .* in [0-9.]* ms" "$CLUSTER_DIR/log/slurmctld.log" | head -4 | tr '\n' ';')"
scancel -u $a
scancel -u $b
