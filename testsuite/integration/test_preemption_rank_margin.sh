#!/bin/bash
# preempt_rank_margin on the real preempt/explsched: a pending trial without a forecast yet (no
# reports: nothing to compare utilities with) takes a running trial's GPU only if its priority
# is above (1 + margin) x the running trial's. The running trial has a forecast and sits below
# the GPU price; its owner's --nice=20000 puts its priority (40001) below the newcomer's (60001)
# but above half of it. With the default margin 1 the newcomer waits and explsched why says what
# it would need; after `scontrol reconfigure` with preempt_rank_margin=0 (rank alone) it preempts.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
start_cluster --nodes 1 --gpus 1 --explschedd --params rerank_period=1,min_run=0,grace_time=5
cd "$CLUSTER_DIR" || fail "no cluster directory"
trial="/usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py"

t1=$(submit --nice=20000 --gres=gpu:1 --explore=flat --explore-max-steps=3000 -o t1.out --open-mode=append \
    --wrap "exec $trial --a 0.5 --b 0.2 --steps 3000 --every 0.3 --checkpoint $PWD/t1.ckpt")
wait_until 40 'scontrol show job $t1 | grep -q "SystemComment=.*decision=preemptable.*utility=[0-9]"' \
    "the running trial to be assessed preemptable with a forecast"
p1=$(job_field "$t1" Priority)
pass "running trial $t1, priority $p1: $(scontrol show job "$t1" | sed -n 's/^ *SystemComment=//p')"

t2=$(submit --gres=gpu:1 --explore=other --explore-max-steps=3000 -o t2.out --wrap 'sleep 20')
wait_until 20 '[ "$(job_field $t2 Priority)" -gt "$p1" ] 2>/dev/null' "the newcomer to outrank the running trial"
p2=$(job_field "$t2" Priority)
[ "$p2" -le $((2 * p1)) ] || fail "newcomer priority $p2 is above twice $p1: the test cannot tell the margins apart"
# Preemption by rank alone came within 20 s when this test was written (margin 0, below); wait 30.
sleep 30
[ "$(job_state "$t1")" = RUNNING ] && [ "$(job_field "$t1" Restarts)" = 0 ] ||
    fail "trial $t1 was preempted by $t2 ($p2 <= 2 x $p1) under the default margin: $(job_state "$t1"), restarts $(job_field "$t1" Restarts)"
[ "$(job_state "$t2")" = PENDING ] || fail "newcomer $t2 is $(job_state "$t2"), want PENDING"
grep -q "job $t2 may preempt job $t1" "$CLUSTER_DIR/log/slurmctld.log" && fail "preemption of $t1 by $t2 logged"
pass "newcomer $t2 (priority $p2) waits: $t1 ($p1) keeps its GPU under preempt_rank_margin=1"
why_says "$t1" "one without a forecast yet with a priority above $((2 * p1)) (100% more than its $p1)"
why_says "$t1" "under the site's PriorityParameters"

# explsched why reads the site's margin, not the engine's default: 1.5 still keeps the newcomer out
sed -i 's/^PriorityParameters=.*/&,preempt_rank_margin=1.5/' "$SLURM_CONF"
scontrol reconfigure || fail "scontrol reconfigure failed"
why_says "$t1" "one without a forecast yet with a priority above $((5 * p1 / 2)) (150% more than its $p1)"
out=$("$top_builddir/src/cli/explsched" why "$t1" --params preempt_rank_margin=3 2>&1)
grep -qF "priority above $((4 * p1)) (300% more than its $p1)" <<<"$out" ||
    fail "explsched why --params preempt_rank_margin=3 does not judge by it: $out"
out=$("$top_builddir/src/cli/explsched" why "$t1" --params preempt_rank_margin=-1 2>&1) &&
    fail "explsched why took --params preempt_rank_margin=-1"
grep -q "preempt_rank_margin" <<<"$out" || fail "a bad --params is refused without naming the key: $out"
pass "explsched why judges by the site's margin (1.5) and by --params (3); refuses a bad one"
[ "$(job_state "$t2")" = PENDING ] || fail "newcomer $t2 is $(job_state "$t2") under margin 1.5, want PENDING"

sed -i 's/,preempt_rank_margin=1\.5$/,preempt_rank_margin=0/' "$SLURM_CONF"
grep -q "^PriorityParameters=.*preempt_rank_margin=0" "$SLURM_CONF" || fail "could not set preempt_rank_margin=0"
scontrol reconfigure || fail "scontrol reconfigure failed"
wait_until 60 '[ "$(job_field $t1 Restarts)" -ge 1 ]' "trial $t1 to be preempted by rank alone"
line=$(grep -h "job $t2 may preempt job $t1" "$CLUSTER_DIR/log/slurmctld.log" | head -1)
grep -q "rank margin 0" <<<"$line" || fail "preemption logged without the rank margin: '$line'"
pass "with preempt_rank_margin=0: ${line#* }"
wait_until 30 '[ "$(job_state $t2)" = RUNNING ] || [ "$(job_field $t2 JobState)" = COMPLETED ]' "the newcomer to start"
pass "the newcomer took the GPU"
