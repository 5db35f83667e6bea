#!/bin/bash
# Attack: preempt_rank_margin (default 1) shields a running trial that has a forecast from pending
# trials that have none yet: those need a priority above (1 + margin) x the running trial's. User A
# reports a curve chosen to buy that shield and keep user B's new trials off the GPUs:
#  - a forged flat curve (the metric never moves): it predicts no gain, so its utility is 0, below
#    the GPU price that B's honest running trial sets, and the shield does not apply; B's
#    newcomer, ranked above A's trial (A ran it --nice=20000, priority about 40001 against 60001,
#    under twice it), preempts it by rank alone, and not B's own shielded trial;
#  - a slowly improving curve (a forecast with a utility above 0, below the price): the shield
#    applies, but only up to A's priority: with A's --nice=40000 (about 20001) B's newcomer, an
#    array task, is above twice it and preempts it, and slurmctld's log names the rank margin.
# Either way A keeps B's trials off the GPUs no longer than A's own priority allows. (A trial that
# never reports is preempted only once its turn is over, unpredicted_turn (2 h), and only by a
# trial without a forecast, so a flat curve buys A nothing more than silence does.) Two real
# users, one node, two GPUs, priority/explsched, the default margin.
set -u
. "$(dirname "$0")/lib.sh"
two_users esh_rm
start_cluster --nodes 1 --gpus 2 --explschedd --params rerank_period=1,min_run=0,grace_time=5
log=$CLUSTER_DIR/log/slurmctld.log
open_to_users
grep -q "preempt_rank_margin" "$SLURM_CONF" && fail "the test cluster sets preempt_rank_margin: the default is under test"

# a_trial NAME NICE B: A's trial reporting loss = 0.5 + B * step^-0.5 (B=0: flat) for 3000 steps
a_trial() {
    submit_as $A --nice="$2" --gres=gpu:1 --explore=shield --explore-max-steps=3000 --explore-on-hopeless=none \
        -o "$work/$1.out" --open-mode=append \
        --wrap "exec $trial --a 0.5 --b $3 --steps 3000 --every 0.3 --checkpoint $work/$1.ckpt"
}
# preempted_by A_JOB B_JOB: A's trial was requeued and slurmctld logged B's job preempting it
preempted_by() { [ "$(job_field "$1" Restarts)" -ge 1 ] && grep -q "job $2 may preempt job $1" "$log"; }

# B's honest trial, running through both attacks: its forecast prices the GPUs (above 0).
b0=$(submit_as $B --gres=gpu:1 --explore=honest --explore-max-steps=3000 -o "$work/b0.out" \
    --wrap "exec $trial --a 0.5 --b 0.2 --steps 3000 --every 0.3 --checkpoint $work/b0.ckpt") || fail "sbatch as $B"

# 1. The forged flat curve: assessed, no utility to shield it; B's newcomer preempts by rank.
a1=$(a_trial flat 20000 0) || fail "sbatch as $A"
# assessed: running, with at least the points a fit needs (min_points_to_fit, 6)
assessed() { [ "$(job_state "$1")" = RUNNING ] && comment "$1" | grep -Eq "points=([6-9]|[1-9][0-9]+) "; }
wait_until 40 'assessed $a1 && assessed $b0 && comment $a1 | grep -q "price=[0-9]*\.*[0-9]*[1-9]"' \
    "A's flat trial to run and be assessed on its reports, at a price above 0"
pa=$(job_field "$a1" Priority)
pass "A's flat trial $a1, priority $pa: $(comment "$a1" | cut -c1-200)"
comment "$a1" | grep -q "utility=0 \|utility=0$\|state=hopeless" ||
    fail "A's flat curve got a utility above 0: $(comment "$a1")"
b1=$(submit_as $B --gres=gpu:1 --explore=newcomer --explore-max-steps=3000 --wrap 'sleep 20') || fail "sbatch as $B"
wait_until 20 '[ "$(job_field $b1 Priority)" -gt "$pa" ] 2>/dev/null' "B's newcomer to outrank A's flat trial"
pb=$(job_field "$b1" Priority)
[ "$pb" -le $((2 * pa)) ] || fail "B's newcomer ($pb) is above twice A's $pa: the test cannot tell whether the margin applied"
# A requeue comes after grace_time (5 s), which slurmctld checks on its 30-s background pass.
wait_until 75 'preempted_by $a1 $b1' "B's newcomer $b1 ($pb) to preempt A's flat trial $a1 ($pa) by rank"
pass "flat curve, no shield: $(grep -h "job $b1 may preempt job $a1" "$log" | head -1 | sed 's/.*: job /job /')"
wait_until 40 '[ "$(job_state $b1)" = RUNNING ] || [ "$(job_field $b1 JobState)" = COMPLETED ]' "B's newcomer to run"
grep -q "may preempt job $b0" "$log" && fail "B's newcomer preempted B's own shielded trial $b0"
[ "$(job_state "$b0")" = RUNNING ] || fail "B's honest trial $b0 is $(job_state "$b0")"
scancel "$a1" "$b1" 2>/dev/null
wait_until 30 '[ "$(squeue -h -o %i | wc -l)" = 1 ]' "the queue to hold only B's honest trial"

# 2. A slowly improving curve with a forecast: shielded, but only up to twice A's priority.
a2=$(a_trial slow 40000 0.2) || fail "sbatch as $A"
wait_until 40 'assessed $a2 && comment $a2 | grep -q "decision=preemptable.*utility=[0-9]*\.*[0-9]*[1-9]"' \
    "A's slow trial to be assessed preemptable with a utility above 0"
pa=$(job_field "$a2" Priority)
pass "A's slow trial $a2, priority $pa: $(comment "$a2" | cut -c1-200)"
b2=$(submit_as $B --array=0-1 --gres=gpu:1 --explore=newcomer2 --explore-max-steps=3000 --wrap 'sleep 20') ||
    fail "sbatch as $B"
b2_0=$(squeue -h -r -j "${b2}_0" -o %A 2>/dev/null | head -1)
[ -n "$b2_0" ] || b2_0=$b2
wait_until 20 '[ "$(job_field $b2_0 Priority)" -gt $((2 * pa)) ] 2>/dev/null' \
    "B's array task to rank above twice A's $pa"
pb=$(job_field "$b2_0" Priority)
wait_until 75 'grep -q "may preempt job $a2: .*rank margin 1" "$log" && [ "$(job_field $a2 Restarts)" -ge 1 ]' \
    "B's array task ($pb > 2 x $pa) to preempt A's shielded trial $a2"
pass "shield bounded by A's priority: $(grep -h "may preempt job $a2" "$log" | head -1 | sed 's/.*: job /job /')"
grep -h "may preempt job $a2" "$log" | head -1 | grep -q "job \($b2\|$b2_0\|$((b2 + 1))\) may" ||
    fail "A's trial $a2 was preempted by a job not B's: $(grep -h "may preempt job $a2" "$log" | head -1)"
[ "$(job_field "$b0" Restarts)" = 0 ] || fail "B's honest trial $b0 was preempted"
scancel "$a2" "$b2" "$b0" 2>/dev/null
pass "A's reports never kept B's trials off the GPU beyond what A's priority allows"
