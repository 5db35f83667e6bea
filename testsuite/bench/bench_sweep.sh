#!/bin/bash
# Benchmark (prints figures; not a test): a hyperparameter sweep of TRIALS trials on a local
# cluster of NODES x GPUS fake GPUs (default 2,000 trials on 128 x 8 = 1,024 GPUs), with
# priority/explsched and preempt/explsched in slurmctld and explschedd collecting the curves.
# The trials are SWEEPS job arrays submitted with --explore (one GPU each); each runs
# sweep_trial.sh, a synthetic trainer that reports POINTS points of a + b * step^-c (a, b, c drawn
# per task), one every EVERY seconds, through `explsched report`. ExplSched cancels the trials
# that cannot beat their sweep's best (hopeless_action=cancel); min_run is an hour, so nothing is
# preempted and the figures are about stopping. Runs until the queue is empty or LIMIT seconds
# have passed, then prints: cluster start-up time and memory, trials completed / stopped / left,
# GPU-hours used against a sweep that runs every trial to its end, whether the best trial of each
# sweep (known from the seeds) was kept, report throughput, the re-rank's lock-hold per round
# during the sweep, and sdiag's scheduler cycles.
#   bench_sweep.sh [--nodes N] [--gpus M] [--trials T] [--sweeps S] [--points P] [--stride K]
#                  [--every SECONDS] [--limit SECONDS] [--keep]       (as root, in a built tree)
# Exit status: 0 when it ran (whatever the figures), 1 when the cluster or the sweep failed,
# 77 when something it needs is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
export top_builddir=${top_builddir:-$top_srcdir}
. "$top_srcdir/testsuite/cluster/cluster.sh"

nodes=128 gpus=8 trials=2000 sweeps=20 points=20 stride=50 every=10 limit=900 keep=no
while [ $# -gt 0 ]; do
    case $1 in
        --nodes) nodes=$2; shift ;;
        --gpus) gpus=$2; shift ;;
        --trials) trials=$2; shift ;;
        --sweeps) sweeps=$2; shift ;;
        --points) points=$2; shift ;;
        --stride) stride=$2; shift ;;
        --every) every=$2; shift ;;
        --limit) limit=$2; shift ;;
        --keep) keep=yes ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 77; }
cli=$top_builddir/src/cli/.libs/explsched
[ -x "$cli" ] || cli=$top_builddir/src/cli/explsched
[ -x "$cli" ] && [ -x "$top_builddir/src/daemon/explschedd" ] \
    || { echo "explsched and explschedd not built" >&2; exit 77; }
[ $((trials % sweeps)) = 0 ] || { echo "--trials must be a multiple of --sweeps" >&2; exit 2; }
per=$((trials / sweeps))
# The trainer calls the client binary itself (the libtool wrapper is a shell script: one more bash
# per point), with the library it links.
export EXPLSCHED_CLI=$cli
export LD_LIBRARY_PATH=$top_builddir/src/client/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

dir=$(mktemp -d /tmp/explsched-sweep.XXXXXX)
finish() {
    cluster_down "$dir" >/dev/null 2>&1
    if [ $keep = yes ]; then echo "kept: $dir"; else rm -rf "$dir"; fi
}
trap finish EXIT

