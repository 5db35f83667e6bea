#!/bin/bash
# Attack: user A lies about the throughput of their multi-node trial to teach placement's online
# table (placement_learn=yes) that B's jobs wreck it, hoping to keep B off A's nodes or to delay
# B's jobs. What the design guarantees (doc/placement.md, "Trust"):
#  - a claimed collapse (0.001 of alone) is learned only down to DeepShare's floor, 0.35: the
#    loss B's newcomer is charged for joining A is at most A's 4 GPUs x (1 - 0.35) = 2.60 GPU;
#  - placement only chooses among node sets that fit: when the only free GPUs are beside A's job,
#    B's job is placed there and starts;
#  - reports A cannot make (B's job, NaN, negative) are refused; slurmctld stays up.
# Two real users on 4 nodes x 4 GPUs.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
require_users
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x "$top_builddir/src/cli/explsched" ] || skip "the explsched CLI not built"
make_user esh_liar_a
make_user esh_honest_b
new_net_table "Liar Honest" "1.0 1.0" "1.0 1.0" || fail "writing the pair table"
start_cluster --nodes 4 --gpus 4 --explschedd --log-level verbose \
    --params "rerank_period=1,placement=yes,placement_learn=yes,net_table=$NET_TABLE"
log=$CLUSTER_DIR/log/slurmctld.log
chmod o+x "$CLUSTER_DIR" "$CLUSTER_DIR/munge" 2>/dev/null
chmod o+r "$SLURM_CONF" "$CLUSTER_DIR"/*.conf 2>/dev/null
work=$CLUSTER_DIR/tmp
read_slurm_user_uid
step=0
report_as() {  # report_as USER JOB THROUGHPUT: one report (the next step) -> explsched's exit status
    local u=$1 job=$2 tput=$3
    step=$((step + 10))
    as_user "$u" env SLURM_CONF="$SLURM_CONF" EXPLSCHED_MUNGE_SOCKET="$EXPLSCHED_MUNGE_SOCKET" \
        EXPLSCHED_REPORT_PORT="$EXPLSCHED_REPORT_PORT" EXPLSCHED_CONF="$EXPLSCHED_CONF" \
        EXPLSCHED_REPORT_UID="$slurm_user_uid" "$top_builddir/src/cli/explsched" report \
        --retries 2 --job "$job" --step "$step" --metric "$(awk -v s=$step 'BEGIN { printf "%.6f", 0.1 + 5 / s }')" \
        --throughput "$tput" >/dev/null 2>&1
}

# A's trial on n1,n2 (a user may name nodes; placement never changes them), alone at 10 steps/s.
liar=$(submit_as esh_liar_a -N 2 --gres=gpu:2 --nodelist=n1,n2 --explore=liesweep --explore-metric=loss:min \
    --explore-max-steps=1000000 --explore-on-hopeless=none --explore-model=Liar --wrap 'sleep 600')
[ -n "$liar" ] || fail "user A could not submit"
wait_until 20 '[ "$(job_state $liar)" = RUNNING ]' "A's trial running"
for i in 1 2 3 4; do report_as esh_liar_a "$liar" 10 || fail "A's report refused"; sleep 1.2; done
wait_until 10 "grep -q 'placement: learned JobId=$liar Liar,4,2 alone' '$log'" "slurmctld to learn A's speed alone"

# B's job joins A's nodes; A now claims its trial collapses to 0.001 steps/s.
b1=$(submit_as esh_honest_b -N 2 --gres=gpu:2 --nodelist=n1,n2 -J Honest --wrap 'sleep 600')
wait_until 20 '[ "$(job_state $b1)" = RUNNING ]' "B's first job running beside A's"
sleep 2
for i in 1 2 3 4 5; do report_as esh_liar_a "$liar" 0.001 || fail "A's report refused"; sleep 1.2; done
wait_until 10 "grep -q 'placement: learned JobId=$liar Liar,4,2 beside Honest,4,2: 0.00 of alone' '$log'" \
    "slurmctld to take A's claim"
pass "A's claim reached the table: $(grep -o "learned JobId=$liar Liar,4,2 beside.*" "$log" | tail -1)"

# Reports A may not make (for B's job, a negative speed) are refused; NaN or infinite speeds teach
# nothing (a NaN throughput is "not measured": the report itself is A's own business).
report_as esh_liar_a "$b1" 1 && fail "A reported for B's job"
report_as esh_liar_a "$liar" -5 && fail "A's throughput=-5 was accepted"
n_before=$(grep -c "placement: learned JobId=$liar " "$log")
for bad in nan inf nan inf; do report_as esh_liar_a "$liar" "$bad"; sleep 1.2; done
sleep 2
n_after=$(grep -c "placement: learned JobId=$liar " "$log")
[ "$n_after" = "$n_before" ] || fail "NaN/infinite speeds were learned from ($n_before -> $n_after lines)"
pass "A's report for B's job and a negative speed are refused; NaN and infinite speeds teach nothing"

# B's first job ends; B fills n3,n4; B's next job fits only beside A's trial: it is placed there and
# starts, charged at most A's 4 GPUs (2 per node) x (1 - 0.35) for the harm A claims.
scancel "$b1"
wait_until 20 '[ -z "$(job_state $b1)" ] || [ "$(job_state $b1)" = CANCELLED ] || [ "$(job_state $b1)" = COMPLETED ]' "B's first job gone"
fill=$(submit_as esh_honest_b -N 2 --gres=gpu:4 --nodelist=n3,n4 -J Filler --wrap 'sleep 600')
wait_until 20 '[ "$(job_state $fill)" = RUNNING ]' "B's filler running on n3,n4"
b2=$(submit_as esh_honest_b -N 2 --gres=gpu:2 -J Honest --begin=now+6 --wrap 'sleep 600')
wait_until 15 'comment $b2 | grep -q "^placement: nodes n1,n2,"' "B's job placed (SystemComment '\$(comment $b2)')"
c=$(comment "$b2")
lost=$(echo "$c" | sed -n 's/.*they lose \([0-9.]*\) GPU.*/\1/p')
[ -n "$lost" ] || fail "B's job's SystemComment names no loss for joining A: '$c'"
awk -v l="$lost" 'BEGIN { exit !(l > 0 && l <= 2.60 + 1e-9) }' \
    || fail "A's claim charged B's job $lost GPUs (bounded by 4 x (1 - 0.35) = 2.60): '$c'"
