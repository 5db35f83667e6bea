#!/bin/bash
# GPU types inside slurmctld: two node types (n1: 2 x gpu:v100, n2: 2 x gpu:k80), Gavel's
# throughput table (throughput_table=) and --explore-model naming one of its rows. Two trials with
# the same curve both run on the v100 node and are requeued; one then waits for a k80 (its request
# updated to gpu:k80), the other for a v100. The one that would run on a k80 is valued at its
# v100-measured speed times the table's k80/v100 ratio for its model, so it ranks lower, and its
# SystemComment and `explsched why` say on which type and by which row. A model missing from the
# table is not scaled, and `why` says that too.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
table="$top_srcdir/../shared/data/throughputs/gavel_simulation_throughputs.json"
[ -r "$table" ] || skip "Gavel's throughput table not found ($table; ../shared/data is missing)"
table=$(cd "$(dirname "$table")" && pwd)/$(basename "$table")
model='ResNet-50 (batch size 64)'
# The table's figures for the model (isolated steps/s, one GPU): k80 / v100.
ratio=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); k=\"('$model', 1)\"; print('%.4g' % (d['k80'][k]['null'] / d['v100'][k]['null']))" "$table") \
    || fail "cannot read the model's row from $table"
pass "throughput table: '$model' on k80 = ${ratio}x v100"

# utility_horizon=60: a trial's gain over the next minute, far from its max_steps on either type.
start_cluster --nodes 2 --gpus 2 --gpu-types 'v100:1,k80:1' --explschedd \
    --params "rerank_period=1,min_run=0,utility_horizon=60,throughput_table=$table"
grep -q '^NodeName=n1 .*Gres=gpu:v100:2' "$CLUSTER_DIR/slurm.conf" || fail "cluster.sh --gpu-types: n1 is not a v100 node"
grep -q '^NodeName=n2 .*Type=k80 ' "$CLUSTER_DIR/gres.conf" || fail "cluster.sh --gpu-types: n2 is not a k80 node"
report() { "$top_builddir/src/cli/explsched" report --retries 2 "$@"; }
why() { "$top_builddir/src/cli/explsched" why "$@"; }
comment() { scontrol show job "$1" | sed -n 's/^ *SystemComment=//p'; }

opts=(--explore=gt --explore-metric=loss:min --explore-max-steps=100000 --explore-on-hopeless=none
    "--explore-model=$model")
a=$(submit --gres=gpu:v100:1 "${opts[@]}" --wrap 'sleep 600')
b=$(submit --gres=gpu:v100:1 "${opts[@]}" --wrap 'sleep 600')
wait_until 20 '[ "$(job_state $a)" = RUNNING ] && [ "$(job_state $b)" = RUNNING ]' "both trials running"
[ "$(job_field $a NodeList)" = n1 ] && [ "$(job_field $b NodeList)" = n1 ] || fail "the trials do not run on the v100 node"

# The same curve for both, as a trial 400 steps in would have reported it (root may report for
# any job): loss = 0.05 + 6 * step^-0.5.
curve() {
    local job=$1 s m
    for s in 50 100 150 200 250 300 350 400; do
        m=$(awk -v s="$s" 'BEGIN { printf "%.6f", 0.05 + 6.0 * s ^ (-0.5) }')
        report --job "$job" --step "$s" --metric "$m" --throughput 10 >/dev/null || fail "report for job $job refused"
    done
}
curve "$a"
curve "$b"
for j in $a $b; do
    wait_until 15 'comment $j | grep -q "points=8 .*gpu=v100 gpu_value=same-type"' "job $j valued on v100 (running there)"
done
pass "running on n1: $(comment $a | grep -o 'utility=[^ ]* .*gpu_value=[^ ]*')"
why "$a" | grep -q "GPU type: valued on v100 at its speed measured there" || fail "why $a does not say v100: $(why $a)"

