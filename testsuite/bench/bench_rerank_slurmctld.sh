#!/bin/bash
# Benchmark (prints figures; not a test): the cost of one re-ranking round of priority/explsched
# inside a real slurmctld, with a queue of N jobs (default 10,000: a running trial per GPU and N pending
# jobs, four in five of them trials in 50 sweeps) and R stored reports (default 1,000,000) spread
# over the trials. The plugin logs, per round, how long it held slurmctld's locks (the walk that
# copies the job list under read locks, the write-back under the job write lock) and how long the
# engine ran on the copy without locks; this prints the median and maximum of each over the
# rounds after the plugin caught up with the store, for N/R and for a baseline a tenth the size
# (N/10 jobs, R/10 reports) in the same run. Next to it, on the same queue, slurmctld's own
# scheduling cycles from `sdiag` (statistics reset once the queue is full, read before teardown):
# the main scheduler's and backfill's mean cycle, and the ratio of our round (steady p50 and max
# under the locks) to the main scheduler's mean cycle. Target: <= 0.25x that mean cycle.
#
# The cluster is 4 nodes x 4 GPUs unless BENCH_NODES / BENCH_GPUS say otherwise (e.g. 128 and 8:
# 1,024 GPUs); one running trial fills every GPU, so the N jobs stay pending. BENCH_BASELINE=no
# skips the baseline.
#
# The store is filled directly through ReportStore (bench_fill_store, large transactions), not
# through explschedd: explschedd's per-uid rate limits and per-job point caps would refuse a
# million reports at this rate, which is their purpose; what is measured here is slurmctld's side.
# Trials are set to hopeless_action=none so that none leaves the queue while it is measured.
#   [BENCH_NODES=128 BENCH_GPUS=8] testsuite/bench/bench_rerank_slurmctld.sh [N] [R] [ROUNDS]
#   (as root, in a built tree)
set -u
here=$(cd "$(dirname "$0")" && pwd)
export top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
export top_builddir=${top_builddir:-$top_srcdir}
. "$top_srcdir/testsuite/cluster/cluster.sh"
n=${1:-10000}
reports=${2:-1000000}
rounds=${3:-12}
bench_nodes=${BENCH_NODES:-4}
bench_gpus=${BENCH_GPUS:-4}
# BENCH_MODE=site_factor: priority/multifactor + site_factor/explsched (PriorityCalcPeriod=1
# minute, the shortest: multifactor's decay thread stores our site factors once a minute under
# its job write lock; BENCH_STORES of those after the fill are waited for, default 3). With
# accounting (MariaDB + slurmdbd): multifactor starts its decay thread, and so calls
# site_factor_p_update, only with slurmdbd.
bench_mode=${BENCH_MODE:-priority}
# BENCH_PREEMPT=preempt/none keeps the queue still: on the 1,024-GPU cluster preempt/explsched
# requeued running trials during the measurement (min_run=3600 notwithstanding), and the requeues
# and the pending jobs that started in their place were what slurmctld was busy with.
bench_preempt=${BENCH_PREEMPT:-preempt/explsched}
bench_stores=${BENCH_STORES:-3}
fill=$top_builddir/testsuite/bench/bench_fill_store
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 77; }
[ -x "$fill" ] || { echo "bench_fill_store not built (make -C testsuite/bench)" >&2; exit 77; }

