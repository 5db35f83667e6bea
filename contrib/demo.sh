#!/bin/bash
# ExplSched's demo on one Debian 12 machine (as root): installs what is missing, builds, brings up
# a local Slurm cluster (4 nodes x 4 fake GPUs; real munged, slurmctld, slurmd, explschedd) and
# runs a real exploratory sweep on it: 32 trials of a small numpy MLP (contrib/demo/train.py) over
# learning rate and width, submitted as one job array with --explore, on 16 GPUs. It shows what
# Slurm shows (squeue, sprio, scontrol show job), then runs the same sweep under Slurm's own
# priority/basic and prints both side by side: trials preempted or stopped, the best trial's
# metric, time to reach it, GPU-hours. Idempotent.
# ExplSched runs as README recommends: priority/multifactor with site_factor/explsched
# (--setup priority: the priority/explsched plugin instead).
#   contrib/demo.sh [--keep] [--dir DIR] [--only explsched|basic] [--setup site_factor|priority]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
keep=no only="" setup=site_factor
demo_dir=${TMPDIR:-/tmp}/explsched-demo
while [ $# -gt 0 ]; do
    case $1 in
        --keep) keep=yes ;;
        --dir) demo_dir=$2; shift ;;
        --only) only=$2; shift ;;
        --setup) setup=$2; shift ;;
        *) echo "usage: $0 [--keep] [--dir DIR] [--only explsched|basic] [--setup site_factor|priority]" >&2; exit 2 ;;
    esac
    shift
done
step() { echo; echo "=== demo: $* ==="; }
[ "$(id -u)" = 0 ] || { echo "demo: run as root (it starts munged, slurmctld and slurmd)" >&2; exit 1; }

step "dependencies"
bash "$top/contrib/install-deps.sh"
step "build"
bash "$top/contrib/build.sh" --builddir "$top/_build"

export top_srcdir=$top top_builddir=$top/_build
. "$top/testsuite/cluster/cluster.sh"
steps=3000
trials=32

# One sweep under one priority plugin, on a fresh cluster in $demo_dir/<policy>.
run_sweep() {
    local policy=$1 dir=$demo_dir/$1
    local args=(--nodes 4 --gpus 4 --explschedd)
    if [ "$policy" = explsched ]; then
        args+=(--params rerank_period=2,min_run=20,grace_time=5,hopeless_action=cancel)
        # README's setup: multifactor's factors (no accounting here: fair-share is flat) plus
        # ExplSched's site factor, stored every PriorityCalcPeriod (1 minute)
        [ "$setup" = site_factor ] && args+=(--site-factor --conf PriorityCalcPeriod=1 \
            --conf PriorityWeightAge=1000 --conf PriorityWeightPartition=1000)
    else
        args+=(--priority priority/basic --preempt preempt/none)
    fi
    step "$policy: local cluster"
    cluster_down "$dir" >/dev/null 2>&1 || true
    rm -rf "$dir"
    cluster_up "$dir" "${args[@]}"
    (
        . "$dir/env.sh"
        mkdir -p "$dir/sweep" && chmod 1777 "$dir/sweep"
        cat >"$dir/sweep/trial.sh" <<EOS
#!/bin/bash
# One trial: learning rate and width from the array index (train.py's shuffled 8 x 4 grid).
echo "run_start \$(date +%s.%N)"
trap 'echo "run_end \$(date +%s.%N)"' EXIT
/usr/bin/python3 $top/contrib/demo/train.py --sweep-index \$SLURM_ARRAY_TASK_ID \\
    --steps $steps --eval-every 100 --step-delay 0.01 --seed 7 \\
    --checkpoint $dir/sweep/ckpt.\$SLURM_ARRAY_TASK_ID.npz &
child=\$!
# Slurm signals the batch shell on preemption: pass it on so train.py checkpoints.
trap 'kill -TERM \$child 2>/dev/null' TERM
wait \$child; wait \$child
EOS
        chmod +x "$dir/sweep/trial.sh"
        cd "$dir/sweep"
        date +%s.%N >"$dir/sweep/submitted"
        job=$(sbatch --parsable --array=0-$((trials - 1)) --gres=gpu:1 --explore=spirals \
            --explore-metric=val_loss:min --explore-max-steps=$steps --open-mode=append \
            -o "$dir/sweep/trial.%a.out" "$dir/sweep/trial.sh")
        echo "submitted array job $job ($trials trials, $(sinfo -h -o %G | head -1) per node, 4 nodes)"
        sleep 20
        step "$policy: squeue (20 s in)"
        squeue -r -o '%.8i %.10K %.2t %.6M %.10Q %R' | head -40
        if [ "$policy" = explsched ]; then
            step "$policy: sprio (SITE = ExplSched's utility term)"
            sprio -o '%.10i %.10Y %.8A %.8P %.10S' | head -20
            step "$policy: scontrol show job (one trial)"
            scontrol show job "${job}_0" | grep -E "JobId|JobState|Priority|SystemComment|StartTime"
        fi
        step "$policy: waiting for the sweep"
        for _ in $(seq 1 600); do
            [ -z "$(squeue -h -j "$job" -t RUNNING,CONFIGURING,COMPLETING -o %i)" ] && \
                [ -z "$(squeue -h -j "$job" -t PENDING -o '%i %Q' | awk '$2 != 0')" ] && break
            sleep 1
        done
        for t in $(seq 0 $((trials - 1))); do
            echo "$t $(scontrol show job -o "${job}_$t" | tr ' ' '\n' | sed -n 's/^JobState=//p') \
$(scontrol show job -o "${job}_$t" | tr ' ' '\n' | sed -n 's/^Restarts=//p')"
        done >"$dir/sweep/states"
        if [ "$policy" = explsched ]; then
            echo "trials ExplSched stopped, with the reason it gave:"
            awk '$2 != "COMPLETED" {print $1}' "$dir/sweep/states" | while read -r t; do
                printf '  task %-3s %s\n' "$t" "$(scontrol show job "${job}_$t" | sed -n 's/^ *SystemComment=explsched: //p' | cut -c1-150)"
            done
        fi
    )
    if [ $keep = no ] || [ "$policy" = basic ]; then cluster_down "$dir"; fi
}

policies=(explsched basic)
[ -n "$only" ] && policies=("$only")
for p in "${policies[@]}"; do run_sweep "$p"; done

step "summary"
summ_args=()
# With --only, a sweep of the other policy left by an earlier run is shown beside it.
for p in explsched basic; do [ -f "$demo_dir/$p/sweep/states" ] && summ_args+=("$p=$demo_dir/$p/sweep"); done
/usr/bin/python3 "$top/contrib/demo/summarize.py" $steps "${summ_args[@]}"
[ $keep = yes ] && echo "the explsched cluster is still up: . $demo_dir/explsched/env.sh"
exit 0
