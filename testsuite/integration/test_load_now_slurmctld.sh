#!/bin/bash
# The slurmctld plugins load with every symbol bound at load, inside the real slurmctld: it is
# restarted with LD_BIND_NOW=1, under which glibc binds dlopen'ed plugins eagerly (RTLD_NOW) even
# though Slurm asks for RTLD_LAZY. priority_explsched.so calls functions only the slurmctld
# executable defines, so no other process can load it this way. prep/script is left out
# (PrepPlugins=""): Slurm's own prep_script.so leaves container_g_join unresolved in slurmctld
# and would stop the restart under LD_BIND_NOW; this cluster has no prolog for it to run.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
start_cluster --nodes 1 --gpus 2 --params rerank_period=1 --log-level verbose --conf 'PrepPlugins=""'
log=$CLUSTER_DIR/log/slurmctld.log
: >"$log"
LD_BIND_NOW=1 cluster_restart_slurmctld "$CLUSTER_DIR" || fail "slurmctld did not restart under LD_BIND_NOW=1"
pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid")
tr '\0' '\n' <"/proc/$pid/environ" | grep -qx 'LD_BIND_NOW=1' || fail "slurmctld $pid does not run with LD_BIND_NOW=1"
grep -q "ExplSched priority plugin loaded" "$log" || fail "priority/explsched did not load with every symbol bound"
grep -q "preempt/explsched loaded" "$log" || fail "preempt/explsched did not load with every symbol bound"
pass "slurmctld $pid (LD_BIND_NOW=1) loaded priority/explsched and preempt/explsched"
job=$(submit --explore=bind --gres=gpu:1 --wrap 'sleep 30') || fail "sbatch failed"
wait_until 20 'grep -q "ranked [0-9]* jobs" "$log"' "a ranking round in the eagerly bound plugin"
wait_until 20 'scontrol show job "$job" | grep -q "SystemComment=explsched: .*group=bind"' "job $job ranked"
pass "the eagerly bound plugin ranks job $job"
