#!/bin/bash
# Attack: a sweep whose checked forecasts have held earns an earlier verdict (audited_min_progress,
# 15 % of a run instead of hopeless_min_progress, 35 %); while a sweep has fewer than
# audited_min_checks checks of its own it reads its application's pooled audit. User B runs
# smooth curves of --explore-model=resnet, so B's forecasts hold (B's sweep "shared" and B's pool
# for resnet), then names A's sweep ("shared") and A's model: if that trust leaked to A, A's poor
# trial would be judged (paused) from 15 % on B's record. It is not: A's trial, identical to B's
# poor one and run beside it, is not judged before 35 % of its run, and its SystemComment never
# says its forecasts have held; B's own poor trial is judged early (B's record is real, so the
# attack was armed). Control: once A's own resnet sweep has held forecasts, A's poor trial in a
# new sweep is judged and paused before 35 %, SystemComment and `explsched why` say why and that
# the verdict is not final, and it is stopped for good only from 35 % on. Two real users, one node, four GPUs; the decisive early stop
# (early_stop_probability) is off here, so that only the audited rule can judge before 35 %.
set -u
. "$(dirname "$0")/lib.sh"
[ -x "$top_builddir/src/cli/explsched" ] || skip "the explsched CLI not built"
two_users esh_au
start_cluster --nodes 1 --gpus 4 --explschedd --params rerank_period=1,min_run=0,early_stop_probability=0
open_to_users

# trial_as USER SWEEP NAME A EVERY STRIDE: loss = A + step^-0.5 over 1000 steps of resnet, a
# report every STRIDE steps and EVERY seconds (stride 250: four reports, too few to fit, so a
# best with no forecast to check). Prints the job id.
trial_as() {
    submit_as "$1" --gres=gpu:1 --explore="$2" --explore-model=resnet --explore-max-steps=1000 \
        --explore-on-hopeless=cancel \
        --wrap "exec $trial --a $4 --b 1 --steps 1000 --every $5 --stride $6 --checkpoint $work/$3.ckpt"
}

# watch_trial JOB TAG: polls JOB's SystemComment until it ends, is paused, or its checkpoint passes
# step 500, and
# writes to $work/TAG.first the first hopeless verdict seen ("POINTS COMMENT"), to $work/TAG.held
# any comment naming held forecasts.
watch_trial() {
    local job=$1 tag=$2 c n
    : >"$work/$tag.first"
    : >"$work/$tag.held"
    for ((i = 0; i < 600; i++)); do
        c=$(comment "$job")
        case $c in *"checked forecasts have held"*) echo "$c" >>"$work/$tag.held" ;; esac
        case $c in
            *state=hopeless*)
                if [ ! -s "$work/$tag.first" ]; then
                    n=$(sed -n 's/.* points=\([0-9]*\).*/\1/p' <<<"$c")
                    echo "${n:-0} $c" >"$work/$tag.first"
                fi
                ;;
        esac
        ended "$job" && break
        [ "$(step_of "$tag")" -ge 500 ] && break
        [ -s "$work/$tag.first" ] && [ "$(state_of "$job")" = PENDING ] && break  # paused
        sleep 0.2
    done
}

# B's record: two smooth resnet trials to their ends, in "shared" and in another sweep (up to four
# checked forecasts each, at twice the step of the last: 120, 240, 480, 960; all held; pooled for
# the model, which a sweep reads while it has fewer than four of its own).
b1=$(trial_as $B shared b1 0.01 0.1 10) || fail "sbatch as $B"
b2=$(trial_as $B other b2 0.01 0.1 10) || fail "sbatch as $B"
wait_until 90 'ended $b1 && ended $b2' "B's first trials to end"
[ "$(state_of "$b1")" = COMPLETED ] || fail "B's trial $b1 ended $(state_of "$b1")"
# A's sweep of the same name and model: a best (three points, nothing to check), then a poor trial.
a1=$(trial_as $A shared a1 0.01 0.1 250) || fail "sbatch as $A"
wait_until 60 'ended $a1' "A's short best to end"
# The same poor trial in both users' "shared" sweeps, at once (loss 0.9 + step^-0.5, 10 steps
# per 0.3 s: 15-35 % of the run lasts 6 s).
ap=$(trial_as $A shared ap 0.9 0.3 10) || fail "sbatch as $A"
bp=$(trial_as $B shared bp 0.9 0.3 10) || fail "sbatch as $B"
watch_trial "$bp" bp &
watcher=$!
watch_trial "$ap" ap
wait $watcher

read -r bn bc <"$work/bp.first" || true
[ -n "${bn:-}" ] || fail "attack not armed: B's own poor trial $bp was never judged ($(comment "$bp"))"
[ "$bn" -lt 35 ] || fail "attack not armed: B's poor trial $bp first judged with $bn points (step $((bn * 10)) of 1000)"
grep -q "checked forecasts have held" "$work/bp.held" || fail "B's early verdict does not name held forecasts: $bc"
pass "B's forecasts held: B's poor trial $bp judged at step $((bn * 10)) of 1000: ${bc#*reason=}"

