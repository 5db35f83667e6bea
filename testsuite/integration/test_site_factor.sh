#!/bin/bash
# site_factor/explsched under priority/multifactor, with real accounting (MariaDB + slurmdbd) and
# two real users in two accounts: fair-share stays multifactor's, ExplSched's utility term is the
# site factor (sprio's SITE column), and of two trials with equal utility the heavy user's ranks
# below the light user's. An operator's `scontrol update job SiteFactor=` is kept (the rule of
# core/sched/site_pin.hpp), also across a slurmctld restart. PriorityCalcPeriod is whole minutes:
# this test waits for multifactor's decay cycles (about 5 minutes in all).
set -u
. "$(dirname "$0")/../hostile/lib.sh"
require_cluster
require_users
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
for p in mariadbd slurmdbd; do _cluster_sbin $p >/dev/null || skip "$p is not installed (mariadb-server, slurmdbd)"; done

heavy=esf_heavy light=esf_light
make_user $heavy
make_user $light
on_exit_hook() { remove_users; }
start_cluster --nodes 1 --gpus 2 --cpus 8 --site-factor --accounting --explschedd --log-level verbose \
    --params rerank_period=1,min_run=0 --conf PriorityCalcPeriod=1 --conf PriorityWeightFairshare=100000 \
    --conf PriorityWeightAge=0 --conf PriorityWeightPartition=0 --conf PriorityWeightJobSize=0
log=$CLUSTER_DIR/log/slurmctld.log
grep -q "site_factor/explsched" "$log" || fail "slurmctld did not load site_factor/explsched"
pass "priority/multifactor with site_factor/explsched, accounting by slurmdbd on MariaDB"

cluster=$(sed -n 's/^ClusterName=//p' "$SLURM_CONF")
sacctmgr -i add account esf_acct_heavy,esf_acct_light cluster="$cluster" fairshare=1 >/dev/null \
    && sacctmgr -i add user $heavy account=esf_acct_heavy cluster="$cluster" >/dev/null \
    && sacctmgr -i add user $light account=esf_acct_light cluster="$cluster" >/dev/null \
    || fail "sacctmgr could not add the accounts"
wait_until 20 'scontrol show assoc_mgr users=$light flags=assoc 2>/dev/null | grep -q "Account=esf_acct_light"' \
    "slurmctld to learn the associations"
as() { local u=$1; shift; as_user "$u" env SLURM_CONF="$SLURM_CONF" PATH="$PATH" "$@"; }
stored() { grep -c "stored [0-9]* site factors" "$log"; }

# The heavy user's usage: a whole node across a decay cycle (multifactor charges usage from its
# second cycle on, for the time since the one before).
used=$(as $heavy sbatch --parsable --gres=gpu:2 -c 8 --wrap 'sleep 900' | cut -d';' -f1)
[ -n "$used" ] || fail "the heavy user could not submit"
wait_until 30 '[ "$(job_state $used)" = RUNNING ]' "the heavy user's job to run"
wait_until 150 '[ "$(stored)" -gt 0 ]' "multifactor's first decay cycle"
sleep 10
scancel "$used"
wait_until 30 '[ -z "$(job_state $used)" ]' "the heavy user's job to end"
# Both GPUs held: the trials wait, and only their priorities differ.
blocker=$(submit --gres=gpu:2 --wrap 'sleep 900')
wait_until 20 '[ "$(job_state $blocker)" = RUNNING ]' "blocker running"
opts=(--gres=gpu:1 --explore=sf --explore-metric=loss:min --explore-max-steps=2000 --explore-on-hopeless=none)
th=$(as $heavy sbatch --parsable "${opts[@]}" --wrap 'sleep 2' | cut -d';' -f1)
tl=$(as $light sbatch --parsable "${opts[@]}" --wrap 'sleep 2' | cut -d';' -f1)
[ -n "$th" ] && [ -n "$tl" ] || fail "the users could not submit their trials"
# The same curve for both (root may report for any job): equal utility.
for j in $th $tl; do
    for s in 50 100 150 200 250 300 350 400; do
        m=$(awk -v s="$s" 'BEGIN { printf "%.6f", 0.1 + 4.0 * s ^ (-0.5) }')
        "$top_builddir/src/cli/explsched" report --retries 2 --job "$j" --step "$s" --metric "$m" --throughput 10 \
            >/dev/null || fail "report for job $j refused"
    done
