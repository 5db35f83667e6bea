#!/bin/sh
# Real-GPU check of the device level (issue item 7). Needs an NVIDIA GPU, its driver, nvcc and
# nvidia-cuda-mps-control; exits 77 (skip) otherwise. Builds gpu_load.cu, then runs a
# high-priority process (Poisson requests of compute-bound kernels) and a best-effort process
# (back-to-back memory-bound kernels) on GPU 0 under:
#   exclusive     each alone (the baselines)
#   unmanaged     both under MPS, no scheduling
#   time_slicing  both without MPS (the driver time-slices the two contexts)
#   explsched     both under MPS, through libexplsched_intercept.so (enforce) and explsched-kerneld
# and prints the HP mean/p99 latency slowdown and the BE throughput share for each.
# Environment: KERNELD, INTERCEPT (built binaries); GPU_SECONDS (default 20); HP_RATE (default 50).
set -eu
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP: no NVIDIA GPU or driver on this machine"; exit 77
fi
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "SKIP: nvcc not found"; exit 77; }
command -v nvidia-cuda-mps-control >/dev/null 2>&1 || { echo "SKIP: nvidia-cuda-mps-control not found"; exit 77; }
: "${KERNELD:?path to explsched-kerneld}" "${INTERCEPT:?path to libexplsched_intercept.so}"
SECS=${GPU_SECONDS:-20}
RATE=${HP_RATE:-50}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/explsched-gpu.XXXXXX")
mps_pipe="$work/mps-pipe"; mps_log="$work/mps-log"
cleanup() {
    CUDA_MPS_PIPE_DIRECTORY="$mps_pipe" CUDA_MPS_LOG_DIRECTORY="$mps_log" \
        sh -c 'echo quit | nvidia-cuda-mps-control' >/dev/null 2>&1 || true
    [ -n "${kd:-}" ] && kill "$kd" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
"$NVCC" -O2 -o "$work/gpu_load" "$here/gpu_load.cu"
export CUDA_VISIBLE_DEVICES=0

# Arguments of each role; every runner below takes the role as its first argument.
args() {
    if [ "$1" = hp ]; then echo "--role hp --kind compute --seconds $SECS --rate $RATE --kernels 10"
    else echo "--role be --kind memory --seconds $SECS --kernels 20"; fi
}
plain() { "$work/gpu_load" $(args "$1"); }
in_mps() { env CUDA_MPS_PIPE_DIRECTORY="$mps_pipe" CUDA_MPS_LOG_DIRECTORY="$mps_log" "$work/gpu_load" $(args "$1"); }
ours() {
    prio=1; [ "$1" = hp ] && prio=10
    env CUDA_MPS_PIPE_DIRECTORY="$mps_pipe" CUDA_MPS_LOG_DIRECTORY="$mps_log" LD_PRELOAD="$INTERCEPT" \
        EXPLSCHED_KSCHED_MODE=enforce EXPLSCHED_KSCHED_ENDPOINTS="$work/gpu0.shm" \
        EXPLSCHED_KSCHED_PRIORITY=$prio EXPLSCHED_KSCHED_JOB="$1.0" \
        "$work/gpu_load" $(args "$1") 2>>"$work/intercept.err"
}
pair() {  # runs HP and BE together with runner $1; output in $work/hp.out and $work/be.out
    "$1" hp > "$work/hp.out" & p1=$!
    "$1" be > "$work/be.out" & p2=$!
    wait $p1; wait $p2
}
mps_on() {
    mkdir -p "$mps_pipe" "$mps_log"
    CUDA_MPS_PIPE_DIRECTORY="$mps_pipe" CUDA_MPS_LOG_DIRECTORY="$mps_log" nvidia-cuda-mps-control -d
}
mps_off() {
    CUDA_MPS_PIPE_DIRECTORY="$mps_pipe" CUDA_MPS_LOG_DIRECTORY="$mps_log" sh -c 'echo quit | nvidia-cuda-mps-control'
    sleep 1
}

plain hp > "$work/hp.excl"; plain be > "$work/be.excl"
report() {
    name=$1
    awk -v name="$name" '
        FILENAME ~ /hp.excl/ {hm=$5; hp99=$7} FILENAME ~ /be.excl/ {bx=$3}
        FILENAME ~ /hp.out/ {m=$5; p99=$7} FILENAME ~ /be.out/ {b=$3}
        END {printf "%-13s HP mean %+7.1f%%  HP p99 %+7.1f%%  BE %6.1f%% of exclusive\n", name, (m/hm-1)*100, (p99/hp99-1)*100, b/bx*100}
    ' "$work/hp.excl" "$work/be.excl" "$work/hp.out" "$work/be.out"
}
pair plain; report time_slicing
mps_on; pair in_mps; report unmanaged
"$KERNELD" --endpoint "$work/gpu0.shm" --pid-file "$work/kerneld.pid" --stats-file "$work/stats.json" 2>"$work/kerneld.log" &
kd=$!
sleep 1
pair ours; report explsched
kill "$kd"; wait "$kd" || true; kd=
mps_off
cat "$work/stats.json"