if [ -s "$work/ap.held" ]; then
    fail "A's trial $ap was judged on held forecasts it never had (B's?): $(head -1 "$work/ap.held")"
fi
read -r an ac <"$work/ap.first" || true
if [ -n "${an:-}" ]; then
    [ "$an" -ge 35 ] || fail "A's trial $ap judged hopeless at step $((an * 10)), before 35 %, on no record of A's: $ac"
    pass "A's trial $ap first judged at step $((an * 10)) of 1000 (hopeless_min_progress): ${ac#*reason=}"
else
    pass "A's trial $ap not judged hopeless up to step $(step_of ap) of 1000"
fi
scancel "$ap" "$bp" 2>/dev/null

# Control: A earns the record (two smooth resnet trials to their ends, sweeps "prior" and
# "prior2"); A's new sweep
# "own" (a short best, then the poor trial) reads A's pool and is judged from 15 %.
a2=$(trial_as $A prior a2 0.01 0.1 10) || fail "sbatch as $A (control)"
a4=$(trial_as $A prior2 a4 0.01 0.1 10) || fail "sbatch as $A (control)"
wait_until 90 'ended $a2 && ended $a4' "A's smooth trials to end"
a3=$(trial_as $A own a3 0.1 0.1 250) || fail "sbatch as $A (control)"
wait_until 60 'ended $a3' "A's short best in 'own' to end"
# a sibling far better than that best runs beside it (while it runs, the paused trial waits)
cq=$(trial_as $A own cq 0.001 0.3 10) || fail "sbatch as $A (control)"
cp=$(trial_as $A own cp 0.9 0.3 10) || fail "sbatch as $A (control)"
watch_trial "$cp" cp
read -r cn cc <"$work/cp.first" || true
[ -n "${cn:-}" ] || fail "control: A's poor trial $cp was never judged ($(comment "$cp"))"
[ "$cn" -lt 35 ] || fail "control: A's poor trial $cp first judged at step $((cn * 10)), not before 35 %: $cc"
held=$(head -1 "$work/cp.held")
[ -n "$held" ] || fail "control: the early verdict does not name held forecasts: $cc"
case $held in *decision=pause*) ;; *) fail "control: an early verdict that is not a pause: $held" ;; esac
pass "control: A's poor trial $cp judged at step $((cn * 10)) of 1000 on A's own record: ${held#*reason=}"
# Paused (requeued and held with its checkpoint) while its sibling runs; `explsched why` says why.
wait_until 30 '[ "$(state_of "$cp")" = PENDING ]' "A's trial $cp to be paused"
ended "$cq" && fail "control: the sibling $cq ended before the pause could be looked at"
# slurmctld says why it paused it; `explsched why` reads the trial's line as it is now: the
# verdict that paused it if no round has rewritten it yet, else why it stays paused (both say it
# is not stopped for good before hopeless_min_progress)
paused=$(grep "pausing job $cp " "$CLUSTER_DIR/log/slurmctld.log" | tail -1)
case $paused in *"checked forecasts have held"*) ;; *) fail "control: slurmctld's log does not say the pause of $cp was on held forecasts: '$paused'" ;; esac
pass "control: ${paused#*priority/explsched: }"
why_says "$cp" "checked forecasts have held\|not before hopeless_min_progress"
# Not final: not cancelled before 35 %. It resumes (when GPUs are cheap, or once its sweep has no
# other trial left to run), its curve whole across the restart (explschedd files a
# restarted run's first reports under the earlier instance; a resumed trial once kept only the
# last round's points and was never judged again), and it is stopped for good from 35 % on.
wait_until 150 'ended $cp' "A's trial $cp to end"
st=$(state_of "$cp")
[ "$st" = CANCELLED ] || fail "control: A's trial $cp ended $st at step $(step_of cp): $(comment "$cp")"
why=$(grep "cancelling [a-z]* job $cp:" "$CLUSTER_DIR/log/slurmctld.log" | tail -1)
[ -n "$why" ] || fail "control: slurmctld's log does not say why job $cp was cancelled"
[ "$(step_of cp)" -ge 350 ] || fail "control: A's trial $cp was cancelled at step $(step_of cp), before 35 %: $why"
case $why in *"checked forecasts have held"*) fail "control: a final stop on the early verdict: $why" ;; esac
pass "control: A's trial $cp stopped for good at step $(step_of cp) of 1000: ${why#*: }"
resumed=$(grep "resuming paused job $cp " "$CLUSTER_DIR/log/slurmctld.log" | tail -1)
[ -n "$resumed" ] || fail "control: A's paused trial $cp was never resumed"
pass "resumed in between: ${resumed#*(releasing our hold): }"
exit 0
