#!/bin/bash
# 16 one-GPU jobs on a 4-node x 4-GPU cluster all run at once and complete, each seeing its own
# GPU (CUDA_VISIBLE_DEVICES as Slurm sets it on a real node) on its node.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
start_cluster --nodes 4 --gpus 4

ids=()
for i in $(seq 0 15); do
    # Each job holds its GPU until all 16 have started, so no two can share one by running in turn.
    ids+=("$(submit --gres=gpu:1 -o "out.$i" --wrap \
        'echo "$SLURMD_NODENAME $CUDA_VISIBLE_DEVICES $SLURM_JOB_GPUS"; touch started.$SLURM_JOB_ID;
         for t in $(seq 1 150); do [ $(ls started.* | wc -l) -ge 16 ] && break; sleep 0.2; done')")
done
[ ${#ids[@]} = 16 ] || fail "only ${#ids[@]} of 16 jobs submitted"
wait_until 90 '[ -z "$(squeue -h -o %i)" ]' "all 16 jobs to finish"

for id in "${ids[@]}"; do
    st=$(job_field "$id" JobState)
    [ "$st" = COMPLETED ] || fail "job $id ended $st, not COMPLETED"
done
pass "16 jobs COMPLETED"

[ "$(ls started.* | wc -l)" = 16 ] || fail "not all jobs started"
pairs=$(cat out.* | awk '{print $1, $3}' | sort -u | wc -l)
[ "$pairs" = 16 ] || { cat out.*; fail "expected 16 distinct (node, GPU) pairs, got $pairs"; }
cvd_bad=$(cat out.* | awk '$2 == "" || $2 !~ /^[0-3]$/' | wc -l)
[ "$cvd_bad" = 0 ] || { cat out.*; fail "a job saw no or a bad CUDA_VISIBLE_DEVICES"; }
nodes=$(cat out.* | awk '{print $1}' | sort | uniq -c | awk '{print $1}' | sort -u)
[ "$nodes" = 4 ] || { cat out.*; fail "expected 4 jobs per node, got counts: $nodes"; }
pass "each job had its own GPU: 16 distinct (node, GPU) pairs, 4 per node, CUDA_VISIBLE_DEVICES in 0-3"