mem_used_mib() { awk '/^MemTotal:/ { t = $2 } /^MemAvailable:/ { a = $2 } END { printf "%d", (t - a) / 1024 }' /proc/meminfo; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

mem0=$(mem_used_mib)
t0=$(now)
# When hundreds of hopeless trials are cancelled in one round, this host plays 128 nodes' worth of
# job ends at once, and a step's end may wait on a swamped slurmctld for minutes: past
# UnkillableStepTimeout (60 s by default) Slurm drains the node ("Kill task failed").
# One user sends every report here (the trials are root's): explschedd's per-user limits are for a
# cluster of many users, so they are raised to what a thousand trials send.
cluster_up "$dir" --nodes "$nodes" --gpus "$gpus" --cpus 16 --explschedd --log-level verbose \
    --slurmd-log-level error --shared-slurmd-log --proctrack proctrack/pgid \
    --explschedd-args "--limit user_rate=20000 --limit user_burst=20000 --limit max_conns_per_user=4096" \
    --params "rerank_period=2,min_run=3600,hopeless_action=cancel" \
    --conf "MaxJobCount=20000" --conf "UnkillableStepTimeout=600" >"$dir.up.log" 2>&1 \
    || { cat "$dir.up.log" >&2; rm -f "$dir.up.log"; exit 1; }
rm -f "$dir.up.log"
t_up=$(secs "$t0" "$(now)")
. "$dir/env.sh"
mem_up=$(( $(mem_used_mib) - mem0 ))
cost_up=$(cluster_cost "$dir")
mkdir -p "$dir/out" "$dir/ckpt"
cd "$dir/tmp" || exit 1

echo "sweep: $trials trials ($sweeps job arrays of $per) on $nodes nodes x $gpus GPUs; each trial $points points, one every ${every}s"
echo "cluster up in ${t_up} s; memory in use +${mem_up} MiB"
echo "$cost_up" | sed 's/^/  /'

t1=$(now)
for ((s = 0; s < sweeps; s++)); do
    sbatch --parsable --array=0-$((per - 1)) --gres=gpu:1 -J "sweep$s" --explore="sweep$s" \
        --explore-metric=loss:min --explore-max-steps=$((points * stride)) -o "$dir/out/%A_%a.out" \
        "$here/sweep_trial.sh" "$s" "$points" "$stride" "$every" "$dir/ckpt" >>"$dir/arrays" \
        || { echo "sbatch failed" >&2; exit 1; }
done
echo "submitted in $(secs "$t1" "$(now)") s"

# Progress every 10 s: running, pending, finished; peak memory.
peak_mem=0 peak_running=0 t_full=""
deadline=$((SECONDS + limit))
while :; do
    # squeue may time out when slurmctld is swamped: that is no empty queue
    if ! squeue -h -r -o '%T' >"$dir/queue" 2>"$dir/queue.err"; then
        printf '  %6.0f s: squeue failed: %s\n' "$(secs "$t1" "$(now)")" "$(head -1 "$dir/queue.err")"
        [ $SECONDS -ge $deadline ] && { echo "  time limit (${limit} s) reached"; break; }
        sleep 10
        continue
    fi
    read -r run pend < <(awk '$1 == "RUNNING" { r++ } $1 == "PENDING" { p++ } END { print r + 0, p + 0 }' "$dir/queue")
    m=$(( $(mem_used_mib) - mem0 ))
    [ "$m" -gt "$peak_mem" ] && peak_mem=$m
    [ "$run" -gt "$peak_running" ] && peak_running=$run
    [ -z "$t_full" ] && [ "$run" -ge $((nodes * gpus)) ] && t_full=$(secs "$t1" "$(now)")
    printf '  %6.0f s: %4d running, %4d pending, memory +%d MiB\n' "$(secs "$t1" "$(now)")" "$run" "$pend" "$m"
    [ $((run + pend)) = 0 ] && break
    [ $SECONDS -ge $deadline ] && { echo "  time limit (${limit} s) reached"; break; }
    sleep 10
done
t_sweep=$(secs "$t1" "$(now)")
sdiag >"$dir/sdiag.txt" 2>&1

# Everything after the fact, from slurmctld's records (MinJobAge keeps them), the trials' files,
# the report store and slurmctld's log.
for _ in 1 2 3 4 5; do scontrol show job -o >"$dir/jobs.txt" 2>/dev/null && break; sleep 5; done
/usr/bin/python3 - "$dir" "$trials" "$sweeps" "$points" "$stride" "$every" "$t_sweep" "$nodes" "$gpus" <<'EOF'
import glob, os, re, sqlite3, statistics, subprocess, sys
d, trials, sweeps, points, stride, every, wall, nodes, gpus = sys.argv[1:]
trials, sweeps, points, stride, nodes, gpus = map(int, (trials, sweeps, points, stride, nodes, gpus))
every, wall = float(every), float(wall)

def secs(t):  # [D-]HH:MM:SS
    days = 0
    if "-" in t:
        days, t = t.split("-")
    parts = [int(x) for x in t.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    return int(days) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]

jobs = {}
for line in open(os.path.join(d, "jobs.txt")):
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    if "ArrayJobId" not in f or "ArrayTaskId" not in f or not f["ArrayTaskId"].isdigit():
        continue
    jobs[(f["ArrayJobId"], int(f["ArrayTaskId"]))] = f
arrays = [l.strip().split(";")[0] for l in open(os.path.join(d, "arrays"))]
states = {}
gpu_s = 0
for f in jobs.values():
    states[f["JobState"]] = states.get(f["JobState"], 0) + 1
    gpu_s += secs(f.get("RunTime", "0:0:0"))  # one GPU each
done = states.get("COMPLETED", 0)
stopped = states.get("CANCELLED", 0)
left = trials - done - stopped
full = trials * points * every
print(f"sweep wall time {wall:.0f} s; trials: {done} completed, {stopped} stopped as hopeless, "
      f"{left} not finished ({', '.join(f'{v} {k.lower()}' for k, v in sorted(states.items()))})")
print(f"GPU time used {gpu_s / 3600:.1f} GPU-hours; every trial to its end would take {full / 3600:.1f} "
      f"GPU-hours at {every:g} s a point ({100 * gpu_s / full:.0f}%)")

# The final loss of every trial, from the same seeds as sweep_trial.sh (same awk): was each sweep's
# best trial kept (completed), and how good is the best completed trial of each sweep?
prog = ('{ srand($1 * 100003 + $2); a = 0.05 + rand() * 0.9; b = 0.5 + rand() * 1.5; c = 0.3 + rand() * 0.5;'
        ' printf "%d %d %.6f\\n", $1, $2, a + b * (' + str(points * stride) + ') ^ -c }')
inp = "".join(f"{s} {t}\n" for s in range(sweeps) for t in range(trials // sweeps))
final = {}
for line in subprocess.run(["awk", prog], input=inp, capture_output=True, text=True).stdout.splitlines():
    s, t, v = line.split()
    final[(int(s), int(t))] = float(v)
kept_best = 0
regret = []
for s, arr in enumerate(arrays):
    per = trials // sweeps
    best_t = min(range(per), key=lambda t: final[(s, t)])
    if jobs.get((arr, best_t), {}).get("JobState") == "COMPLETED":
        kept_best += 1
    completed = [final[(s, t)] for t in range(per) if jobs.get((arr, t), {}).get("JobState") == "COMPLETED"]
    if completed:
        regret.append(min(completed) - final[(s, best_t)])
print(f"best trial of its sweep completed in {kept_best} of {sweeps} sweeps"
      + (f"; best completed vs true best final loss: mean gap {statistics.mean(regret):.4f}, max {max(regret):.4f}"
         if regret else ""))

db = os.path.join(d, "state", "reports.db")
try:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    tables = [r[0] for r in con.execute("select name from sqlite_master where type='table'")]
    counts = {t: con.execute(f"select count(*) from {t}").fetchone()[0] for t in tables}
    n = max(counts.values()) if counts else 0
    print(f"reports stored: {n} ({n / wall:.0f}/s over the sweep)")
except Exception as e:
    print(f"reports stored: unknown ({e})")
failed = 0
for out in glob.glob(os.path.join(d, "out", "*.out")):
    failed += sum(1 for l in open(out, errors="replace") if "not stored" in l)
print(f"points a trial could not store: {failed}")

pat = re.compile(r"ranked (\d+) jobs \((\d+) trials, (\d+) refitted\) in ([\d.]+) ms under the job lock "
                 r"\(([\d.]+) ms CPU; walk ([\d.]+), write-back ([\d.]+); engine ([\d.]+) without locks\)")
rows = [m.groups() for m in map(pat.search, open(os.path.join(d, "log", "slurmctld.log"), errors="replace")) if m]
if rows:
    cols = list(zip(*[[float(x) for x in r] for r in rows]))
    print(f"re-rank rounds: {len(rows)}, up to {int(max(cols[0]))} jobs; under the locks p50 "
          f"{statistics.median(cols[3]):.2f} / max {max(cols[3]):.2f} ms (CPU p50 {statistics.median(cols[4]):.2f}); "
          f"engine without locks p50 {statistics.median(cols[7]):.0f} / max {max(cols[7]):.0f} ms")
sd = open(os.path.join(d, "sdiag.txt"), errors="replace").read()
def field(section, name):
    m = re.search(section + r".*?" + name + r":\s*(\d+)", sd, re.S)
    return int(m.group(1)) if m else None
mc, bc = field("Main schedule statistics", "Mean cycle"), field("Backfilling stats", "Mean cycle")
if mc is not None:
    print(f"sdiag: main scheduler mean cycle {mc / 1000:.2f} ms, backfill mean cycle {(bc or 0) / 1000:.2f} ms; "
          f"jobs started {field('', 'Jobs started')}, completed {field('', 'Jobs completed')}")
EOF
echo "peak: $peak_running trials running at once$([ -n "$t_full" ] && echo ", all $((nodes * gpus)) GPUs busy after ${t_full} s"); memory in use +${peak_mem} MiB"
cluster_cost "$dir" | sed 's/^/  at the end: /'
