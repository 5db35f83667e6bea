#!/bin/bash
# Placement counts every running job's GPUs and CPUs, not only the multi-node jobs it models
# (doc/placement.md). 4 nodes x 4 GPUs x 8 CPUs, placement=yes: single-node jobs hold all GPUs of
# n1 and all CPUs of n2; a pending two-node job must be placed on n3,n4, where it can start now,
# not on nodes whose GPUs or CPUs are taken (it would wait there while n3,n4 stay idle).
set -u
. "$(dirname "$0")/lib.sh"
require_cluster

new_net_table "A B" "1.0 1.0" "1.0 1.0" || fail "writing the pair table"
start_cluster --nodes 4 --gpus 4 --cpus 8 --params "rerank_period=1,placement=yes,net_table=$NET_TABLE"

gpu_hog=$(submit -w n1 -N 1 --gres=gpu:4 -n 1 -J gpuhog --wrap 'sleep 300')
cpu_hog=$(submit -w n2 -N 1 -n 8 -J cpuhog --wrap 'sleep 300')
wait_until 20 '[ "$(job_state $gpu_hog)" = RUNNING ] && [ "$(job_state $cpu_hog)" = RUNNING ]' "the single-node jobs running"
comment() { scontrol show job "$1" | sed -n 's/^ *SystemComment=//p' | sed 's/ *$//'; }
pass "single-node jobs hold n1's 4 GPUs and n2's 8 CPUs"

# The two-node job waits 6 s (--begin): the plugin places it meanwhile.
two=$(submit -N 2 --gres=gpu:2 -n 2 -J A --begin=now+6 --wrap 'sleep 30')
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
half=$(submit -w n3 -N 1 --gres=gpu:2 -n 1 -J half --wrap 'sleep 300')
wait_until 20 '[ "$(job_state $half)" = RUNNING ]' "job $half running"
big=$(submit -N 2 --gres=gpu:4 -n 2 -J B --begin=now+4 --wrap 'sleep 30')
wait_until 15 '[ "$(comment $big)" = "placement: no 2 nodes with 4 free GPUs and 1 free CPU each now" ]' \
    "job $big: no node set (SystemComment '\$(comment $big)')"
case "$(job_field $big ReqNodeList)" in ""|"(null)") ;; *) fail "job $big pinned to $(job_field $big ReqNodeList)";; esac
pass "no pin where no two nodes have 4 free GPUs and a CPU: '$(comment $big)'"
scancel "$gpu_hog" "$cpu_hog" "$half" "$big"
