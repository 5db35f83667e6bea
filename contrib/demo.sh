#!/bin/bash
# ExplSched's demo on one Debian 12 machine (as root): installs what is missing, builds, brings up
# a local Slurm cluster (4 nodes x 4 fake GPUs, real munged/slurmctld/slurmd), submits an
# exploratory sweep of 16 real training trials as a job array with --explore, and shows what
# Slurm shows for it (squeue, scontrol show job). Idempotent; the cluster is taken down at the
# end unless --keep is given (then: . $DEMO_DIR/env.sh to use it).
#   contrib/demo.sh [--keep] [--dir DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
keep=no
demo_dir=${TMPDIR:-/tmp}/explsched-demo
while [ $# -gt 0 ]; do
    case $1 in
        --keep) keep=yes ;;
        --dir) demo_dir=$2; shift ;;
        *) echo "usage: $0 [--keep] [--dir DIR]" >&2; exit 2 ;;
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
step "local cluster"
cluster_down "$demo_dir" >/dev/null 2>&1 || true
rm -rf "$demo_dir"
cluster_up "$demo_dir" --nodes 4 --gpus 4 --params rerank_period=2
. "$demo_dir/env.sh"
[ $keep = yes ] || trap 'step "tear-down"; cluster_down "$demo_dir"' EXIT
sinfo -N -o '%N %t %G'

step "submit a sweep of 16 trials (job array, --explore=spirals)"
mkdir -p "$demo_dir/sweep" && chmod 1777 "$demo_dir/sweep"
cat >"$demo_dir/sweep/trial.sh" <<EOS
#!/bin/bash
# One trial: learning rate and width from the array index.
lrs=(0.02 0.05 0.1 0.2 0.3 0.5 0.8 1.2)
hidden=\$(( SLURM_ARRAY_TASK_ID < 8 ? 16 : 48 ))
lr=\${lrs[\$(( SLURM_ARRAY_TASK_ID % 8 ))]}
exec /usr/bin/python3 $top/contrib/demo/train.py --lr \$lr --hidden \$hidden --steps 2000 \\
    --eval-every 100 --step-delay 0.002 --seed \$SLURM_ARRAY_TASK_ID \\
    --checkpoint $demo_dir/sweep/ckpt.\$SLURM_ARRAY_JOB_ID.\$SLURM_ARRAY_TASK_ID.npz
EOS
chmod +x "$demo_dir/sweep/trial.sh"
cd "$demo_dir/sweep"
job=$(sbatch --parsable --array=0-15 --gres=gpu:1 --explore=spirals --explore-metric=val_loss:min \
    --explore-max-steps=2000 -o "$demo_dir/sweep/trial.%a.out" "$demo_dir/sweep/trial.sh")
echo "submitted array job $job"
sleep 3

step "squeue"
squeue -r -o '%.10i %.9P %.8j %.2t %.6M %.4D %R'
step "scontrol show job ${job}_0"
scontrol show job "${job}_0"

step "waiting for the sweep to finish"
for _ in $(seq 1 120); do
    [ -z "$(squeue -h -j "$job" -o %i)" ] && break
    sleep 1
done
step "results (final validation loss per trial)"
for f in "$demo_dir"/sweep/trial.*.out; do
    t=${f##*/trial.}; t=${t%.out}
    last=$(grep '"val_loss"' "$f" | tail -1)
    printf 'trial %2s  %s\n' "$t" "$last"
done | sort -k2 -n
best=$(grep -h '"val_loss"' "$demo_dir"/sweep/trial.*.out | sed 's/.*"val_loss": \([0-9.e-]*\).*/\1/' | sort -g | head -1)
echo "best validation loss: $best"
