#!/bin/bash
# Attack: user B (attacker) reports for user A's (victim's) job, with every trick a client can
# play: its own credential on A's job id, a credential of A's moved onto another body, a replay
# of A's credential, a credential any uid may decode, a long-lived one. Each is refused; A's curve
# is unchanged; no refusal names A (uid or user name). Reading: neither user can read the report
# database; `explsched show` asks explschedd, which gives A its own curve and refuses B.
set -u
. "$(dirname "$0")/report_lib.sh"
report_setup
start_daemon
vuid=$(id -u $VICTIM)

vjob=$(held_job $VICTIM) || fail "sbatch as $VICTIM"
ajob=$(held_job $ATTACKER) || fail "sbatch as $ATTACKER"
for step in 1 2 3; do
    out=$(attack $VICTIM report "$vjob" $step 0.$((9 - step))) || dfail "victim report: $out"
    echo "$out" | grep -q " stored " || dfail "victim's own report not stored: $out"
done
before=$(db_query "select step, metric, uid from reports where job_id=? order by id" "$vjob")
pass "victim $VICTIM (uid $vuid) stored 3 points for its job $vjob"

# 1. The attacker's own (valid) credential on the victim's job.
out=$(attack $ATTACKER report "$vjob" 4 0.01)
echo "attacker's report for $vjob: $out"
echo "$out" | grep -q "refused code=forbidden" || dfail "forged report not refused as forbidden: $out"
msgs=$out
# The CLI (C library) gets the same answer.
out=$(as $ATTACKER "$b/src/cli/explsched" report --address "$addr" --job "$vjob" --step 5 --metric 0.01 --retries 0 2>&1)
[ $? = 1 ] || dfail "explsched report for another user's job did not fail: $out"
echo "$out" | grep -q "forbidden" || dfail "CLI: $out"
msgs="$msgs
$out"

