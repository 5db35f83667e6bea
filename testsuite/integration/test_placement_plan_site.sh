#!/bin/bash
# The placement planner under priority/multifactor with site_factor/explsched (doc/placement.md,
# "The planner in slurmctld"): multifactor computes the priority, so a job placed before a
# higher-priority one is raised by adding the difference to its site factor (sprio's SITE) and
# having multifactor recompute its priority at once; the lift stays through multifactor's cycles
# while the job passes someone, and goes when it passes nobody. The first part is
# test_placement_plan.sh's (Friend placed and started before Victim). PriorityCalcPeriod=1 (a
# minute, the least): about two minutes in all.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
for p in mariadbd slurmdbd; do _cluster_sbin $p >/dev/null || skip "$p is not installed (mariadb-server, slurmdbd)"; done

new_net_table "Bully Victim Friend" "1.0 1.0 1.0" "0.33 1.0 0.33" "1.0 1.0 1.0" || fail "writing the pair table"
start_cluster --nodes 4 --gpus 4 --site-factor --log-level verbose --conf PriorityCalcPeriod=1 \
    --conf PriorityFlags=ACCRUE_ALWAYS \
    --params "rerank_period=1,placement=yes,net_table=$NET_TABLE,placement_window=8,placement_pass_limit=600"
log=$CLUSTER_DIR/log/slurmctld.log
grep -q "site_factor/explsched" "$log" || fail "slurmctld did not load site_factor/explsched"
site() { sprio -h -j "$1" -o "%30S" 2>/dev/null | tr -d ' '; }
stored() { grep -c "stored [0-9]* site factors" "$log"; }

write_contention_model
plan_bully_and_holders
plan_friend_first
grep -q "JobId=$friend placed before JobId=$victim .*(site factor lifted by [0-9]*)" "$log" ||
    fail "slurmctld's log does not say Friend's site factor was lifted"

# The same pair waiting for a later start time: planned every round, Friend keeps passing Victim
# (placement_pass_limit=600), and its lift shows in sprio's SITE column (PriorityFlags=
# ACCRUE_ALWAYS: sprio lists jobs before their begin time too).
victim=$(submit -N 2 --gres=gpu:2 -J Victim -o /dev/null --begin=now+3600 --export=ALL,STEPS=1,HURT_BY=Bully model.sh)
friend=$(submit -N 2 --gres=gpu:2 -J Friend -o /dev/null --begin=now+3600 --nice=500 --export=ALL,STEPS=1 model.sh)
wait_until 10 'comment $friend | grep -q "; before JobId=$victim$" && [ "$(prio $friend)" -gt "$(prio $victim)" ]' \
    "Friend placed before Victim and above it (now '\$(comment $friend)', priorities \$(prio $friend), \$(prio $victim))"
sv=$(site "$victim"); sf=$(site "$friend")
[ -n "$sv" ] && [ -n "$sf" ] && [ "$sf" -gt "$sv" ] || fail "sprio SITE: Friend '$sf', Victim '$sv' (no lift shown)"
pass "Friend before Victim: priorities $(prio $friend) > $(prio $victim); sprio SITE $sf (lifted) vs $sv"

# Through multifactor's cycle (site_factor_update, then its own recompute of every priority):
# Friend stays above Victim, its lift still in its site factor.
n=$(stored)
wait_until 130 '[ "$(stored)" -gt "$n" ]' "multifactor's next cycle (PriorityCalcPeriod=1)"
sleep 3  # multifactor (fair tree) recomputes the priorities after the site factors, lock released between
pf=$(prio "$friend"); pv=$(prio "$victim"); sf2=$(site "$friend"); sv2=$(site "$victim")
[ "$pf" -gt "$pv" ] || fail "after multifactor's cycle Friend's priority $pf is not above Victim's $pv"
[ "$sf2" -gt "$sv2" ] || fail "after multifactor's cycle sprio SITE: Friend $sf2, Victim $sv2 (lift lost)"
comment "$friend" | grep -q "; before JobId=$victim$" || fail "Friend's SystemComment: '$(comment $friend)'"
pass "after multifactor's cycle: priorities $pf > $pv; SITE $sf2 vs $sv2"

# Victim goes: Friend passes nobody, its lift is dropped and multifactor recomputes it at once.
scancel "$victim"
wait_until 10 'grep -q "JobId=$friend passes nobody now: its site factor lift of [0-9]* dropped" "$log"' \
    "Friend's lift dropped in slurmctld's log"
sf3=$(site "$friend"); pf3=$(prio "$friend")
[ "$sf3" = "$sv2" ] || fail "Friend's SITE $sf3 after the drop, want Victim's $sv2 (the same jobs' site factor)"
[ "$pf3" -lt "$pv" ] || fail "Friend's priority $pf3 after the drop, want below Victim's $pv (nice 500)"
pass "Victim gone: Friend's lift dropped: SITE $sf3, priority $pf3"
scancel "$friend" "$bully" "$h3" "$h4"
