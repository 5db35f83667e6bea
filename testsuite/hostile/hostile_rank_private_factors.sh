#!/bin/bash
# Attack: with PrivateData=jobs, user B reads user A's jobs' priority factors with sprio (the
# SITE column is ExplSched's utility-versus-price term: it tells how A's training goes). As
# priority/multifactor does, priority/explsched answers a non-operator only their own jobs'
# factors (operators and account coordinators see all). Prints what each user saw.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
require_users
make_user esh_prio_a
make_user esh_prio_b
start_cluster --nodes 1 --gpus 1 --params rerank_period=1 --conf PrivateData=jobs
# The users' sprio reads slurm.conf and talks to the test cluster's munged.
chmod o+x "$CLUSTER_DIR" "$CLUSTER_DIR/munge" 2>/dev/null
chmod o+r "$SLURM_CONF" "$CLUSTER_DIR"/*.conf 2>/dev/null
a=$(id -u esh_prio_a)
b=$(id -u esh_prio_b)
# Pending (not eligible for an hour) so that they are ranked and have factors.
for u in $a $a $b; do
    sbatch -Q --parsable --uid="$u" --gid="$(id -g "$u")" -D /tmp -o /dev/null --begin=now+1hour \
        --explore=s --wrap true >>"$CLUSTER_DIR/jobs" || fail "sbatch --uid=$u"
done
wait_until 20 '[ "$(sprio -h -o "%i" | wc -l)" -ge 3 ]' "factors of the 3 pending jobs (as root)"
seen_by() {  # seen_by USER -> "jobid:uid ..." of the factors USER's sprio lists
    as_user "$1" env SLURM_CONF="$SLURM_CONF" PATH="$PATH" sprio -h -o "%i:%u" 2>&1 | tr -s ' \n' ' '
}
root_sees=$(sprio -h -o "%i:%u" | tr -s ' \n' ' ')
b_sees=$(seen_by esh_prio_b)
a_sees=$(seen_by esh_prio_a)
echo "root sees: $root_sees"
echo "B ($b) sees: $b_sees"
echo "A ($a) sees: $a_sees"
echo "$b_sees" | grep -q "esh_prio_a" && fail "user B sees user A's factors: $b_sees"
echo "$b_sees" | grep -q "esh_prio_b" || fail "user B does not see their own job's factors: $b_sees"
[ "$(echo "$a_sees" | grep -o esh_prio_a | wc -l)" = 2 ] || fail "user A should see their 2 jobs: $a_sees"
pass "PrivateData=jobs: B sees only B's factors, A only A's, root all"
