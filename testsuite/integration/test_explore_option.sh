#!/bin/bash
# --explore and its companion options: accepted values reach slurmctld (SystemComment written by
# priority/explsched), for single jobs and array tasks; bad values fail the submission with a
# message naming the option; the options show in sbatch --help with the [explsched] prefix.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
start_cluster --nodes 2 --gpus 2 --params rerank_period=1

help=$(sbatch --help)
for opt in explore explore-metric explore-max-steps explore-on-hopeless explore-milestones explore-model explore-lr-drops \
    kernel-sched; do
    echo "$help" | grep -q -- "--$opt" || fail "sbatch --help lacks --$opt"
done
[ "$(echo "$help" | grep -c '\[explsched\]')" -ge 6 ] || fail "help strings lack the [explsched] prefix"
pass "sbatch --help lists the options with [explsched]"

# Not eligible for an hour: pending (ranked every round) but never started.
id=$(submit --explore=g1 --explore-metric=accuracy --explore-max-steps=500 --explore-model='ResNet-50 (batch size 64)' \
    --explore-lr-drops=250,375 --begin=now+3600 --wrap true)
wait_until 10 '[ -n "$(job_field $id SystemComment)" ]' "SystemComment of job $id"
comment=$(scontrol show job "$id" | sed -n 's/^ *SystemComment=//p')
echo "$comment" | grep -q "group=g1" || fail "SystemComment lacks the group: $comment"
echo "$comment" | grep -q "metric=accuracy:max" || fail "SystemComment lacks the metric: $comment"
echo "$comment" | grep -q "max_steps=500" || fail "SystemComment lacks max_steps: $comment"
echo "$comment" | grep -qF "model=ResNet-50~(batch~size~64)" || fail "SystemComment lacks the model: $comment"
echo "$comment" | grep -qF "lr_drops=250,375" || fail "SystemComment lacks the learning-rate drops: $comment"
pass "--explore=g1 visible in slurmctld: $comment"

# Array tasks: each task (its own job record once it runs) carries the sweep.
arr=$(submit --array=0-3 --gres=gpu:1 --explore=sweep-a --wrap 'sleep 4')
wait_until 20 '[ "$(squeue -h -j $arr -r -t RUNNING -o %i | wc -l)" = 4 ]' "4 running array tasks"
for t in 0 1 2 3; do
    wait_until 5 'scontrol show job ${arr}_$t | grep -q "SystemComment=.*group=sweep-a"' \
        "array task ${arr}_$t to carry group=sweep-a in SystemComment"
done
pass "array tasks ${arr}_[0-3] carry --explore=sweep-a"

plain=$(submit --hold --wrap true)
sleep 1.5
[ -z "$(job_field "$plain" SystemComment)" ] || fail "a job without --explore got a SystemComment"
pass "jobs without --explore are left alone"

check_refused() {  # check_refused EXPECTED-TEXT sbatch-args...
    local expect=$1; shift
    local out rc
    out=$(sbatch "$@" --wrap true 2>&1); rc=$?
    [ $rc != 0 ] || fail "sbatch $* was accepted: $out"
    echo "$out" | grep -qF -- "$expect" || fail "sbatch $* refused without naming '$expect': $out"
    pass "refused: sbatch $*  ->  $(echo "$out" | grep explsched: | head -1)"
}
before=$(squeue -h -o %i | wc -l)
check_refused "--explore: 'bad value'" --explore='bad value'
check_refused "--explore: ''" --explore=
check_refused "--explore-metric: 'loss:up'" --explore=g1 --explore-metric=loss:up
check_refused "--explore-max-steps: '-5'" --explore=g1 --explore-max-steps=-5
check_refused "--explore-on-hopeless: 'kill'" --explore=g1 --explore-on-hopeless=kill
check_refused "--explore-milestones: '10,5'" --explore=g1 --explore-milestones=10,5
check_refused "--explore-max-steps needs --explore" --explore-max-steps=100
check_refused "--kernel-sched: 'fast'" --explore=g1 --kernel-sched=fast
check_refused "--explore-model: 'x;rm -rf /'" --explore=g1 '--explore-model=x;rm -rf /'
check_refused "--explore-model needs --explore" --explore-model=A3C
check_refused "--explore-lr-drops: '300,100' is not strictly increasing" --explore=g1 --explore-lr-drops=300,100
check_refused "--explore-lr-drops: last drop 900 is beyond --explore-max-steps=500" --explore=g1 \
    --explore-max-steps=500 --explore-lr-drops=100,900
check_refused "--explore-lr-drops needs --explore" --explore-lr-drops=100
after=$(squeue -h -o %i | wc -l)
[ "$before" = "$after" ] || fail "a refused submission still created a job ($before -> $after)"
pass "no job was created by a refused submission"
