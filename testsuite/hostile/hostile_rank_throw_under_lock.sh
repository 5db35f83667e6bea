#!/bin/bash
# Attack: make the re-rank throw under slurmctld's lock (a user cannot inject the throw, but a
# report that makes an allocation fail would). An exception inside the re-ranking round's locked
# section releases slurmctld's locks. The test hook EXPLSCHED_TEST_THROW_IN_ROUND=3 (slurmctld's
# environment) makes round 3 throw std::bad_alloc under the job write lock, inside the
# write-back, as an allocation failure there would. Then: the failure is logged, RPCs that need
# the job lock (sbatch, squeue) answer, and later rounds run. Before the locks were scoped,
# slurmctld deadlocked here. (Was testsuite/integration/test_rerank_throw.sh.)
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
export EXPLSCHED_TEST_THROW_IN_ROUND=3
start_cluster --nodes 1 --gpus 2 --params rerank_period=1 --log-level verbose
unset EXPLSCHED_TEST_THROW_IN_ROUND
log=$CLUSTER_DIR/log/slurmctld.log
rounds() { grep -c "ranked [0-9]* jobs" "$log"; }

wait_until 30 'grep -q "re-ranking failed: std::bad_alloc" "$log"' "the injected failure in round 3"
pass "round 3 threw inside the locked section: $(grep -m1 're-ranking failed' "$log" | sed 's/^\[[^]]*\] //')"
n=$(rounds)
job=$(timeout 20 sbatch --parsable --explore=t --gres=gpu:1 --wrap 'sleep 60') \
    || fail "sbatch hung or failed after the failed round (job write lock still held?)"
timeout 20 squeue -h -j "$job" >/dev/null || fail "squeue hung after the failed round (job read lock)"
pass "sbatch (job $job) and squeue answer after the failure"
wait_until 20 '[ "$(rounds)" -ge $((n + 2)) ]' "two more ranking rounds after the failure"
wait_until 20 'scontrol show job "$job" | grep -q "SystemComment=explsched: .*group=t"' "the new trial ranked by a later round"
pass "ranking goes on: $(( $(rounds) - n )) rounds since the failure; job $job has its SystemComment"
