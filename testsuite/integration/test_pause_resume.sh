#!/bin/bash
# Pause and resume (freeze-thaw) on the live cluster, with an array sweep: a late bloomer (flat,
# then its loss falls, ending as the sweep's best) is paused early while the sweep's other trials
# want its GPU — requeued and held with its checkpoint —, resumed (our hold released) once GPUs are
# free, continues from its checkpoint (its reported steps go on, never from 0), and completes as the
# sweep's best. SystemComment, slurmctld's log and `explsched why` say paused, then resumed.
# An operator's hold on a paused trial is never released by ExplSched (second sweep).
#
# Settings: hopeless_probability=0 — no trial is ever stopped as hopeless, and a paused trial's
# stop is never final (its chance to beat the best must fall below 1e-9, which the heavy-tailed
# forecast never gives): the flat bloomer is paused (pause_probability 0.2: its chance is below
# it) instead of being stopped; with the default 0.02 its optimistic bound (a flat curve's) would
# soon not beat the sweep's best and the paused trial would be stopped for good, which is the
# design (a plateau that cannot matter is not worth a thaw), not what this test is about.
# min_expected_gain=0 for the same reason: tasks 1-3 end 0.05 apart, and with the default (0.005)
# the two behind would be judged near ties of the first and paused too.
# min_run=0 and pause_min_progress=0.1 (default): it may be paused from step 150 of 1,500.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
[ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
start_cluster --nodes 1 --gpus 2 --explschedd \
    --params rerank_period=1,min_run=0,grace_time=3,hopeless_probability=0,min_expected_gain=0,hopeless_action=requeue
cli="$top_builddir/src/cli/explsched"
log="$CLUSTER_DIR/log/slurmctld.log"

# Task 0 is the late bloomer: loss ~0.61 (flat) up to step 900, then falls to 0.1 by step 1,500.
# Tasks 1-3 are steady power laws ending near 0.38, 0.43, 0.48.
cat >trial.sh <<EOS
#!/bin/bash
t=\$SLURM_ARRAY_TASK_ID
case \$t in
    0) args="--a 0.6 --b 0.3 --drop 900 --after 0.1" ;;
    *) args="--a 0.\$((25 + 5 * t)) --b 3" ;;
esac
exec /usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py \$args --steps 1500 --every 0.2 \\
    --checkpoint \$PWD/ckpt.\$SWEEP.\$t --acks \$PWD/acks.\$SWEEP.\$t "\$@"
EOS
chmod +x trial.sh
job=$(SWEEP=a submit --array=0-3 --gres=gpu:1 --explore=bloom --explore-max-steps=1500 --open-mode=append \
    -o "trial.%a.out" ./trial.sh)
bloomer="${job}_0"
comment() { scontrol show job "$1" | sed -n 's/^ *SystemComment=//p'; }

wait_until 90 'grep -q "pausing job" "$log"' "the late bloomer to be paused"
line=$(grep -h "pausing job" "$log" | head -1)
pid=$(echo "$line" | sed 's/.*pausing job \([0-9]*\).*/\1/')
[ "$pid" = "$(job_field "$bloomer" JobId)" ] || fail "paused job $pid is not the bloomer $bloomer: $line"
pass "paused: $(echo "$line" | cut -d' ' -f2-)"
wait_until 30 '[ "$(job_state $bloomer)" = PENDING ] && [ "$(job_field $bloomer Priority)" = 0 ]' \
    "the paused bloomer to be pending and held"
wait_until 20 'comment $bloomer | grep -q "decision=pause"' "the paused bloomer's SystemComment"
pass "paused bloomer: $(job_field $bloomer Reason); $(comment $bloomer | cut -c1-200)"
why=$("$cli" why "$pid" 2>&1) || fail "explsched why failed: $why"
echo "$why" | grep -qi "paus" || fail "explsched why does not say paused: $why"
pass "explsched why (paused): $(echo "$why" | grep -i paus | head -2 | tr '\n' ' ' | cut -c1-240)"
wait_until 20 'grep -q "checkpointed at step" trial.0.out' "the bloomer to checkpoint on SIGTERM"
ck=$(grep "checkpointed at step" trial.0.out | tail -1 | awk '{print $4}')
[ "$ck" -ge 150 ] && [ "$ck" -lt 900 ] || fail "the bloomer was paused at step $ck, not early (150..900)"

