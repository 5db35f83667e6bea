#!/bin/bash
# The placement planner in slurmctld (placement_window, doc/placement.md): of two pending two-node
# jobs with room for one, the one that loses less to contention per GPU is placed and started
# first even though its priority is lower (priority/explsched raises it just above the job it
# passes, and Slurm's scheduler starts it first); the passed job says so, and once it has been
# passed for placement_pass_limit seconds it is placed in priority order.
# 4 nodes x 4 GPUs; a test-side model slows Victim (0.1 s -> 0.3 s a step) beside Bully.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster

new_net_table "Bully Victim Friend" "1.0 1.0 1.0" "0.33 1.0 0.33" "1.0 1.0 1.0" || fail "writing the pair table"
start_cluster --nodes 4 --gpus 4 \
    --params "rerank_period=1,placement=yes,net_table=$NET_TABLE,placement_window=8,placement_pass_limit=12"

write_contention_model
plan_bully_and_holders
plan_friend_first

# No job is passed for long: the same pair waiting for a later start time is planned every round;
# Friend goes first until Victim has been passed for placement_pass_limit (12 s), then Victim is
# placed in priority order (Friend no longer raised), and when both may start Victim starts.
victim=$(submit -N 2 --gres=gpu:2 -J Victim -o victim.out --begin=now+3600 --export=ALL,STEPS=20,HURT_BY=Bully model.sh)
friend=$(submit -N 2 --gres=gpu:2 -J Friend -o friend.out --begin=now+3600 --nice=500 --export=ALL,STEPS=20 model.sh)
wait_until 10 'comment $victim | grep -q "^placement: passed this round by JobId=$friend "' \
    "Victim passed by Friend (now '\$(comment $victim)')"
t0=$(date +%s)
# The raise holds from round to round while Friend passes Victim: Friend is planned at the
# ranking's priority, not the raised one (else it would pass nobody the next round, lose the
# raise, and pass again the round after).
for i in 1 2 3 4 5 6; do
    sleep 1
    cv=$(comment "$victim"); pf=$(prio "$friend"); pv=$(prio "$victim")
    case "$cv" in
        "placement: passed this round by JobId=$friend "*) ;;
        "placement: nodes "*) break ;;  # overdue already (placement_pass_limit)
        *) fail "second $i: Victim's SystemComment became '$cv' while Friend passes it" ;;
    esac
    [ "$pf" -gt "$pv" ] || fail "second $i: Friend's raise dropped ($pf, Victim $pv) while it passes Victim"
done
pass "Friend stays raised above Victim ($pf > $pv) and Victim stays passed, round after round"
wait_until 30 'comment $victim | grep -q "^placement: nodes "' \
    "Victim placed once overdue (now '\$(comment $victim)', Friend '\$(comment $friend)')"
waited=$(($(date +%s) - t0))
[ "$waited" -ge 10 ] || fail "Victim placed after being passed for only ${waited}s (limit 12 s)"
cf=$(comment "$friend")
[ "$cf" = "placement: no 2 nodes with 2 free GPUs and 1 free CPU each now" ] || fail "Friend's SystemComment: '$cf'"
wait_until 5 '[ "$(prio $victim)" -gt "$(prio $friend)" ]' "Friend's raise dropped (priorities \$(prio $victim), \$(prio $friend))"
scontrol update jobid="$victim" StartTime=now || fail "scontrol update StartTime"
scontrol update jobid="$friend" StartTime=now || fail "scontrol update StartTime"
wait_until 20 '[ "$(job_state $victim)" = RUNNING ]' "Victim running"
[ "$(job_state $friend)" = PENDING ] || fail "Friend is $(job_state $friend), want PENDING"
pass "Victim passed ~${waited}s, then placed first ('$(comment $victim)') and started; Friend: '$cf'"
scancel "$victim" "$friend"
wait_until 30 '[ -z "$(squeue -h -j $victim,$friend 2>/dev/null)" ]' "Victim and Friend gone"

# The control: placement_window=1 (priority order, scontrol reconfigure): the same two jobs, and
# the higher-priority Victim is placed; Friend waits.
sed -i 's/placement_window=8/placement_window=1/' "$SLURM_CONF"
scontrol reconfigure || fail "scontrol reconfigure"
sleep 2
victim=$(submit -N 2 --gres=gpu:2 -J Victim -o /dev/null --begin=now+3600 --export=ALL,STEPS=1 model.sh)
friend=$(submit -N 2 --gres=gpu:2 -J Friend -o /dev/null --begin=now+3600 --nice=500 --export=ALL,STEPS=1 model.sh)
wait_until 10 '[ -n "$(req_nodes $victim | grep -v null)" ]' "Victim placed (window 1; '\$(comment $victim)')"
cv=$(comment "$victim"); cf=$(comment "$friend")
echo "$cv" | grep -q "^placement: nodes .*predicted 0.35 of isolated" || fail "window 1: Victim's SystemComment '$cv'"
[ "$cf" = "placement: no 2 nodes with 2 free GPUs and 1 free CPU each now" ] || fail "window 1: Friend's SystemComment '$cf'"
pass "placement_window=1: Victim placed first ('$cv'), Friend: '$cf'"
scancel "$victim" "$friend" "$bully" "$h3" "$h4"

