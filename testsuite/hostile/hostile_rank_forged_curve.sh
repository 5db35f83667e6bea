#!/bin/bash
# Attack: user A reports a fabricated steep curve with throughput=1e15 for a pending trial, to
# out-rank user B's comparable trial and to have B's running trial preempted for it. The design
# (doc/explsched.conf.5: throughput_hint, preempt_cross_user, preempt_margin) guarantees:
#  - a reported throughput counts only up to throughput_hint (1.5) x the speed explschedd measured
#    from the reports' arrival, so A's trial ranks at most as a trial reporting that fast would:
#    its utility stays within 1.5x that of B's comparable trial reported at the same pace (with
#    the claim taken as is it would be valued at the curve's asymptote);
#  - with preempt_cross_user=no nothing of A's preempts B's job, while A's own good trial still
#    preempts A's own flat one (so the test can tell a preemption from none);
#  - with preempt_cross_user=yes (the default), a preemption of B's job by A's needs A's audited
#    utility above (1 + preempt_margin) x B's, A's utility still bounded by the measured speed.
# Two real users on a full cluster (one node, two GPUs); prints both users' trials' priorities,
# SITE factors and utilities before and after the attack.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
require_users
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x "$top_builddir/src/cli/explsched" ] || skip "the explsched CLI not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
make_user esh_forge_a
make_user esh_forge_b
start_cluster --nodes 1 --gpus 2 --explschedd --log-level debug \
    --params rerank_period=1,min_run=0,grace_time=5,preempt_margin=0.25,utility_horizon=30,preempt_cross_user=no
log=$CLUSTER_DIR/log/slurmctld.log
# The users' clients read slurm.conf and talk to the test cluster's munged.
chmod o+x "$CLUSTER_DIR" "$CLUSTER_DIR/munge" 2>/dev/null
chmod o+r "$SLURM_CONF" "$CLUSTER_DIR"/*.conf 2>/dev/null
work=$CLUSTER_DIR/tmp  # mode 1777: the users' jobs keep their checkpoints there
trial="/usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py"

# Outside a job step, a client must restrict its credential to explschedd's uid (SlurmUser's)
# itself: the SPANK plugin does it for job steps.
read_slurm_user_uid
report_as() {  # report_as USER JOB A B THROUGHPUT: 10 reports, 10 steps apart, one every 0.5 s
    local u=$1 job=$2 a=$3 b=$4 tput=$5 s m
    for s in 10 20 30 40 50 60 70 80 90 100; do
        m=$(awk -v a="$a" -v b="$b" -v s="$s" 'BEGIN { printf "%.6f", a + b * s ^ -0.3 }')
        as_user "$u" env SLURM_CONF="$SLURM_CONF" EXPLSCHED_MUNGE_SOCKET="$EXPLSCHED_MUNGE_SOCKET" \
            EXPLSCHED_REPORT_PORT="$EXPLSCHED_REPORT_PORT" EXPLSCHED_CONF="$EXPLSCHED_CONF" \
            EXPLSCHED_REPORT_UID="$slurm_user_uid" "$top_builddir/src/cli/explsched" report \
            --retries 2 --job "$job" --step "$s" --metric "$m" --throughput "$tput" >/dev/null \
            || echo "report of $u for job $job at step $s refused" >&2
        sleep 0.5
    done
}
utility_of() { scontrol show job "$1" | sed -n 's/.*SystemComment=.* utility=\([^ ]*\) .*/\1/p'; }
site_of() { sprio -h -o '%i %S' | awk -v j="$1" '$1 == j { print $2 }'; }
show() {  # show LABEL JOB...
    local label=$1 j
    shift
    for j in "$@"; do
        printf '    %-6s job %s (%s, %s): priority %s, SITE %s, utility %s, restarts %s\n' "$label" "$j" \
            "$(job_field "$j" UserId | cut -d'(' -f1)" "$(job_state "$j")" "$(job_field "$j" Priority)" \
            "$(site_of "$j")" "$(utility_of "$j")" "$(job_field "$j" Restarts)"
    done
}
le_ratio() { awk -v x="$1" -v y="$2" -v r="$3" 'BEGIN { exit !(x + 0 <= r * y + 1e-12) }'; }

# Both users' flat trials fill the cluster; both are worth less than the GPU price (preemptable).
flat_opts=(--gres=gpu:1 --explore-max-steps=1000000 --explore-on-hopeless=none)
a1=$(submit_as esh_forge_a "${flat_opts[@]}" --explore=flat \
    --wrap "exec $trial --a 0.5 --b 0.2 --steps 1000000 --every 0.3 --checkpoint $work/a1.ckpt")
b1=$(submit_as esh_forge_b "${flat_opts[@]}" --explore=flat \
    --wrap "exec $trial --a 0.5 --b 0.2 --steps 1000000 --every 0.3 --checkpoint $work/b1.ckpt")
[ -n "$a1" ] && [ -n "$b1" ] || fail "submitting the users' trials failed"
wait_until 60 'scontrol show job $a1 | grep -q "SystemComment=.*decision=preemptable" &&
    scontrol show job $b1 | grep -q "SystemComment=.*decision=preemptable"' \
    "both flat trials running and assessed preemptable"
echo "before the attack (cluster full):"
show before "$a1" "$b1"

