#!/bin/bash
# Attack: user A floods the queue with cheap two-node jobs (harmless to the running jobs, so the
# placement planner (placement_window) prefers them per GPU) to keep user B's higher-priority job,
# which would lose more to contention, from ever starting. What the design guarantees
# (doc/placement.md, "The planner in slurmctld"):
#  - one of A's jobs is raised only just above the job it passes (B's priority + 1), never more;
#  - B's job is passed for at most placement_pass_limit seconds (here 10): then it is placed in
#    priority order, A's jobs are no longer raised, and when the jobs may start B's starts first.
# Two real users on 4 nodes x 4 GPUs; the room is for one two-node job at a time.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
require_users
# hostile_place_pass_flood_site.sh runs this under site_factor/explsched (the raise is a lift of
# the site factor), with users of its own (tests run in parallel)
a=esh_flood_a b=esh_victim_b
[ "${EXPLSCHED_TEST_SITE_FACTOR:-0}" = 1 ] && a=esh_sflood_a b=esh_svictim_b
make_user $a
make_user $b
new_net_table "Bully Victim Cheap" "1.0 1.0 1.0" "0.33 1.0 0.33" "1.0 1.0 1.0" || fail "writing the pair table"
start_cluster --nodes 4 --gpus 4 --log-level verbose \
    --params "rerank_period=1,placement=yes,net_table=$NET_TABLE,placement_window=64,placement_pass_limit=10"
chmod o+x "$CLUSTER_DIR" 2>/dev/null
if [ "${EXPLSCHED_TEST_SITE_FACTOR:-0}" = 1 ]; then  # slurmdbd's accounting: each user an account
    cluster=$(sed -n 's/^ClusterName=//p' "$SLURM_CONF")
    sacctmgr -i add account esh_sflood_acct cluster="$cluster" >/dev/null &&
        sacctmgr -i add user $a,$b account=esh_sflood_acct cluster="$cluster" >/dev/null ||
        fail "sacctmgr could not add the users"
fi
work=$CLUSTER_DIR/tmp

# A's Bully on n1,n2 (two GPUs each) and single-node holders on n3 (two GPUs) and n4 (four):
# three nodes with two free GPUs.
bully=$(submit_as $a -N 2 --gres=gpu:2 --nodelist=n1,n2 -J Bully --wrap 'sleep 600')
h3=$(submit_as $a -w n3 --gres=gpu:2 -J hold --wrap 'sleep 600')
h4=$(submit_as $a -w n4 --gres=gpu:4 -J hold --wrap 'sleep 600')
wait_until 20 '[ "$(job_state $bully)" = RUNNING ] && [ "$(job_state $h3)" = RUNNING ] && [ "$(job_state $h4)" = RUNNING ]' \
    "A's Bully and holders running"

# B's Victim (hurt by Bully wherever it fits) and A's flood of eight Cheap jobs (nice: lower
# priority), all waiting for a start time so the rounds plan them again and again.
victim=$(submit_as $b -N 2 --gres=gpu:2 -J Victim --begin=now+3600 --wrap 'sleep 600')
[ -n "$victim" ] || fail "user B could not submit"
flood=()
for i in 1 2 3 4 5 6 7 8; do
    flood+=("$(submit_as $a -N 2 --gres=gpu:2 -J Cheap --nice=100 --begin=now+3600 --wrap 'sleep 600')")
done
all=$(IFS=,; echo "${flood[*]}")
wait_until 30 'comment $victim | grep -q "^placement: passed this round by JobId="' \
    "B's job passed by one of A's (now '\$(comment $victim)')"
t0=$(date +%s)
pv=$(prio "$victim")
raised=""
for j in "${flood[@]}"; do
    if comment "$j" | grep -q "before JobId=$victim"; then raised=$j; fi
done
[ -n "$raised" ] || fail "none of A's jobs says it goes before B's"
pr=$(prio "$raised")
[ "$pr" = $((pv + 1)) ] || fail "A's job $raised raised to $pr, B's is $pv: more than just above"
n_pinned=0
for j in "${flood[@]}"; do case "$(job_field $j ReqNodeList)" in ""|"(null)") ;; *) n_pinned=$((n_pinned + 1));; esac; done
[ "$n_pinned" = 1 ] || fail "$n_pinned of A's jobs pinned, room for one"
pass "A's job $raised passes B's $victim, raised to $pr (B's $pv + 1), one of A's 8 pinned"

# Within the pass limit (10 s) B's job is placed, at the next round once overdue (a round a
# second), and A's are no longer raised. Counted in rounds (the plugin's "ranked" line in the
# slurmctld log), not in seconds: beside other cluster tests a round can come late.
rounds() { grep -c ': ranked [0-9]* jobs' "$CLUSTER_DIR/log/slurmctld.log"; }
sleep $((t0 + 10 - $(date +%s) > 0 ? t0 + 10 - $(date +%s) : 0))
r_due=$(rounds)
wait_until 90 'comment $victim | grep -q "^placement: nodes "' \
    "B's job placed once overdue (now '\$(comment $victim)')"
waited=$(($(date +%s) - t0))
late=$(($(rounds) - r_due))
[ "$late" -le 3 ] || fail "B's job was still passed for $late rounds after its 10 s limit (${waited}s in all)"
wait_until 20 '[ "$(prio $raised)" -lt "$(prio $victim)" ]' "A's raise dropped"
for j in "${flood[@]}"; do
    comment "$j" | grep -q "before JobId" && fail "A's job $j still goes before another: '$(comment $j)'"
done
pass "B's job placed after being passed ${waited}s, $late rounds after its limit: '$(comment $victim)'"

# Everything may start now: B's job starts, A's wait for the room.
scontrol update jobid="$victim" StartTime=now || fail "scontrol update"
for j in "${flood[@]}"; do scontrol update jobid="$j" StartTime=now || fail "scontrol update"; done
wait_until 20 '[ "$(job_state $victim)" = RUNNING ]' "B's job running"
running_a=$(squeue -h -j "$all" -t RUNNING | wc -l)
[ "$running_a" = 0 ] || fail "$running_a of A's flood started before the room was B's"
pass "B's job runs first; A's 8 wait"
scontrol ping >/dev/null || fail "slurmctld is not responding"
scancel "$victim" "${flood[@]}" "$bully" "$h3" "$h4"