wait_until 120 'grep -q "resuming paused job $pid " "$log"' "the paused bloomer to be resumed"
pass "resumed: $(grep -h "resuming paused job $pid " "$log" | head -1 | cut -d' ' -f2-)"
wait_until 30 'comment $bloomer | grep -q "resumed from pause"' "the resumed bloomer's SystemComment"
pass "resumed bloomer: $(comment $bloomer | sed 's/.* reason=//' | cut -c1-220)"
wait_until 60 'grep -q "resumed from step" trial.0.out' "the bloomer to restart from its checkpoint"
rs=$(grep "resumed from step" trial.0.out | tail -1 | awk '{print $4}')
[ "$rs" -ge "$ck" ] && [ "$rs" -gt 0 ] || fail "resumed from step $rs, checkpointed at $ck"
wait_until 120 '[ -z "$(squeue -h -j $job -o %i)" ]' "the sweep to finish"
# reported steps never went back (one report per stride, continuing after the checkpoint)
sort -n -c acks.a.0 2>/dev/null || { sort -n acks.a.0 | uniq -d | head; fail "the bloomer reported a step twice (restarted)"; }
[ "$(tail -1 acks.a.0)" = 1500 ] || fail "the bloomer's last reported step is $(tail -1 acks.a.0), not 1500"
pass "the bloomer continued from its checkpoint (step $rs) to step 1500, no step reported twice"

best_task="" best=9
for t in 0 1 2 3; do
    st=$(job_field "${job}_$t" JobState)
    loss=$(sed -n 's/^done at step [0-9]* loss //p' "trial.$t.out" | tail -1)
    [ -n "$loss" ] || loss=9
    echo "    task $t: $st (final loss $loss); $(comment "${job}_$t" | cut -c1-150)"
    [ "$st" = COMPLETED ] || fail "task $t ended $st"
    if awk -v a="$loss" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$loss; best_task=$t; fi
done
[ "$best_task" = 0 ] || fail "the sweep's best is task $best_task, not the bloomer"
c=$(comment "$bloomer")
"$cli" why "$pid" >why.txt 2>&1 || true
grep -qi "resumed" why.txt || echo "$c" | grep -qi "resumed" || \
    grep -q "job $pid.*resum" "$log" || fail "nothing says resumed: $c; $(cat why.txt)"
pass "the bloomer completed as the sweep's best (loss $best); $(echo "$c" | cut -c1-160)"
# `explsched show` reads the trial's whole curve from the report store, from before its pause and
# after its resume: explschedd caches a job's submit time (owner_cache_ttl), so a resumed run's
# first reports may be filed under the instance before the requeue; none may be missing.
show=$("$cli" show "$pid" 2>&1) || fail "explsched show $pid failed: $show"
curve=$(echo "$show" | sed -n 's/^ *curve: *//p')
acked=$(sort -n -u acks.a.0 | wc -l)
first=$(sort -n acks.a.0 | head -1)
echo "$curve" | grep -q "^$acked points, step $first \.\. 1500 " ||
    fail "explsched show $pid: '$curve', not the $acked points acknowledged (steps $first .. 1500): $show"
pass "explsched show $pid after the resume: $curve"

# An operator's hold on a paused trial is theirs: ExplSched notes that the hold is no longer its
# own and never releases it, even when GPUs are free. (A user's `scontrol hold`, or an operator's
# `scontrol uhold`, of an already held job changes nothing in Slurm's record: ExplSched cannot see
# it, see the README.)
job2=$(SWEEP=b submit --array=0-3 --gres=gpu:1 --explore=held --explore-max-steps=600 --open-mode=append \
    -o "held.%a.out" ./trial.sh --steps 600 --every 0.1)
held="${job2}_0"
wait_until 60 '[ "$(job_field $held Priority)" = 0 ] && grep -q "pausing job $(job_field $held JobId) " "$log"' \
    "the flat trial of the second sweep to be paused"
hid=$(job_field "$held" JobId)
scontrol hold "$hid" || fail "scontrol hold $hid failed"
wait_until 20 'grep -q "job $hid: the hold of its pause was released or replaced" "$log"' \
    "ExplSched to see that the hold is now the operator's"
wait_until 90 '[ "$(squeue -h -j $job2 -t RUNNING,CONFIGURING,COMPLETING -o %i | wc -l)" = 0 ] && [ "$(squeue -h -j $job2 -o %i | wc -l)" = 1 ]' \
    "the second sweep's other trials to finish"
sleep 5
[ "$(job_state $held)" = PENDING ] && [ "$(job_field $held Priority)" = 0 ] ||
    fail "the operator's hold was released: $(job_state $held), Priority $(job_field $held Priority)"
grep -q "resuming paused job $hid " "$log" && fail "ExplSched released the operator's hold on $hid"
pass "an operator's hold on paused job $hid is kept (Reason=$(job_field $held Reason)) with both GPUs free"
scancel "$hid"
