#!/bin/bash
# One trial of bench_sweep.sh: a synthetic trainer whose loss follows a + b * step^-c, with a, b and
# c drawn from the sweep's seed and the array task id (so a run is reproducible), reporting POINTS
# points STRIDE steps apart, one every EVERY seconds, through `explsched report` (the C++ client:
# a bash loop and one short process per point, so that a thousand of these fit on a small host).
# It checkpoints the last reported step and resumes after it when requeued.
#   sweep_trial.sh SEED POINTS STRIDE EVERY CKPT_DIR
set -u
seed=$1 points=$2 stride=$3 every=$4 ckpt_dir=$5
task=${SLURM_ARRAY_TASK_ID:-0}
report=${EXPLSCHED_CLI:-explsched}
ckpt=$ckpt_dir/${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}_$task
start=0
[ -f "$ckpt" ] && read -r start <"$ckpt"
stop=0
trap 'stop=1' TERM
throughput=$(awk -v s="$stride" -v e="$every" 'BEGIN { print s / e }')
mapfile -t curve < <(awk -v seed=$((seed * 100003 + task)) -v n="$points" -v stride="$stride" 'BEGIN {
    srand(seed); a = 0.05 + rand() * 0.9; b = 0.5 + rand() * 1.5; c = 0.3 + rand() * 0.5
    for (i = 1; i <= n; i++) { s = i * stride; printf "%d %.6f\n", s, a + b * s ^ -c }
}')
for point in "${curve[@]}"; do
    read -r step loss <<<"$point"
    [ "$step" -le "$start" ] && continue
    $report report --step "$step" --metric "$loss" --throughput "$throughput" --retries 2 --timeout 5 \
        >/dev/null 2>&1 || echo "point $step not stored"
    echo "$step" >"$ckpt"
    sleep "$every" &
    wait $!  # returns at once on SIGTERM (the trap runs), unlike a foreground sleep
    [ $stop = 0 ] || { echo "checkpointed at step $step"; exit 0; }
done
echo "done"
