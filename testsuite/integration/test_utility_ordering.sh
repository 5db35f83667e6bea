#!/bin/bash
# Ordering by utility: trials whose reported curves promise more improvement per GPU-second rank
# higher and start first; priorities move as curves arrive; a non-exploratory job keeps a sane
# rank. One GPU, held by a blocker job, so every trial waits and only ranking decides.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
start_cluster --nodes 1 --gpus 1 --explschedd --params rerank_period=1,min_run=0
report() { "$top_builddir/src/cli/explsched" report --retries 2 "$@"; }

blocker=$(submit --gres=gpu:1 --wrap 'sleep 600')
wait_until 20 '[ "$(job_state $blocker)" = RUNNING ]' "blocker running"
opts=(--gres=gpu:1 --explore=ord --explore-metric=loss:min --explore-max-steps=2000 --explore-on-hopeless=none)
flat=$(submit "${opts[@]}" --wrap 'sleep 2')
mid=$(submit "${opts[@]}" --wrap 'sleep 2')
good=$(submit "${opts[@]}" --wrap 'sleep 2')
plain=$(submit --gres=gpu:1 --wrap 'sleep 2')
wait_until 10 '[ -n "$(job_field $good SystemComment)" ]' "provisional SystemComment"
p_before=$(job_field "$good" Priority)
pass "before any report: priorities flat=$(job_field $flat Priority) mid=$(job_field $mid Priority) good=$p_before plain=$(job_field $plain Priority)"

# Curves as a trial that had run for 400 steps would have reported them (root may report for any
# job): loss = a + b * step^-c, with more left to gain for "good".
curve() {  # curve JOB a b c
    local job=$1 a=$2 b=$3 c=$4 s m
    for s in 50 100 150 200 250 300 350 400; do
        m=$(awk -v a="$a" -v b="$b" -v c="$c" -v s="$s" 'BEGIN { printf "%.6f", a + b * s ^ (-c) }')
        report --job "$job" --step "$s" --metric "$m" --throughput 10 >/dev/null || fail "report for job $job refused"
    done
}
curve "$flat" 0.80 0.05 0.5
curve "$mid" 0.15 4.0 0.5
curve "$good" 0.05 6.0 0.5
wait_until 15 'scontrol show job $good | grep -q "SystemComment=.*points=8"' "job $good assessed on its 8 points"
sleep 2
pf=$(job_field "$flat" Priority); pm=$(job_field "$mid" Priority); pg=$(job_field "$good" Priority)
pass "after reports: priorities flat=$pf mid=$pm good=$pg plain=$(job_field $plain Priority)"
for j in $flat $mid $good; do echo "    job $j: $(scontrol show job $j | sed -n 's/^ *SystemComment=//p')"; done
[ "$pg" -gt "$pm" ] || fail "good ($pg) does not outrank mid ($pm)"
[ "$pm" -gt "$pf" ] || fail "mid ($pm) does not outrank flat ($pf)"
# Before any report all trials ranked alike; the curves moved them apart (the best may stay at
# the price, value 0.5, if its utility sets the upper price bound).
[ "$pm" != "$p_before" ] && [ "$pf" != "$p_before" ] || fail "priorities did not move when the curves arrived"
sprio -h -o '%i %S' | grep -q "^ *$good " || fail "sprio does not list job $good"
site=$(sprio -h -o '%i %S' | awk -v j="$good" '$1 == j {print $2}')
[ "${site%.*}" -gt 0 ] || fail "sprio shows no utility (SITE) factor for job $good: '$site'"
pass "sprio shows the utility factor (SITE column) of job $good: $site"

scancel "$blocker"
wait_until 60 '[ -z "$(squeue -h -o %i)" ]' "all jobs to finish"
order=$(for j in $flat $mid $good; do echo "$(job_field $j StartTime) $j"; done | sort | awk '{print $2}' | tr '\n' ' ')
[ "$order" = "$good $mid $flat " ] || fail "trials started in the order $order, not $good $mid $flat"
pass "trials started in utility order: $order(the non-exploratory job at $(job_field $plain StartTime))"
[ "$(job_field $plain JobState)" = COMPLETED ] || fail "the non-exploratory job did not run"
pass "the non-exploratory job ran too (no starvation)"
