#!/bin/bash
# Benchmark (prints figures; not a test): the cost of one re-ranking round of priority/explsched
# inside a real slurmctld, with a synthetic queue of N pending jobs (default 10,000) behind 16
# running trials, a share of them with reported curves. The plugin logs, per round, the time it
# held slurmctld's job lock; this prints the median and maximum over several rounds, and the same
# for a queue a tenth the size (the ratio shows how the cost scales).
#   testsuite/bench/bench_rerank_slurmctld.sh [N] [TRIALS_WITH_CURVES]   (as root, built tree)
set -u
here=$(cd "$(dirname "$0")" && pwd)
export top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
export top_builddir=${top_builddir:-$top_srcdir}
. "$top_srcdir/testsuite/cluster/cluster.sh"
n=${1:-10000}
curves=${2:-2000}
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 77; }

measure() {  # measure N CURVES -> prints "median max rounds jobs"
    local n=$1 curves=$2 dir
    dir=$(mktemp -d /tmp/explsched-bench.XXXXXX)
    cluster_up "$dir" --nodes 4 --gpus 4 --explschedd --log-level verbose --conf MaxJobCount=100000 \
        --params rerank_period=3,min_run=3600 >/dev/null 2>&1 || { echo "cluster failed" >&2; return 1; }
    (
        . "$dir/env.sh"
        cd "$dir/tmp"
        for i in $(seq 1 16); do sbatch -Q --gres=gpu:1 --explore=run --wrap 'sleep 3000'; done
        # Pending trials in 50 sweeps, plus non-exploratory jobs (one in five).
        for i in $(seq 1 "$n"); do
            if [ $((i % 5)) = 0 ]; then echo "sbatch -Q --gres=gpu:1 --wrap true"
            else echo "sbatch -Q --gres=gpu:1 --explore=sweep$((i % 50)) --wrap true"; fi
        done | xargs -P 4 -I{} sh -c '{}'
        # Curves for some pending trials, as if they had run before (root may report for any job).
        squeue -h -t PENDING -o '%i' | head -n "$curves" | /usr/bin/python3 -c '
import sys, os
sys.path.insert(0, os.path.join(sys.argv[1], "contrib", "python"))
import explsched
r = explsched.Reporter()
for k, line in enumerate(sys.stdin):
    job = int(line)
    a = 0.1 + (k % 17) / 40.0
    for s in range(50, 450, 50):
        r.report(s, a + 2.0 * s ** -0.5, throughput=10.0, job=job)
' "$top_srcdir" || echo "reporting failed" >&2
        # Trials the engine found hopeless are held and leave the ranking: top the queue up with
        # new trials (no curve yet) until N jobs are ranked.
        sleep 7
        ranked=$(grep "priority/explsched: ranked" "$dir/log/slurmctld.log" | tail -n 1 \
            | sed 's/.*ranked \([0-9]*\) jobs.*/\1/')
        for i in $(seq 1 $((n + 16 - ${ranked:-0}))); do
            echo "sbatch -Q --gres=gpu:1 --explore=sweep$((i % 50)) --wrap true"
        done | xargs -P 4 -I{} sh -c '{}'
        sleep 45
        grep "priority/explsched: ranked" "$dir/log/slurmctld.log" | tail -n 12 \
            | sed 's/.*ranked \([0-9]*\) jobs.* in \([0-9.]*\) ms under the job lock (\([0-9.]*\) ms CPU.*/\1 \2 \3/' >"$dir/rounds"
    )
    # median and max wall time, median CPU time, rounds, jobs ranked
    sort -k2 -g "$dir/rounds" | awk '{ms[NR] = $2; jobs = $1} END {
        printf "%.2f %.2f ", ms[int((NR + 1) / 2)], ms[NR] }'
    sort -k3 -g "$dir/rounds" | awk '{cpu[NR] = $3; jobs = $1} END {
        printf "%.2f %d %d\n", cpu[int((NR + 1) / 2)], NR, jobs }'
    cluster_down "$dir" >/dev/null 2>&1
    rm -rf "$dir"
}

echo "re-ranking inside slurmctld (priority/explsched), job lock held per round:"
small=$(measure $((n / 10)) $((curves / 10)))
big=$(measure "$n" "$curves")
read -r sm sx sc sr sj <<<"$small"
read -r bm bx bc br bj <<<"$big"
printf '  %6d jobs: median %7.2f ms, max %7.2f ms (median CPU %.2f ms) over %d rounds\n' "$sj" "$sm" "$sx" "$sc" "$sr"
printf '  %6d jobs: median %7.2f ms, max %7.2f ms (median CPU %.2f ms) over %d rounds\n' "$bj" "$bm" "$bx" "$bc" "$br"
awk -v a="$bm" -v b="$sm" -v ja="$bj" -v jb="$sj" 'BEGIN {
    printf "  cost ratio %.1fx for %.1fx the jobs; target: <= 10 ms per round at 10,000 jobs\n", a / b, ja / jb }'
