#!/bin/bash
# explschedd end to end: a real munged, slurmctld and slurmd (testsuite/cluster), a real
# explschedd, and clients as root and as an ordinary user (explsched-test, created if missing):
#  - a report for one's own job is stored; for another user's job refused; for an unknown job
#    refused; root may report for any job;
#  - NaN/inf/huge values, a decreasing step, a changed value, a 1 MB line, a flood of forged
#    reports and too many connections are refused with clear errors, nothing stored is changed,
#    and the daemon's memory stays bounded;
#  - a training job (sbatch --explore) reports through `explsched report` and the Python module
#    with only the environment the SPANK plugin gives its steps;
#  - kill -9 of explschedd loses no acknowledged report; SIGTERM stops it cleanly.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
b=$top_builddir
s=$top_srcdir
[ -x "$b/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x "$b/src/cli/explsched" ] || skip "explsched not built"
PY=/usr/bin/python3
[ -x $PY ] || skip "/usr/bin/python3 missing"
command -v munge >/dev/null || skip "the munge command is missing"
TEST_USER=explsched-test
id -u $TEST_USER >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/sh $TEST_USER \
    || skip "cannot create the user $TEST_USER"
test_uid=$(id -u $TEST_USER)

start_cluster --nodes 2 --gpus 2
port=$EXPLSCHED_REPORT_PORT
addr=127.0.0.1:$port
db=$CLUSTER_DIR/state/reports.db
log=$CLUSTER_DIR/log/explschedd.log
cat >"$CLUSTER_DIR/explschedd.conf" <<EOF
# explschedd settings for this test cluster
report_host=127.0.0.1
report_port=$port
report_db=$db
munge_socket=$EXPLSCHED_MUNGE_SOCKET
EOF
export EXPLSCHED_CONF=$CLUSTER_DIR/explschedd.conf PYTHONPATH=$s/contrib/python

dfail() { echo "--- tail of $log"; tail -30 "$log"; fail "$@"; }
start_daemon() {
    "$b/src/daemon/explschedd" -D -f "$EXPLSCHED_CONF" --pid-file "$CLUSTER_DIR/run/explschedd.pid" \
        --slurm-conf "$SLURM_CONF" --max-connections 40 -v >>"$log" 2>&1 &
    DAEMON=$!
    wait_until 20 "(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null" "explschedd listening on $port"
}
raw() { $PY "$s/testsuite/integration/report_raw.py" "$addr" "$EXPLSCHED_MUNGE_SOCKET" "$@"; }
# Outside a job nothing sets EXPLSCHED_REPORT_UID (explschedd runs as root here): say it.
as_user() { runuser -u $TEST_USER -- env EXPLSCHED_CONF="$EXPLSCHED_CONF" SLURM_CONF="$SLURM_CONF" EXPLSCHED_REPORT_UID=0 "$@"; }
report() { "$b/src/cli/explsched" report --address "$addr" --retries 0 "$@"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$DAEMON/status"; }
db_query() { $PY -c 'import sqlite3,sys; c=sqlite3.connect("file:"+sys.argv[1]+"?mode=ro",uri=True)
for r in c.execute(sys.argv[2]): print(*r)' "$db" "$1"; }
expect_refused() {  # expect_refused WHAT PATTERN -- command...
    local what=$1 pattern=$2; shift 3
    local out rc
    out=$("$@" 2>&1); rc=$?
    [ $rc = 1 ] || dfail "$what: exit $rc, expected 1 (refused): $out"
    echo "$out" | grep -q -- "$pattern" || dfail "$what: message lacks '$pattern': $out"
    pass "$what: $(echo "$out" | head -1)"
}

start_daemon
"$b/src/daemon/explschedd" -D -f "$EXPLSCHED_CONF" --pid-file "$CLUSTER_DIR/run/explschedd.pid" 2>"$CLUSTER_DIR/second.err" &&
    fail "a second explschedd with the same pid file started"
grep -q "another explschedd holds it" "$CLUSTER_DIR/second.err" || fail "second instance: $(cat "$CLUSTER_DIR/second.err")"
pass "a second explschedd refuses the held pid file"

# --- ownership ------------------------------------------------------------------------------
ujob=$(as_user sbatch --parsable --hold --explore=sec -o /dev/null --wrap "sleep 300") || fail "sbatch as $TEST_USER"
rjob=$(sbatch --parsable --hold -o /dev/null --wrap "sleep 300") || fail "sbatch as root"
out=$(as_user "$b/src/cli/explsched" report --address "$addr" --job "$ujob" --step 1 --metric 0.5 -v 2>&1) \
    || dfail "own job refused: $out"
[ "$out" = "stored job=$ujob step=1" ] || dfail "own job: unexpected output '$out'"
pass "$TEST_USER reports for its own job $ujob"
expect_refused "another user's job" "forbidden" -- as_user "$b/src/cli/explsched" report --address "$addr" \
    --job "$rjob" --step 1 --metric 0.5 --retries 0
expect_refused "unknown job" "unknown_job" -- as_user "$b/src/cli/explsched" report --address "$addr" \
    --job 999999 --step 1 --metric 0.5 --retries 0
report --job "$ujob" --step 2 --metric 0.4 || dfail "root was refused for $ujob"
pass "root may report for any job"

# --- hostile values through the command (refused locally, same rules) and the raw protocol ----
expect_refused "NaN metric (client)" "not a finite number" -- report --job "$rjob" --step 1 --metric nan
expect_refused "huge metric (client)" "absurdly large" -- report --job "$rjob" --step 1 --metric 1e16
report --job "$rjob" --step 100 --metric 2.0 || dfail "root report for $rjob"
expect_refused "decreasing step" "last stored step 100" -- report --job "$rjob" --step 50 --metric 1.0
out=$(report --job "$rjob" --step 50 --metric 1.0 2>/dev/null); [ "$out" = "last_step=100" ] \
    || fail "step_behind: stdout '$out', expected last_step=100"
expect_refused "changed value of a stored step" "differs from the stored value 2" -- \
    report --job "$rjob" --step 100 --metric 3.0
report --job "$rjob" --step 100 --metric 2.0 || dfail "an identical resend must be acknowledged"
pass "an identical resend is acknowledged (duplicate)"
before=$(db_query "SELECT COUNT(*), SUM(step), SUM(metric) FROM reports")
replies=$(raw lines <<EOF
EXPLSCHED-REPORT/1 job=$rjob step=200 metric=nan time=1
EXPLSCHED-REPORT/1 job=$rjob step=200 metric=inf time=1
EXPLSCHED-REPORT/1 job=$rjob step=200 metric=1e300 time=1
EXPLSCHED-REPORT/1 job=$rjob step=200 metric=1 throughput=-5 time=1
EXPLSCHED-REPORT/1 job=$rjob step=7 metric=1 time=1
RAW EXPLSCHED-REPORT/1 job=$rjob step=200 metric=1 time=1 cred=MUNGE:forged:
RAW EXPLSCHED-REPORT/9 job=$rjob step=200 metric=1 time=1 cred=x
RAW hello
EOF
)
echo "$replies" | sed 's/^/    /'
for want in "code=invalid_value.*'nan' is not a finite number" "code=invalid_value.*'inf' is not a finite number" \
    "code=invalid_value.*absurdly large" "code=invalid_value.*throughput" "code=step_behind.*last_step=100" \
    "code=bad_credential" "code=bad_version" "code=bad_request"; do
    echo "$replies" | grep -q "refused $want" || dfail "raw protocol: no reply matching '$want'"
done
[ "$(echo "$replies" | wc -l)" = 8 ] || dfail "raw protocol: expected 8 replies"
# A credential signs one body: moved onto another body it is refused; used twice, munged refuses
# the replay.
text="EXPLSCHED-REPORT/1 job=$rjob step=300 metric=1 time=1"
cred1=$(printf '%s' "$text" | munge --socket "$EXPLSCHED_MUNGE_SOCKET" --cipher none --ttl 60)
cred2=$(printf '%s' "$text" | munge --socket "$EXPLSCHED_MUNGE_SOCKET" --cipher none --ttl 60)
replies=$(raw lines <<EOF
RAW EXPLSCHED-REPORT/1 job=$rjob step=300 metric=0.001 time=1 cred=$cred1
RAW $text cred=$cred2
RAW $text cred=$cred2
EOF
)
echo "$replies" | sed -n 1p | grep -q "code=bad_credential.*does not match" || dfail "credential moved to another body: $replies"
echo "$replies" | sed -n 2p | grep -q "stored job=$rjob step=300" || dfail "the genuine report: $replies"
echo "$replies" | sed -n 3p | grep -q "code=bad_credential.*[Rr]eplayed" || dfail "replayed credential: $replies"
pass "a credential cannot be moved to another body or replayed"
[ "$(db_query "SELECT COUNT(*), SUM(step), SUM(metric) FROM reports WHERE step != 300")" = "$before" ] \
    || dfail "refused input changed stored rows"
pass "refused input changed nothing stored"

# --- oversized line, flood, too many connections ----------------------------------------------
rss0=$(rss_kb)
out=$(raw bigline 1048576)
echo "$out" | grep -q "refused code=line_too_long" || dfail "1 MB line: $out"
echo "$out" | grep -q "^closed" || dfail "1 MB line: connection not closed: $out"
pass "a 1 MB line is refused and the connection closed"
out=$(raw flood 200000 "$rjob" 500)
echo "$out" | grep -q "stored job=$rjob" || dfail "flood: the real report was not stored: $out"
latency=$(echo "$out" | awk '{print $2}')
$PY -c "import sys; sys.exit(0 if float('$latency') < 3.0 else 1)" || dfail "flood starved a polite client: $out"
pass "a forged-report flood does not starve a polite client (latency ${latency}s)"
out=$(raw conns 45)
busy=$(echo "$out" | awk '{print $2}')
[ "$busy" -ge 5 ] || dfail "45 connections against --max-connections 40: only $busy turned away"
pass "connections over the limit get 'retry code=busy' ($busy of 45)"
report --job "$rjob" --step 1000 --metric 1.5 --retries 5 || dfail "daemon unusable after the abuse"
rss1=$(rss_kb)
[ $((rss1 - rss0)) -lt 65536 ] || dfail "RSS grew from ${rss0} kB to ${rss1} kB"
pass "memory bounded under abuse (RSS ${rss0} -> ${rss1} kB)"

# --- a real training step reports with the environment of the SPANK plugin --------------------
job=$(as_user sbatch --parsable --explore=e2e -o "$CLUSTER_DIR/tmp/e2e-%j.out" --export=ALL --wrap \
    "env | grep ^EXPLSCHED_; $b/src/cli/explsched report --step 1 --metric 0.9 --throughput 10 &&
     $b/src/cli/explsched report --step 2 --metric 0.8 &&
     $PY -c 'import explsched; print(explsched.report(3, 0.7))'") || fail "sbatch --explore as $TEST_USER"
wait_until 60 "[ -z \"\$(job_state $job)\" ] || [ \"\$(job_state $job)\" = COMPLETED ] || [ \"\$(job_state $job)\" = FAILED ]" "job $job to end"
sleep 0.5
cat "$CLUSTER_DIR/tmp/e2e-$job.out" 2>/dev/null | sed 's/^/    /'
grep -q "^EXPLSCHED_REPORT_ADDR=127.0.0.1:$port" "$CLUSTER_DIR/tmp/e2e-$job.out" || dfail "the step lacks EXPLSCHED_REPORT_ADDR"
rows=$(db_query "SELECT step, metric, uid FROM reports WHERE job_id = $job ORDER BY step")
[ "$rows" = "$(printf '1 0.9 %s\n2 0.8 %s\n3 0.7 %s' $test_uid $test_uid $test_uid)" ] || dfail "job $job stored: '$rows'"
pass "job $job reported steps 1-3 as uid $test_uid (explsched report and the Python module)"

# --- the Python module's own tests against this daemon (as root: any job) ----------------------
EXPLSCHED_TEST_ADDR=$addr EXPLSCHED_TEST_JOB=3000000000 $PY "$s/contrib/python/test_explsched.py" >"$CLUSTER_DIR/py.log" 2>&1 \
    || { cat "$CLUSTER_DIR/py.log"; dfail "contrib/python/test_explsched.py"; }
grep -q "skipped" "$CLUSTER_DIR/py.log" && { cat "$CLUSTER_DIR/py.log"; fail "real-daemon Python tests were skipped"; }
pass "contrib/python/test_explsched.py against the real daemon"

# --- kill -9 loses no acknowledged report ------------------------------------------------------
kjob=3100000000  # root may report for any job id
acks=$CLUSTER_DIR/acked
: >"$acks"
raw killtest "$kjob" "$acks" >"$CLUSTER_DIR/killtest.out" 2>&1 &
client=$!
wait_until 20 "[ \$(wc -l <$acks) -ge 50 ]" "50 acknowledged reports"
kill -9 "$DAEMON"
wait "$client"
wait "$DAEMON" 2>/dev/null
acked=$(wc -l <"$acks")
last=$(tail -1 "$acks")
start_daemon
missing=$($PY -c 'import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
have = {r[0] for r in c.execute("SELECT step FROM reports WHERE job_id = ?", (int(sys.argv[2]),))}
print(" ".join(l.strip() for l in open(sys.argv[3]) if l.strip() and int(l) not in have))' "$db" "$kjob" "$acks")
[ -z "$missing" ] || dfail "acknowledged but lost after kill -9: $(echo "$missing" | head -c 200)"
pass "kill -9 after $acked acknowledged reports (last step $last): none lost"
next=$(report --job "$kjob" --step "$((last + 1000))" --metric 0.1 -v) || dfail "report after restart"
pass "explschedd serves again after restart: $next"

# --- clean shutdown ----------------------------------------------------------------------------
kill -TERM "$DAEMON"
wait "$DAEMON"; rc=$?
[ $rc = 0 ] || dfail "explschedd exited $rc on SIGTERM"
[ ! -e "$CLUSTER_DIR/run/explschedd.pid" ] || fail "pid file left behind"
tail -2 "$log" | grep -q "stopped" || dfail "no 'stopped' line in the log"
pass "SIGTERM: clean exit, pid file removed"
