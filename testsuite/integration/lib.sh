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
    # the message may name the state at the time: '\$(comment $job)' is expanded now
    what=$(eval "printf '%s' \"$what\"" 2>/dev/null) || what=${3:-$2}
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

# The simulator tests on the Pollux workload: sets sim, cli and data, or skips.
require_sim_pollux() {
    sim=$top_builddir/src/sim/explsched-sim
    cli=$top_builddir/src/cli/explsched
    data=$top_srcdir/../shared/data
    { [ -x "$sim" ] && [ -x "$cli" ]; } || skip "explsched-sim or explsched not built"
    [ -r "$data/traces/pollux-workloads/workload-1.csv" ] || skip "../shared/data is missing"
}

# sim_pollux SEED ARGS...: explsched alone on the Pollux workload (64 GPUs), JSON summary
sim_pollux() {
    local seed=$1
    shift
    "$sim" --trace "$data/traces/pollux-workloads/workload-1.csv" --curves "$data/curves" --gpus 64 \
        --seeds "$seed" --policies explsched --json --quiet "$@"
}

# sim_pollux_with SEED PARAMS [--params MORE] ARGS...: sim_pollux with the settings PARAMS, and
# MORE after them (explsched-sim takes one --params: the last one given replaces the others).
sim_pollux_with() {
    local seed=$1 params=$2
    shift 2
    if [ "${1:-}" = --params ]; then
        params+=,$2
        shift 2
    fi
    sim_pollux "$seed" --params "$params" "$@"
}

# sim_says [-v] CMD RECORD JOB PATTERN: `explsched CMD --sim RECORD JOB` prints a line matching
# PATTERN (with -v: prints none); sets fail=1, saying so, where not.
sim_says() {
    local want=0 out
    if [ "$1" = -v ]; then
        want=1
        shift
    fi
    out=$("$cli" "$1" --sim "$2" "$3" 2>&1)
    grep -q "$4" <<<"$out"
    if [ $? -ne $want ]; then
        echo "FAIL: explsched $1 $3 ($(basename "$2")) $([ $want = 0 ] && echo 'does not say' || echo says) '$4': $out"
        fail=1
    fi
}

# sim_tmp: a temporary directory in $tmp, removed when the test exits.
sim_tmp() {
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
}

# refuses_params RUN NAME=VALUE...: each setting, passed to RUN (a function running explsched-sim)
# as --params, must be refused with an error naming it; sets fail=1 for each that is not.
refuses_params() {
    local run=$1 bad out
    shift
    for bad in "$@"; do
        if out=$("$run" --params "$bad" 2>&1); then
            echo "FAIL: --params $bad accepted"
            fail=1
        elif ! grep -q "setting '${bad%%=*}'" <<<"$out"; then
            echo "FAIL: --params $bad: the error does not name '${bad%%=*}': $out"
            fail=1
        fi
    done
}

# The placement tests' views of a job: its SystemComment, required nodes and priority.
comment() { scontrol show job "$1" | sed -n 's/^ *SystemComment=//p' | sed 's/ *$//'; }
req_nodes() { job_field "$1" ReqNodeList; }
prio() { job_field "$1" Priority; }

# why_says JOB PATTERN: `explsched why JOB` answers and says PATTERN (grep); passes with its text.
why_says() {
    local why
    why=$("$top_builddir/src/cli/explsched" why "$1" 2>&1) || fail "explsched why $1: $why"
    echo "$why" | grep -q "$2" || fail "explsched why $1: '$why'"
    pass "explsched why $1: $why"
}

# runs_on JOB NODELIST NAME: JOB (called NAME) starts within 20 s, on NODELIST.
runs_on() {
    wait_until 20 "[ \"\$(job_state $1)\" = RUNNING ]" "$3 running"
    [ "$(job_field "$1" NodeList)" = "$2" ] || fail "$3 runs on $(job_field "$1" NodeList), want $2"
}

# The placement planner's tests (test_placement_plan*.sh): 4 nodes x 4 GPUs, model.sh from
# write_contention_model, a pair table from new_net_table "Bully Victim Friend" in which Victim
# loses to Bully.

# plan_bully_and_holders: Bully on n1,n2 (two GPUs each); single-node jobs hold two of n3's GPUs
# and all of n4's: three nodes with two free GPUs, room for one 2 x 2 job. Sets bully, h3, h4.
plan_bully_and_holders() {
    bully=$(submit -N 2 --gres=gpu:2 -J Bully -o bully.out --export=ALL,STEPS=100000 model.sh)
    wait_until 20 '[ "$(job_state $bully)" = RUNNING ]' "Bully running"
    [ "$(job_field "$bully" NodeList)" = "n[1-2]" ] || fail "Bully runs on $(job_field "$bully" NodeList), want n[1-2]"
    h3=$(submit -w n3 --gres=gpu:2 -J hold3 -o /dev/null --wrap 'sleep 600')
    h4=$(submit -w n4 --gres=gpu:4 -J hold4 -o /dev/null --wrap 'sleep 600')
    wait_until 20 '[ "$(job_state $h3)" = RUNNING ] && [ "$(job_state $h4)" = RUNNING ]' "the single-node holders running"
    pass "Bully on n[1-2]; n3 half held, n4 held"
}

# plan_friend_first (after plan_bully_and_holders): Victim (hurt by Bully: 0.33 wherever it fits)
# has the higher priority; Friend (harmless beside Bully) the lower (nice). Both wait 8 s
# (--begin), so one round plans them together: Friend is placed first ("; before JobId=<Victim>")
# and raised above Victim, Victim says it was passed, and Slurm starts Friend first. Sets victim
# and friend (both gone at the end).
plan_friend_first() {
    local c cv pf pv
    victim=$(submit -N 2 --gres=gpu:2 -J Victim -o victim.out --begin=now+8 \
        --export=ALL,STEPS=40,HURT_BY=Bully model.sh)
    friend=$(submit -N 2 --gres=gpu:2 -J Friend -o friend.out --begin=now+8 --nice=500 \
        --export=ALL,STEPS=250 model.sh)
    wait_until 10 '[ "$(req_nodes $friend)" = "n1,n2" ]' \
        "Friend required onto n1,n2 (now '\$(req_nodes $friend)', '\$(comment $friend)')"
    c=$(comment "$friend")
    echo "$c" | grep -q "^placement: nodes n1,n2, predicted 1.00 of isolated, .*; before JobId=$victim$" ||
        fail "Friend's SystemComment: '$c'"
    cv=$(comment "$victim")
    [ "$cv" = "placement: passed this round by JobId=$friend (less predicted loss per GPU)" ] ||
        fail "Victim's SystemComment: '$cv'"
    case "$(req_nodes $victim)" in ""|"(null)") ;; *) fail "Victim has ReqNodeList=$(req_nodes $victim)";; esac
    pf=$(prio "$friend"); pv=$(prio "$victim")
    [ "$pf" -gt "$pv" ] || fail "Friend's priority $pf is not above Victim's $pv"
    pass "Friend placed first: '$c'; Victim: '$cv'; priorities $pf > $pv"
    why_says "$victim" "placement: passed this round by JobId=$friend"

    # Slurm starts Friend (beside Bully, unslowed); Victim waits (no room).
    runs_on "$friend" "n[1-2]" Friend
    [ "$(job_state $victim)" = PENDING ] || fail "Victim is $(job_state $victim), want PENDING"
    pass "Friend runs on n[1-2] first; Victim pending"
    scancel "$victim" "$friend"
    wait_until 30 '[ -z "$(squeue -h -j $victim,$friend 2>/dev/null)" ]' "Victim and Friend gone"
}