done
wait_until 20 'scontrol show job $th | grep -q "SystemComment=.*points=8" && scontrol show job $tl | grep -q "SystemComment=.*points=8"' \
    "both trials assessed on their 8 points"
usage() { sshare -h -P -a -o User,RawUsage | awk -F'|' -v u="$1" '$1 == u { print $2 }'; }
wait_until 150 '[ "$(usage $heavy)" -gt 0 ] 2>/dev/null' "the heavy user's usage to be charged"
echo "    raw usage: heavy $(usage $heavy), light $(usage $light)"
factor() { sprio -h -j "$1" -o "%$2" | awk '{print $1}'; }  # factor JOB LETTER (S site, F fair-share, Y priority)
# The cycle that charged the usage, or the next, recomputes the fair-share factors.
wait_until 90 'awk -v a="$(factor $th F)" -v b="$(factor $tl F)" "BEGIN { exit !(a < b) }"' \
    "the heavy user's fair-share factor to fall below the light user's"
sh=$(factor $th S) sl=$(factor $tl S) fh=$(factor $th F) fl=$(factor $tl F) ph=$(factor $th Y) pl=$(factor $tl Y)
echo "    heavy's trial $th: priority $ph fair-share $fh site $sh"
echo "    light's trial $tl: priority $pl fair-share $fl site $sl"
[ -n "$sh" ] && [ "${sh%.*}" -gt 0 ] || fail "sprio shows no SITE factor for job $th: '$sh'"
[ "$sh" = "$sl" ] || fail "equal curves got different site factors ($sh vs $sl)"
pass "sprio's SITE column has ExplSched's utility term, equal for equal curves ($sh)"
awk -v a="$fh" -v b="$fl" 'BEGIN { exit !(a < b) }' || fail "fair-share: heavy $fh is not below light $fl"
[ "$ph" -lt "$pl" ] || fail "the heavy user's trial ($ph) does not rank below the light user's ($pl)"
pass "equal utility: the heavy user's trial ($ph) ranks below the light user's ($pl), by fair-share"

# A user may not set a site factor, not even on their own job (Slurm checks the operator): the
# heavy user cannot buy back the rank fair-share took.
if as $heavy scontrol update job "$th" SiteFactor=1000000 >/dev/null 2>&1; then
    fail "an unprivileged user set the SiteFactor of their own job"
fi
pass "the heavy user's scontrol update SiteFactor=1000000 on their own trial is refused"

# An operator's site factor is kept (site_factor_hold=0: for the job's life), also after a restart.
scontrol update job "$tl" SiteFactor=5 || fail "scontrol update SiteFactor refused for root"
wait_until 150 'grep -q "job $tl: site factor 5 was set by an operator" "$log"' "the plugin to notice the operator's value"
wait_until 20 '[ "$(factor $tl S)" = 5 ]' "multifactor to recompute with the operator's value"
n2=$(stored)
wait_until 90 '[ "$(stored)" -gt "$n2" ]' "the next decay cycle"
sleep 1
[ "$(factor $tl S)" = 5 ] || fail "the operator's site factor was overwritten: $(factor $tl S)"
other=$(factor $th S)
[ "${other%.*}" -gt 5 ] || fail "the other trial's site factor is not ExplSched's: $other"
grep -q "job $th: site factor .* was set by an operator" "$log" && fail "the user's refused attempt pinned job $th"
pass "an operator's SiteFactor=5 is kept by the next cycles (the other trial has ExplSched's: $other)"
grep -q "^$tl .* site_pinned " "$CLUSTER_DIR/state/explsched_actions" || fail "the pin is not in the action ledger"
cluster_restart_slurmctld "$CLUSTER_DIR" || fail "slurmctld did not restart"
n3=$(stored)
wait_until 150 '[ "$(stored)" -gt "$n3" ]' "a decay cycle after the restart"
sleep 1
[ "$(factor $tl S)" = 5 ] || fail "after a restart the operator's site factor was overwritten: $(factor $tl S)"
pass "the operator's value survives a slurmctld restart (action ledger)"
