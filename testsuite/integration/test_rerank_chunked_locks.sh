#!/bin/bash
# The re-ranking round takes slurmctld's locks a chunk of 1,024 jobs at a time (the walk under read
# locks, the write-back under the job write lock), so an RPC waiting on the job lock waits at most
# one chunk. With 2,600 pending trials the round's log line must count at least three walk chunks
# and three write-back chunks, every trial (the last submitted included, which sits in the last
# chunk) must get its priority and SystemComment, and jobs cancelled while rounds run (between
# chunks) must neither crash slurmctld nor leave a round stuck.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
start_cluster --nodes 1 --gpus 1 --params rerank_period=1,min_run=3600 --log-level verbose \
    --conf MaxJobCount=20000
log=$CLUSTER_DIR/log/slurmctld.log
cd "$CLUSTER_DIR/tmp" || fail "no tmp"
# one running trial holds the only GPU: everything after it stays pending
first=$(submit --explore=hold --gres=gpu:1 --wrap 'sleep 600') || fail "sbatch failed"
n=2600
seq 1 "$n" | xargs -P 4 -I{} sbatch -Q -J chunk --gres=gpu:1 --explore=chunk{} -o /dev/null --wrap true \
    || fail "submitting $n trials failed"
last=$(squeue -h -r -n chunk -o %i | sort -n | tail -1)
[ "$(squeue -h -r -n chunk -t PD | wc -l)" -ge "$n" ] || fail "fewer than $n pending trials"
pass "$n trials pending behind job $first"

# churn while rounds run: cancel 300 trials one by one
squeue -h -r -n chunk -o %i | sort -n | head -300 | xargs -P 2 -n 1 scancel &
churn=$!
: >"$log.mark"
pattern="ranked ([0-9]+) jobs .* longest hold ([0-9.]+) ms of ([0-9]+)"
wait_until 60 "grep -E -q 'ranked (2[0-9]{3}) jobs .* longest hold [0-9.]+ ms of ([6-9]|[1-9][0-9])' '$log'" \
    "a round over the full queue in six or more holds"
wait "$churn"
line=$(grep -E "$pattern" "$log" | tail -1)
[[ $line =~ $pattern ]] || fail "no round line: $line"
jobs=${BASH_REMATCH[1]} longest=${BASH_REMATCH[2]} holds=${BASH_REMATCH[3]}
[ "$holds" -ge 6 ] || fail "$jobs jobs in $holds holds: expected at least 3 walk and 3 write-back chunks"
pass "a round ranked $jobs jobs in $holds holds of slurmctld's locks (longest $longest ms)"

# the last-submitted trial sits in the last chunk: ranked like the first ones
wait_until 30 "scontrol show job $last | grep -q 'SystemComment=explsched: .*group=chunk'" \
    "the last trial's SystemComment"
prio=$(squeue -h -j "$last" -o %Q)
[ "${prio:-0}" -gt 0 ] || fail "last trial $last has priority '${prio:-}'"
pass "trial $last (last chunk) ranked: priority $prio, SystemComment set"

# the cancellations (between chunks) left slurmctld up and the rounds going
before=$(grep -c "ranked [0-9]* jobs" "$log")
wait_until 30 "[ \$(grep -c 'ranked [0-9]* jobs' '$log') -ge $((before + 2)) ]" "two more rounds after the churn"
scontrol ping | grep -q UP || fail "slurmctld is not up"
grep -E "ranked ([0-9]+) jobs" "$log" | tail -1 | grep -E -q "ranked (2[0-9]{3}|1[0-9]{3}) jobs" \
    || fail "the round after the cancellations: $(grep 'ranked' "$log" | tail -1)"
pass "300 cancellations while rounds ran: slurmctld up, rounds continue"