# 2. A credential any uid may decode (no restriction) and a long-lived one, for the attacker's own job.
out=$(EXPLSCHED_REPORT_UID= attack $ATTACKER report "$ajob" 1 0.5)
echo "unrestricted credential: $out"
echo "$out" | grep -q "refused code=bad_credential.*restricted" || dfail "unrestricted credential accepted: $out"
text="EXPLSCHED-REPORT/1 job=$ajob step=2 metric=0.5 time=1"
cred=$(printf '%s' "$text" | as $ATTACKER munge --socket "$EXPLSCHED_MUNGE_SOCKET" --cipher none --ttl 3600 --restrict-uid 0)
out=$(printf '%s cred=%s\n' "$text" "$cred" | as $ATTACKER $PY -c '
import socket, sys
host, _, port = sys.argv[1].rpartition(":")
s = socket.create_connection((host, int(port)))
s.sendall(sys.stdin.buffer.read())
print(s.makefile("rb").readline().decode().strip())' "$addr")
echo "credential with a 3600 s TTL: $out"
echo "$out" | grep -q "refused code=bad_credential.*max_credential_ttl=60" || dfail "long-lived credential accepted: $out"
msgs="$msgs
$out"

# 3. The victim's credential (as an eavesdropper would capture it) moved onto another body, and replayed.
vtext="EXPLSCHED-REPORT/1 job=$vjob step=10 metric=0.1 time=1"
vcred=$(printf '%s' "$vtext" | as $VICTIM munge --socket "$EXPLSCHED_MUNGE_SOCKET" --cipher none --ttl 60 --restrict-uid 0)
out=$(printf 'EXPLSCHED-REPORT/1 job=%s step=11 metric=0.0001 time=1 cred=%s\n%s cred=%s\n%s cred=%s\n' \
    "$vjob" "$vcred" "$vtext" "$vcred" "$vtext" "$vcred" | as $ATTACKER $PY -c '
import socket, sys
host, _, port = sys.argv[1].rpartition(":")
s = socket.create_connection((host, int(port)))
s.sendall(sys.stdin.buffer.read())
f = s.makefile("rb")
for _ in range(3): print(f.readline().decode().strip())' "$addr")
echo "captured credential: $out"
# explschedd checks credentials on several workers, so which of the three lines munged decodes
# first varies: the moved one is refused either way (its signed text does not match, or munged
# already saw the credential); of the two genuine lines at most one is stored, the other a replay.
echo "$out" | sed -n 1p | grep -Eq "refused code=bad_credential.*(does not match|[Rr]eplayed)" \
    || dfail "credential moved onto another body: $out"
[ "$(echo "$out" | grep -c "^EXPLSCHED-REPLY/1 stored job=$vjob step=10$")" -le 1 ] || dfail "replayed credential stored twice: $out"
[ "$(echo "$out" | sed -n 2,3p | grep -Ec "stored job=$vjob step=10|refused code=bad_credential.*[Rr]eplayed")" = 2 ] \
    || dfail "replayed credential: $out"
[ -z "$(db_query "select 1 from reports where job_id=? and step=11" "$vjob")" ] || dfail "the moved credential's report was stored"
msgs="$msgs
$out"

after=$(db_query "select step, metric, uid from reports where job_id=? and step<>10 order by id" "$vjob")
[ "$before" = "$after" ] || dfail "victim's curve changed: before '$before' after '$after'"
[ -z "$(db_query "select 1 from reports where uid=? " "$(id -u $ATTACKER)")" ] || dfail "an attacker row was stored"
pass "victim's curve unchanged; nothing of the attacker's stored"

# Reading curves: the database is SlurmUser's (root here) and mode 0600.
mode=$(stat -c %a "$db")
[ "$mode" = 600 ] || dfail "the report database has mode $mode, expected 600"
out=$(as $VICTIM "$b/src/cli/explsched" show "$vjob" --db "$db" 2>&1) || dfail "victim cannot see its own curve: $out"
echo "$out" | grep -q "explschedd at" || dfail "explsched show did not go through explschedd: $out"
# its 3 points, and step 10 when one of the genuine replayed lines was the first munged decoded
points=$(db_query "select count(*) from reports where job_id=?" "$vjob")
[ "$points" = 3 ] || [ "$points" = 4 ] || dfail "the victim's job has $points stored points, expected 3 or 4"
echo "$out" | grep -q "$points points" || dfail "victim's curve through explschedd ($points stored): $out"
pass "the victim reads its own curve through explschedd: $(echo "$out" | grep -m1 "points")"
# Without EXPLSCHED_REPORT_UID (a login shell) the command learns SlurmUser from scontrol.
out=$(as_user $VICTIM env EXPLSCHED_CONF="$EXPLSCHED_CONF" SLURM_CONF="$SLURM_CONF" PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    "$b/src/cli/explsched" show "$vjob" --db "$db" 2>&1) || dfail "show without EXPLSCHED_REPORT_UID: $out"
echo "$out" | grep -q "$points points" || dfail "show without EXPLSCHED_REPORT_UID ($points stored): $out"
out=$(as $ATTACKER "$b/src/cli/explsched" show "$vjob" --db "$db" 2>&1) && dfail "the attacker read the victim's curve: $out"
echo "attacker's explsched show $vjob: $out"
echo "$out" | grep -q "forbidden.*not yours" || dfail "attacker's read not refused as forbidden: $out"
msgs="$msgs
$out"

# No refusal reveals who owns the job.
if echo "$msgs" | grep -E -q "uid[ =]?$vuid\b|$VICTIM|owned by"; then
    dfail "a refusal names the victim: $(echo "$msgs" | grep -E "uid[ =]?$vuid\b|$VICTIM|owned by")"
fi
grep -E -q "$VICTIM|uid $vuid\b" "$log" && echo "(the daemon's own log may name users; it is root's)"
pass "refusals name no other user (checked for uid $vuid and '$VICTIM')"
