# Shared by the integration tests: locations, skip rules, and the local cluster harness.
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir

skip() { echo "SKIP: $*"; exit 77; }

# Tests that bring up a cluster need root, Slurm, munge, and a non-sanitized build.
require_cluster() {
    [ "$(id -u)" = 0 ] || skip "needs root to run munged, slurmctld and slurmd"
    for p in slurmctld slurmd munged sbatch scontrol; do
        command -v "$p" >/dev/null || [ -x "/usr/sbin/$p" ] || skip "$p is not installed"
    done
    [ -f "$top_builddir/src/plugins/priority/explsched/.libs/priority_explsched.so" ] \
        || skip "plugins not built (a --enable-sanitizers build does not build them)"
}

. "$top_srcdir/testsuite/cluster/cluster.sh"

# Brings a cluster up in a fresh directory and takes it down when the test exits (kept for
# post-mortem in $CLUSTER_DIR if the test failed and KEEP_CLUSTER=1).
start_cluster() {
    CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/explsched-test.XXXXXX")
    trap 'rc=$?; declare -F on_exit_hook >/dev/null && on_exit_hook; cluster_down "$CLUSTER_DIR" >/dev/null 2>&1; { [ $rc = 0 ] || [ "${KEEP_CLUSTER:-0}" != 1 ]; } && rm -rf "$CLUSTER_DIR"; exit $rc' EXIT
    # EXPLSCHED_TEST_SITE_FACTOR=1: the same test under priority/multifactor + site_factor/explsched
    # (the *_site.sh tests).
    local mode=()
    [ "${EXPLSCHED_TEST_SITE_FACTOR:-0}" = 1 ] && mode=(--site-factor)
    cluster_up "$CLUSTER_DIR" "${mode[@]}" "$@" || { dump_logs; fail "cluster did not come up"; }
    . "$CLUSTER_DIR/env.sh"
    cd "$CLUSTER_DIR/tmp" || exit 1
}

dump_logs() {
    [ -n "${CLUSTER_DIR:-}" ] || return 0
    for f in "$CLUSTER_DIR"/log/slurmctld.log "$CLUSTER_DIR"/log/slurmd.n1.log; do
        [ -f "$f" ] && { echo "--- tail of $f"; tail -n 30 "$f"; }
    done
    # the other nodes' slurmd logs, shorter (the first 8 nodes)
    local n
    for n in 2 3 4 5 6 7 8; do
        f=$CLUSTER_DIR/log/slurmd.n$n.log
        [ -f "$f" ] && { echo "--- tail of $f"; tail -n 8 "$f"; }
    done
}

fail() { echo "FAIL: $*"; dump_logs; exit 1; }
pass() { echo "ok: $*"; }

# wait_until TIMEOUT_SECONDS 'shell condition' [what]
wait_until() {
    local timeout=$1 cond=$2 what=${3:-$2}
    local deadline=$((SECONDS + timeout))
    while [ $SECONDS -lt $deadline ]; do
        eval "$cond" && return 0
        sleep 0.3
    done
    fail "timed out after ${timeout}s waiting for: $what"
}

job_field() {  # job_field JOBID FIELD  (from scontrol show job -o)
    scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}

job_state() { squeue -h -j "$1" -o %T 2>/dev/null || true; }

jobs_in_state() {  # count of jobs in a state
    squeue -h -t "$1" -o %i 2>/dev/null | wc -l
}

submit() {  # submit sbatch-args...  -> prints the job id
    sbatch --parsable "$@" | cut -d';' -f1
}

# write_contention_model [FILE]: the test-side "model" of the placement tests (default model.sh,
# executable): STEPS steps of 0.1 s, 0.3 s while a job whose name is in HURT_BY shares one of its
# nodes (each job marks its nodes under occ/); appends "NAME NODES slow_steps=N" to result.NAME.
write_contention_model() {
    local f=${1:-model.sh}
    cat >"$f" <<'SH'
#!/bin/bash
nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
for n in $nodes; do mkdir -p occ/$n; touch occ/$n/$SLURM_JOB_NAME.$SLURM_JOB_ID; done
slow=0
for s in $(seq 1 "${STEPS:-20}"); do
    shared=no
    for n in $nodes; do for h in ${HURT_BY:-}; do ls occ/$n/$h.* >/dev/null 2>&1 && shared=yes; done; done
    if [ $shared = yes ]; then sleep 0.3; slow=$((slow + 1)); else sleep 0.1; fi
done
echo "$SLURM_JOB_NAME $(echo $nodes) slow_steps=$slow" >>"result.$SLURM_JOB_NAME"
for n in $nodes; do rm -f occ/$n/$SLURM_JOB_NAME.$SLURM_JOB_ID; done
SH
    chmod +x "$f"
}

# new_net_table "A B ..." "ROW_A" "ROW_B" ...: a DeepShare-format pair table in a temp dir removed
# on exit (NET_TABLE names it): isolated_thp.csv gives every type ("MODEL,4,2": 4 GPUs on 2 nodes)
# 100 samples/s; shared_thp_ratio.csv's row for a type ("1.0 0.33 ...", in the types' order) is its
# throughput beside each type, as a fraction of alone.
new_net_table() {
    local types=($1) t i=0
    shift
    NET_TABLE=$(mktemp -d "${TMPDIR:-/tmp}/explsched-net.XXXXXX")
    if declare -F on_exit_hook >/dev/null; then  # keep the test's own hook (hostile/: its users)
        eval "$(declare -f on_exit_hook | sed '1s/on_exit_hook/net_table_prev_hook/')"
        on_exit_hook() { net_table_prev_hook; rm -rf "$NET_TABLE"; }
    else
        on_exit_hook() { rm -rf "$NET_TABLE"; }
    fi
    { echo ",isol_thp"; for t in "${types[@]}"; do echo "\"$t,4,2\",100"; done; } >"$NET_TABLE/isolated_thp.csv"
    {
        for t in "${types[@]}"; do printf ',"%s,4,2"' "$t"; done
        echo
        for t in "${types[@]}"; do
            [ $# -gt $i ] || { echo "new_net_table: no row for $t" >&2; return 1; }
            echo "\"$t,4,2\",$(echo "${@:$((i + 1)):1}" | tr ' ' ',')"
            i=$((i + 1))
        done
    } >"$NET_TABLE/shared_thp_ratio.csv"
}
