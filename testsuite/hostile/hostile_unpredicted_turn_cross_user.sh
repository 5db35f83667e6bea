#!/bin/bash
# unpredicted_turn (here 20 s): trials the engine cannot judge yet (no forecast: too few reports,
# no milestone) share the GPUs in turns. Attack: user A's trial never reports, to keep the only
# GPU (a silent trial is never judged). What the design guarantees (policy.cpp, preempt_verdict):
#  - after its turn, a waiting trial without a forecast (user B's) takes the GPU from it;
#  - the one preempted is not starved: after B's turn, A's takes it back, and so on;
#  - a trial with a forecast never takes a turn from one without (unit test
#    trials_without_a_forecast_take_turns_under_unpredicted_turn).
# Two real users, one node, one GPU, priority/explsched and preempt/explsched.
set -u
. "$(dirname "$0")/lib.sh"
two_users esh_ut
start_cluster --nodes 1 --gpus 1 --explschedd --params rerank_period=1,min_run=0,grace_time=2,unpredicted_turn=20
log=$CLUSTER_DIR/log/slurmctld.log
open_to_users

a=$(submit_as $A --gres=gpu:1 --explore=silent --explore-max-steps=3000 --wrap 'sleep 600') || fail "sbatch as $A"
wait_until 20 '[ "$(job_state $a)" = RUNNING ] && comment $a | grep -q "code=too_few_points"' \
    "A's silent trial to run, without a forecast (now '\$(comment $a)')"
t0=$SECONDS
b=$(submit_as $B --gres=gpu:1 --explore=other --explore-max-steps=3000 --wrap 'sleep 600') || fail "sbatch as $B"
# within its turn A keeps the GPU
sleep 12
[ "$(job_state "$a")" = RUNNING ] && [ "$(job_field "$a" Restarts)" = 0 ] ||
    fail "A's trial lost the GPU within its 20 s turn ($(job_state "$a"), restarts $(job_field "$a" Restarts))"
wait_until 60 'grep -q "job $b may preempt job $a: .*has had its turn of 20 s" "$log"' "B's trial to take its turn from A's"
wait_until 30 '[ "$(job_state $b)" = RUNNING ]' "B's trial to run"
pass "B's trial $b took the GPU from A's silent $a after $((SECONDS - t0)) s: $(grep -h "job $b may preempt job $a" "$log" | head -1 | sed 's/.*: job /job /')"
wait_until 20 '[ "$(job_state $a)" = PENDING ] && comment $a | grep -q "decision=\(run\|wait\) "' \
    "A's preempted trial to wait for its next turn (now '\$(job_state $a)', '\$(comment $a)')"

# A's is not starved: after B's turn (and A's requeue delay), A's takes it back.
wait_until 90 'grep -q "job $a may preempt job $b: .*has had its turn of 20 s" "$log" && [ "$(job_state $a)" = RUNNING ]' \
    "A's trial to take its turn back from B's (A: '\$(job_state $a)', B: '\$(job_state $b)')"
[ "$(job_field "$b" Restarts)" -ge 1 ] || fail "B's trial was not requeued"
pass "A's trial $a ran again after B's turn: $(grep -h "job $a may preempt job $b" "$log" | head -1 | sed 's/.*: job /job /')"

# A non-exploratory job, or a trial with a forecast, never takes a turn (here: a plain job waits).
c=$(submit_as $B --gres=gpu:1 --wrap 'sleep 600') || fail "sbatch as $B"
sleep 30
grep -q "job $c may preempt" "$log" && fail "B's plain job $c preempted a trial: $(grep -h "job $c may preempt" "$log" | head -1)"
[ "$(job_state "$c")" = PENDING ] || fail "B's plain job $c is $(job_state "$c"), want PENDING"
pass "B's non-exploratory job $c waits: only trials without a forecast take turns"
scancel "$a" "$b" "$c" 2>/dev/null