pass "B's job placed beside A's trial, the claimed harm bounded by the floor: '$c'"
wait_until 30 '[ "$(job_state $b2)" = RUNNING ]' "B's job to start (A's lie must not delay it)"
pass "B's job runs on $(job_field $b2 NodeList)"
scontrol ping >/dev/null || fail "slurmctld is down"

# What slurmctld keeps across a restart (StateSaveLocation/explsched_net_learned.json, written at
# shutdown) is the floored claim, not A's 0.001: the lie does not grow by being saved and read back.
cluster_restart_slurmctld "$CLUSTER_DIR" || fail "slurmctld did not restart"
state="$CLUSTER_DIR/state/explsched_net_learned.json"
[ -f "$state" ] || fail "no learned state saved at $state"
python3 - "$state" <<'PY' || fail "the saved state holds a ratio below the floor: $(cat "$state")"
import json, sys
pairs = json.load(open(sys.argv[1]))["pairs"]
assert pairs and all(0.35 - 1e-9 <= p["ratio"] <= 1.0 for p in pairs), pairs
PY
wait_until 20 'grep -q "loaded the learned table" "$log"' "slurmctld to load the learned table"
[ "$(job_state $b2)" = RUNNING ] || fail "B's job is $(job_state $b2) after the restart"
pass "after a restart the saved claim is the floored one ($(python3 -c 'import json,sys; print([round(p["ratio"],3) for p in json.load(open(sys.argv[1]))["pairs"]])' "$state")); B's job still runs"
scancel "$liar" "$fill" "$b2"