# Both requeued; blockers take every GPU while the requeued trials wait out their BeginTime.
scontrol requeue "$a,$b" || fail "requeue failed"
wait_until 15 '[ "$(job_state $a)" = PENDING ] && [ "$(job_state $b)" = PENDING ]' "both trials pending again"
blk1=$(submit --gres=gpu:v100:2 -w n1 --wrap 'sleep 600')
blk2=$(submit --gres=gpu:k80:2 -w n2 --wrap 'sleep 600')
wait_until 30 '[ "$(job_state $blk1)" = RUNNING ] && [ "$(job_state $blk2)" = RUNNING ]' "blockers running"
scontrol update jobid="$a" TresPerNode=gres:gpu:k80:1 || fail "cannot make job $a ask for a k80"
# 22.05 prints the request as gres:gpu:k80:1, 24.11 as gres/gpu:k80:1.
scontrol show job "$a" | grep -Eq 'TresPerNode=gres[:/]gpu:k80:1' || fail "job $a does not ask for a k80"

wait_until 20 'comment $a | grep -q "gpu=k80 gpu_value=scaled:[0-9.e-]*:v100"' "job $a valued on k80, measured on v100"
wait_until 20 'comment $b | grep -q "gpu=v100 gpu_value=same-type"' "job $b valued on v100"
sleep 2
ca=$(comment "$a"); cb=$(comment "$b")
echo "    job $a: $ca"
echo "    job $b: $cb"
got=$(echo "$ca" | sed -n 's/.*gpu_value=scaled:\([^:]*\):v100.*/\1/p')
awk -v g="$got" -v r="$ratio" 'BEGIN { exit !(g > 0 && (g - r) ^ 2 < (0.001 * r) ^ 2) }' \
    || fail "job $a scaled by $got, not the table's $ratio"
pass "job $a (waits for a k80) is valued on k80: its v100 speed x $got, the table's ratio"
ua=$(echo "$ca" | sed -n 's/.* utility=\([^ ]*\) .*/\1/p'); ub=$(echo "$cb" | sed -n 's/.* utility=\([^ ]*\) .*/\1/p')
awk -v a="$ua" -v b="$ub" 'BEGIN { exit !(a < b) }' || fail "utility on k80 ($ua) is not below utility on v100 ($ub)"
pa=$(job_field "$a" Priority); pb=$(job_field "$b" Priority)
[ "$pa" -lt "$pb" ] || fail "job $a (k80) priority $pa is not below job $b (v100) priority $pb"
pass "the table's direction: utility $ua < $ub, priority $pa < $pb (k80 below v100)"

wa=$(why "$a"); wb=$(why "$b")
echo "$wa" | sed -n 's/^/    /; /GPU type/p'
echo "$wa" | grep -qF "valued on k80: speed measured on v100 x" || fail "why $a does not name k80: $wa"
echo "$wa" | grep -qF "(throughput table: '$model' on k80 = " || fail "why $a does not name the table row: $wa"
echo "$wb" | grep -qF "GPU type: valued on v100 at its speed measured there" || fail "why $b does not name v100: $wb"
pass "explsched why names the type each trial is valued on and the table row"

# A model the table lacks: the documented fallback (no scaling), said in the comment and by why.
c=$(submit --gres=gpu:k80:1 --explore=gt --explore-metric=loss:min '--explore-model=NoSuchModel 7' --wrap 'sleep 600')
wait_until 15 'comment $c | grep -q "gpu=k80 gpu_value=model-not-in-table"' "job $c: model not in the table"
why "$c" | grep -qF "'NoSuchModel 7' is not a row of the throughput table: not scaled" \
    || fail "why $c does not say the model is missing: $(why $c)"
pass "a model missing from the table: not scaled, and why says so"

# The k80 node frees up. (Job a stays pending: Slurm 22.05 marks a requeued job whose TresPerNode
# was updated BadConstraints once it is considered for nodes.) A trial asking for any GPU and
# started on the k80 node is valued on the type of the GPUs it holds, read from its node.
scancel "$c" "$blk2"
d=$(submit --gres=gpu:1 -w n2 "${opts[@]}" --wrap 'sleep 600')
wait_until 40 '[ "$(job_state $d)" = RUNNING ]' "job $d running"
wait_until 15 'comment $d | grep -q "gpu=k80 gpu_value=same-type"' "job $d (untyped request) valued on k80, where it runs"
why "$d" | grep -qF "GPU type: valued on k80 at its speed measured there" || fail "why $d does not say k80: $(why $d)"
pass "an untyped request running on n2 is valued on k80, the type of its node's GPUs"