# The rounds since the store was filled, in three phases: reading it (feed_chunk rows a round,
# the plugin says it is catching up), refitting the curves (rounds that refit any curve, up to
# max_refits a round) and ROUNDS steady rounds from the first round after the fill that refits
# none. The plugin's "caught up" line does not mark the phases: it can come before the fill lands.
# Per phase the median and maximum of the time under the locks (walk, write-back), their CPU time
# and the engine's time without locks. With a third argument "count": only the number of steady
# rounds so far.
summarise() {
    /usr/bin/python3 - "$@" <<'EOF'
import re, statistics, sys
log, want = sys.argv[1], int(sys.argv[2])
count_only = len(sys.argv) > 3 and sys.argv[3] == "count"
sdiag = sys.argv[3] if len(sys.argv) > 3 and not count_only else None
pat = re.compile(r"ranked (\d+) jobs \((\d+) trials, (\d+) refitted\) in ([\d.]+) ms under the job lock "
                 r"\(([\d.]+) ms CPU; walk ([\d.]+), write-back ([\d.]+); engine ([\d.]+) without locks\); "
                 r"(\d+) new reports( \(catching up with the store\))?"
                 r"(?:.*?; longest hold ([\d.]+) ms of (\d+))?")
phases = {"reading": [], "refitting": [], "steady": []}
filled = steady = False
for line in open(log, errors="replace"):
    m = pat.search(line)
    if not m:
        continue
    # 0 jobs, 1 trials, 2 refitted, 3 under locks, 4 CPU, 5 walk, 6 write-back, 7 engine, 8 reports,
    # 9 the longest single hold (the whole time under the locks for a plugin that did not chunk)
    row = [float(x) for x in m.groups()[:9]] + [float(m.group(11) or m.group(4))]
    filled = filled or row[8] > 0
    if not filled:
        continue
    if m.group(10):
        phase = "reading"
    elif not steady and row[2] > 0:
        phase = "refitting"
    else:
        steady, phase = True, "steady"
    if phase != "steady" or len(phases[phase]) < want:
        phases[phase].append(row)
# site_factor mode: multifactor's callback storing the site factors, after the fill
stores = []
store_pat = re.compile(r"stored (\d+) site factors in ([\d.]+) ms \(([\d.]+) ms CPU\) under multifactor's job lock")
filled_store = False
for line in open(log, errors="replace"):
    m = pat.search(line)
    if m and int(m.group(9)) > 0:
        filled_store = True
    m = store_pat.search(line)
    if m and filled_store and int(m.group(1)) > 0:
        stores.append([float(x) for x in m.groups()])
if count_only:
    print(len(phases["steady"]), len(stores))
    sys.exit(0)
for phase, rows in phases.items():
    if not rows:
        print(f"{phase:9} none")
        continue
    cols = list(zip(*rows))
    med = lambda i: statistics.median(cols[i])
    top = lambda i: max(cols[i])
    print(f"{phase:9} {len(rows):3d} rounds, {int(max(cols[0]))} jobs ({int(max(cols[1]))} trials): under locks "
          f"p50 {med(3):.2f} / max {top(3):.2f} ms (walk {med(5):.2f} / {top(5):.2f}, write-back "
          f"{med(6):.2f} / {top(6):.2f}; CPU p50 {med(4):.2f} / max {top(4):.2f}; longest single hold p50 "
          f"{med(9):.2f} / max {top(9):.2f}); engine without locks p50 {med(7):.0f} / "
          f"max {top(7):.0f} ms; {int(sum(cols[8]))} reports read, refits p50 {int(med(2))}")
if stores:
    cols = list(zip(*stores))
    print(f"site      {len(stores)} site_factor_update calls after the fill, up to {int(max(cols[0]))} jobs: under "
          f"multifactor's job write lock p50 {statistics.median(cols[1]):.2f} / max {max(cols[1]):.2f} ms "
          f"(CPU p50 {statistics.median(cols[2]):.2f} / max {max(cols[2]):.2f})")
if sdiag:
    text = open(sdiag, errors="replace").read()
    def stat(section, name):
        m = re.search(re.escape(section) + r".*?" + re.escape(name) + r":\s*(\d+)", text, re.S)
        return int(m.group(1)) if m else None
    main_mean, main_cycles = stat("Main schedule statistics", "Mean cycle"), stat("Main schedule statistics", "Total cycles")
    main_max, main_depth = stat("Main schedule statistics", "Max cycle"), stat("Main schedule statistics", "Mean depth cycle")
    bf_mean, bf_cycles = stat("Backfilling stats", "Mean cycle"), stat("Backfilling stats", "Total cycles")
    bf_depth = stat("Backfilling stats", "Depth Mean")
    if main_mean is None:
        print("sdiag     none (" + text.strip().splitlines()[0][:100] + ")" if text.strip() else "sdiag     none")
    else:
        print(f"sdiag     main scheduler: mean cycle {main_mean / 1000:.2f} ms, max {main_max / 1000:.2f} ms over "
              f"{main_cycles} cycles (mean depth {main_depth}); backfill: mean cycle "
              f"{(bf_mean or 0) / 1000:.2f} ms over {bf_cycles} cycles (mean depth {bf_depth})")
        rows = phases["steady"]
        if rows and main_mean > 0:
            cols = list(zip(*rows))
            p50, top, cpu = statistics.median(cols[3]), max(cols[3]), statistics.median(cols[4])
            mm = main_mean / 1000
            print(f"ratio     ours / main-scheduler mean cycle: p50 {p50 / mm:.2f}x, max {top / mm:.2f}x, "
                  f"CPU p50 {cpu / mm:.2f}x (the round's holds summed)")
            lp50, ltop = statistics.median(cols[9]), max(cols[9])
            print(f"ratio     longest single hold (what a waiting RPC waits) / main mean cycle: p50 "
                  f"{lp50 / mm:.2f}x, max {ltop / mm:.2f}x (target <= 0.25x)")
            if stores:
                sp50, stop = statistics.median(list(zip(*stores))[1]), max(list(zip(*stores))[1])
                print(f"ratio     site factors stored in multifactor's callback / main mean cycle: p50 "
                      f"{sp50 / mm:.2f}x, max {stop / mm:.2f}x (a separate hold, once a PriorityCalcPeriod)")
EOF
}

