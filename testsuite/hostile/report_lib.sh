# Shared by hostile_report_*.sh: a local cluster (slurmctld and slurmd for the jobs whose owners
# explschedd checks), a real explschedd of this build started by the test, and two users made
# for the test: ATTACKER and VICTIM. Clients run as those users with setpriv.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

report_setup() {
    require_users
    require_cluster
    b=$top_builddir
    s=$top_srcdir
    [ -x "$b/src/daemon/explschedd" ] || skip "explschedd not built"
    [ -x "$b/src/cli/explsched" ] || skip "explsched not built"
    PY=/usr/bin/python3
    [ -x $PY ] || skip "/usr/bin/python3 missing"
    $PY -c 'import ctypes; ctypes.CDLL("libmunge.so.2")' 2>/dev/null || skip "libmunge.so.2 missing"
    # Names of this test's own (make check runs tests in parallel: another test's clean-up
    # removes its users and kills their processes).
    ATTACKER=esh_ra$$
    VICTIM=esh_rv$$
    make_user $ATTACKER
    make_user $VICTIM
    start_cluster --nodes 1 --gpus 2
    port=$EXPLSCHED_REPORT_PORT
    addr=127.0.0.1:$port
    db=$CLUSTER_DIR/state/reports.db
    log=$CLUSTER_DIR/log/explschedd.log
    cat >"$CLUSTER_DIR/explschedd.conf" <<CONF
report_host=127.0.0.1
report_port=$port
report_db=$db
munge_socket=$EXPLSCHED_MUNGE_SOCKET
CONF
    export EXPLSCHED_CONF=$CLUSTER_DIR/explschedd.conf
    # The test users' clients run outside jobs: tell them explschedd's uid (it runs as root here,
    # as SlurmUser=root in the test cluster), as the SPANK plugin does inside jobs.
    export EXPLSCHED_REPORT_UID=0
    chmod 755 "$CLUSTER_DIR" "$CLUSTER_DIR/tmp" 2>/dev/null || true
}

# start_daemon [explschedd options...]; $EXPLSCHEDD names another binary (to run an attack against
# an older explschedd for comparison).
start_daemon() {
    "${EXPLSCHEDD:-$b/src/daemon/explschedd}" -D -f "$EXPLSCHED_CONF" --pid-file "$CLUSTER_DIR/run/explschedd.pid" \
        --slurm-conf "$SLURM_CONF" -v "$@" >>"$log" 2>&1 &
    DAEMON=$!
    wait_until 20 "(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null" "explschedd listening on $port"
}

dfail() { echo "--- tail of $log"; tail -30 "$log"; fail "$@"; }

# as NAME CMD...: CMD as that user, with the environment a client needs.
as() {
    local name=$1
    shift
    as_user "$name" env EXPLSCHED_CONF="$EXPLSCHED_CONF" SLURM_CONF="$SLURM_CONF" \
        EXPLSCHED_REPORT_UID="$EXPLSCHED_REPORT_UID" PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

attack() {  # attack USER MODE ARGS...: report_attack.py as USER
    local name=$1
    shift
    as "$name" $PY "$s/testsuite/hostile/report_attack.py" "$addr" "$EXPLSCHED_MUNGE_SOCKET" "$@"
}

held_job() {  # held_job USER: a pending (held) job of USER; prints its id
    as "$1" sbatch --parsable --hold -o /dev/null --wrap "sleep 600" | cut -d';' -f1
}

db_query() {
    $PY -c 'import sqlite3,sys; c=sqlite3.connect("file:"+sys.argv[1]+"?mode=ro",uri=True)
for r in c.execute(sys.argv[2], sys.argv[3:]): print(*r)' "$db" "$@"
}
