#!/bin/bash
# Placement counts every running job's GPUs, CPUs and memory, not only the multi-node jobs it
# models (doc/placement.md). 4 nodes x 4 GPUs x 8 CPUs x 4096 MB, CR_Core_Memory, placement=yes:
# single-node jobs hold all GPUs of n1 and all CPUs of n2; a pending two-node job must be placed
# on n3,n4, where it can start now, not on nodes whose GPUs or CPUs are taken (it would wait
# there while n3,n4 stay idle). Then the same with memory.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster

new_net_table "A B" "1.0 1.0" "1.0 1.0" || fail "writing the pair table"
start_cluster --nodes 4 --gpus 4 --cpus 8 --select-params CR_Core_Memory --params "rerank_period=1,placement=yes,net_table=$NET_TABLE"

gpu_hog=$(submit -w n1 -N 1 --gres=gpu:4 -n 1 --mem=100 -J gpuhog --wrap 'sleep 300')
cpu_hog=$(submit -w n2 -N 1 -n 8 --mem=100 -J cpuhog --wrap 'sleep 300')
wait_until 20 '[ "$(job_state $gpu_hog)" = RUNNING ] && [ "$(job_state $cpu_hog)" = RUNNING ]' "the single-node jobs running"
pass "single-node jobs hold n1's 4 GPUs and n2's 8 CPUs"

# The two-node job waits 6 s (--begin): the plugin places it meanwhile.
two=$(submit -N 2 --gres=gpu:2 -n 2 --mem=100 -J A --begin=now+6 --wrap 'sleep 30')
wait_until 10 '[ -n "$(job_field $two ReqNodeList | grep -v null)" ]' "job $two placed"
req=$(job_field "$two" ReqNodeList)
[ "$req" = "n3,n4" ] || fail "job $two required onto $req, where its GPUs or CPUs are taken (SystemComment: $(comment $two))"
pass "job $two required onto n3,n4"
wait_until 20 '[ "$(job_state $two)" = RUNNING ]' "job $two running"
[ "$(job_field $two NodeList)" = "n[3-4]" ] || fail "job $two runs on $(job_field $two NodeList)"
pass "job $two starts at once on n[3-4]"

# Half of n3's GPUs taken by a single-node job: a two-node job of 4 GPUs per node fits only n4
# plus a node with 4 free GPUs: none (n1 full, n2 no CPUs, n3 half): no pin, Slurm's choice.
scancel "$two"
half=$(submit -w n3 -N 1 --gres=gpu:2 -n 1 --mem=100 -J half --wrap 'sleep 300')
wait_until 20 '[ "$(job_state $half)" = RUNNING ]' "job $half running"
big=$(submit -N 2 --gres=gpu:4 -n 2 --mem=100 -J B --begin=now+4 --wrap 'sleep 30')
wait_until 15 '[ "$(comment $big)" = "placement: no 2 nodes with 4 free GPUs, 1 free CPU and 100 MB free each now" ]' \
    "job $big: no node set (SystemComment '\$(comment $big)')"
case "$(job_field $big ReqNodeList)" in ""|"(null)") ;; *) fail "job $big pinned to $(job_field $big ReqNodeList)";; esac
pass "no pin where no two nodes have 4 free GPUs and a CPU: '$(comment $big)'"
scancel "$gpu_hog" "$cpu_hog" "$half" "$big"
wait_until 20 '[ -z "$(squeue -h -o %i)" ]' "all jobs gone"

# Memory: jobs without GPUs hold 3500 of n1's and n2's 4096 MB; a two-node job asking 1000 MB per
# node fits only n3,n4. A job asking no memory gets a whole node's (Slurm's rule without
# DefMemPerNode), so it is placed only on nodes no job holds memory on.
m1=$(submit -w n1 -N 1 -n 1 --mem=3500 -J memhog --wrap 'sleep 300')
m2=$(submit -w n2 -N 1 -n 1 --mem=3500 -J memhog --wrap 'sleep 300')
wait_until 20 '[ "$(job_state $m1)" = RUNNING ] && [ "$(job_state $m2)" = RUNNING ]' "the memory hogs running"
mem=$(submit -N 2 --gres=gpu:1 -n 2 --mem=1000 -J A --begin=now+4 --wrap 'sleep 30')
wait_until 10 '[ "$(job_field $mem ReqNodeList)" = "n3,n4" ]' "job $mem required onto n3,n4 (ReqNodeList=\$(job_field $mem ReqNodeList), SystemComment '\$(comment $mem)')"
wait_until 20 '[ "$(job_state $mem)" = RUNNING ]' "job $mem running"
pass "job $mem (1000 MB per node) placed on n3,n4 and running, away from the nodes whose memory is taken"
whole=$(submit -N 2 --gres=gpu:1 -n 2 -J A --begin=now+4 --wrap 'sleep 30')
wait_until 10 '[ "$(comment $whole)" = "placement: no 2 nodes with 1 free GPUs, 1 free CPU and all their memory free each now" ]' \
    "job $whole: no node set with all memory free (SystemComment '\$(comment $whole)')"
sleep 5  # Slurm agrees: it does not start it either (backfill runs every 2 s)
[ "$(job_state $whole)" = PENDING ] || fail "job $whole is $(job_state $whole): Slurm started a job asking no memory beside others"
pass "a job asking no memory (the whole node's) is not pinned while every node has memory taken, and Slurm holds it too: '$(comment $whole)'"
scancel "$m1" "$m2" "$mem" "$whole"