# measure N REPORTS -> one line per phase
measure() {
    local n=$1 reports=$2 dir
    dir=$(mktemp -d /tmp/explsched-bench.XXXXXX)
    local mode_args=()
    [ "$bench_mode" = site_factor ] && mode_args=(--site-factor --accounting --conf PriorityCalcPeriod=1)
    cluster_up "$dir" "${mode_args[@]}" --nodes "$bench_nodes" --gpus "$bench_gpus" --log-level verbose \
        --conf MaxJobCount=100000 --conf MaxArraySize=100000 \
        --slurmd-log-level error --shared-slurmd-log --proctrack proctrack/pgid --preempt "$bench_preempt" \
        --params "rerank_period=3,min_run=3600,hopeless_action=none,report_db=$dir/state/reports.db" \
        >/dev/null 2>&1 || { echo "cluster failed" >&2; rm -rf "$dir"; return 1; }
    (
        . "$dir/env.sh"
        cd "$dir/tmp"
        # one running trial per GPU (an array: 1,024 of them submit at once)
        sbatch -Q -J trial --array=1-$((bench_nodes * bench_gpus)) --gres=gpu:1 --explore=run -o /dev/null \
            --wrap 'sleep 3000'
        local t=$((SECONDS + 120))
        while [ "$(squeue -h -t R -r -o %i | wc -l)" -lt $((bench_nodes * bench_gpus)) ] && [ $SECONDS -lt $t ]; do
            sleep 1
        done
        for i in $(seq 1 "$n"); do
            if [ $((i % 5)) = 0 ]; then echo "sbatch -Q -J plain --gres=gpu:1 --wrap true"
            else echo "sbatch -Q -J trial --gres=gpu:1 --explore=sweep$((i % 50)) --wrap true"; fi
        done | xargs -P 4 -I{} sh -c '{}'
        # Every trial instance (id, submit time, owner) -> the store, in one go.
        squeue -h -r -n trial -o '%A %V %U' | /usr/bin/python3 -c '
import sys, time
for line in sys.stdin:
    job, submit, uid = line.split()
    print(job, int(time.mktime(time.strptime(submit, "%Y-%m-%dT%H:%M:%S"))), uid)
' >"$dir/trials"
        "$fill" "$dir/state/reports.db" "$reports" <"$dir/trials" >&2 || echo "filling the store failed" >&2
        # slurmctld's own statistics from here: the queue is full (those since the start, the queue
        # filling up, are printed too: cycles over a shorter queue make their mean lower)
        sdiag >"$dir/sdiag-filling.txt" 2>&1
        sdiag -r >/dev/null 2>&1
        # Wait for the reading and refitting rounds and then ROUNDS steady ones.
        local deadline=$((SECONDS + 900))
        while [ $SECONDS -lt $deadline ]; do
            read -r got stored < <(summarise "$dir/log/slurmctld.log" "$rounds" count)
            [ "$got" -ge "$rounds" ] && { [ "$bench_mode" != site_factor ] || [ "$stored" -ge "$bench_stores" ]; } && break
            sleep 3
        done
        sdiag >"$dir/sdiag.txt" 2>&1
    )
    summarise "$dir/log/slurmctld.log" "$rounds" "$dir/sdiag.txt"
    sed -n '/Main schedule statistics/,/Last queue length/p' "$dir/sdiag-filling.txt" \
        | awk -F: '/Mean cycle/ { m = $2 } /Total cycles/ { c = $2 } /Mean depth cycle/ { d = $2 }
                   END { if (m != "") printf "sdiag     (since start, the queue filling up: main mean cycle %.2f ms over %d cycles, mean depth %d)\n", m / 1000, c, d }'
    cluster_down "$dir" >/dev/null 2>&1
    rm -rf "$dir"
}

echo "re-ranking inside slurmctld ($([ "$bench_mode" = site_factor ] && echo "priority/multifactor + site_factor/explsched" || echo priority/explsched)), per round, on $bench_nodes nodes x $bench_gpus GPUs:"
if [ "${BENCH_BASELINE:-yes}" != no ]; then
    echo "baseline: $((n / 10)) jobs, $((reports / 10)) stored reports"
    measure $((n / 10)) $((reports / 10)) | sed 's/^/  /'
fi
echo "measured: $n jobs, $reports stored reports"
measure "$n" "$reports" | sed 's/^/  /'
echo "target: <= 0.25x slurmctld's main-scheduler mean cycle on the same queue (about 4 ms at 10,000 jobs)"