# The attack: A's pending trial a2 gets a fabricated steep curve claiming 1e15 steps/s; B's
# comparable trial b2 (eligible only in an hour, so it never preempts anything) the same shape,
# honestly, at the same pace: 10 steps per 0.5 s, about 20 steps/s.
opts=(--gres=gpu:1 --explore-max-steps=1000000 --explore-on-hopeless=none)
a2=$(submit_as esh_forge_a "${opts[@]}" --explore=forged --wrap 'sleep 600')
b2=$(submit_as esh_forge_b "${opts[@]}" --explore=honest --begin=now+1hour --wrap 'sleep 600')
report_as esh_forge_a "$a2" 0.05 8.0 1e15 &
ra=$!
report_as esh_forge_b "$b2" 0.3 2.0 20 &
rb=$!
wait "$ra" "$rb"
wait_until 20 'scontrol show job $a2 | grep -q "SystemComment=.*points=10" &&
    scontrol show job $b2 | grep -q "SystemComment=.*points=10"' "both trials assessed on their 10 points"
sleep 2
ua=$(utility_of "$a2")
ub=$(utility_of "$b2")
echo "after the attack:"
show after "$a1" "$b1" "$a2" "$b2"
[ -n "$ua" ] && [ -n "$ub" ] || fail "no utility for job $a2 ($ua) or $b2 ($ub)"
awk -v u="$ub" 'BEGIN { exit !(u > 0) }' || fail "B's honest trial $b2 has no utility ($ub): nothing to compare"
le_ratio "$ua" "$ub" 1.5 \
    || fail "A's forged trial $a2 (utility $ua) out-ranks B's comparable trial $b2 ($ub) by more than throughput_hint=1.5 allows"
pass "throughput=1e15 bought A at most what the measured speed supports: utility $ua vs B's $ub (ratio $(awk -v a="$ua" -v b="$ub" 'BEGIN { printf "%.2f", a / b }'), bound 1.5)"

# preempt_cross_user=no: A's forged trial may preempt A's own flat trial, never B's.
wait_until 60 '[ "$(job_field $a1 Restarts)" -ge 1 ]' "A's flat trial $a1 to be preempted by A's $a2"
grep -q "job $a2 may preempt job $a1" "$log" || fail "no preemption decision for $a2 over $a1 logged"
pass "same user: $(grep -h "job $a2 may preempt job $a1" "$log" | head -1 | sed 's/^\[[^]]*\] //')"
grep -q "job $a2 may not preempt job $b1: .*preempt_cross_user is off" "$log" \
    || fail "B's trial $b1 was never considered for $a2: the cross-user refusal went untested"
grep -q "may preempt job $b1" "$log" && fail "B's job $b1 was preempted: $(grep -h "may preempt job $b1" "$log" | head -1)"
[ "$(job_field "$b1" Restarts)" = 0 ] && [ "$(job_state "$b1")" = RUNNING ] \
    || fail "B's trial $b1 was disturbed: $(job_state "$b1"), restarts $(job_field "$b1" Restarts)"
pass "preempt_cross_user=no: B's $b1 considered and refused ($(grep -h "job $a2 may not preempt job $b1" "$log" | head -1 | sed 's/.*: job/job/'))"
show "no" "$a1" "$b1" "$a2" "$b2"

# preempt_cross_user=yes (the default): A's next forged trial a3 may take B's flat trial's GPU
# only with its audited utility above (1 + margin) x B's, and that utility is again bounded by
# the measured speed (against B's comparable b2).
sed -i 's/preempt_cross_user=no/preempt_cross_user=yes/' "$SLURM_CONF"
scontrol reconfigure || fail "scontrol reconfigure"
# (eligible only once its whole curve is in, so that the verdict reads the same utility as b2's)
a3=$(submit_as esh_forge_a "${opts[@]}" --explore=forged2 --begin=now+1hour --wrap 'sleep 600')
report_as esh_forge_a "$a3" 0.05 8.0 1e15
wait_until 20 'scontrol show job $a3 | grep -q "SystemComment=.*points=10"' "A's second forged trial assessed"
u3=$(utility_of "$a3")
le_ratio "$u3" "$ub" 1.5 || fail "A's forged trial $a3 (utility $u3) exceeds 1.5x B's comparable $b2 ($ub)"
scontrol update jobid="$a3" starttime=now || fail "making job $a3 eligible"
wait_until 30 '[ "$(job_field $b1 Restarts)" -ge 1 ] || grep -q "job $a3 may not preempt job $b1" "$log"' \
    "a verdict on B's trial $b1 for A's $a3"
sleep 3
show yes "$b1" "$a3" "$b2"
verdict=$(grep -h "job $a3 may preempt job $b1" "$log" | head -1)
if [ -n "$verdict" ]; then
    x=$(echo "$verdict" | sed -n 's/.*: utility \([^ ]*\) > (1 + margin \([^)]*\)) x job [0-9]*.s \([^ ]*\)$/\1 \2 \3/p')
    read -r ux mx uy <<<"$x"
    [ -n "$uy" ] || fail "cross-user preemption without the utility margin: $verdict"
    awk -v x="$ux" -v m="$mx" -v y="$uy" 'BEGIN { exit !(x > (1 + m) * y) }' || fail "margin not met: $verdict"
    le_ratio "$ux" "$ub" 1.5 || fail "preempted with a utility ($ux) above what the measured speed supports ($ub x 1.5)"
    pass "preempt_cross_user=yes: B's $b1 preempted only on audited utility with the margin: ${verdict#*: }"
else
    pass "preempt_cross_user=yes: B's $b1 not preempted ($(grep -h "job $a3 may not preempt job $b1" "$log" | head -1 | sed 's/.*: job/job/'))"
fi
