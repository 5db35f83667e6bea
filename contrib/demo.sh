#!/bin/bash
# ExplSched's demo on one Debian 12 machine (as root): installs what is missing, builds, brings up
# a local Slurm cluster (4 nodes x 4 fake GPUs; real munged, slurmctld, slurmd, explschedd) and
# runs a real exploratory sweep on it: 32 trials of a small numpy MLP (contrib/demo/train.py) over
# learning rate and width, submitted as one job array with --explore, on 16 GPUs. It shows what
# Slurm shows (squeue, sprio, scontrol show job), then runs the same sweep under Slurm's own
# priority/basic, and again under priority/basic with each trial asking an Optuna study (RDB
# storage on SQLite, shared by the trials) whether to prune -- what a user would do without
# ExplSched -- and prints the three side by side: trials preempted or stopped, the best trial's
# metric, time to reach it, GPU-hours. Then two sweeps from two users (unprivileged accounts the
# demo makes) arrive a minute apart on the same 16 GPUs under ExplSched: what happens between them
# (order across sweeps, preemptions, holds and resumes) is printed as it happens, and
# `explsched plot --group` draws each sweep into a PNG. Idempotent.
# ExplSched runs as README recommends: priority/multifactor with site_factor/explsched
# (--setup priority: the priority/explsched plugin instead).
#   contrib/demo.sh [--keep] [--dir DIR] [--only explsched|basic|optuna|two-users]
#                   [--setup site_factor|priority] [--optuna-pruner median|sha|hyperband]
#                   [--builddir DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
keep=no only="" setup=site_factor pruner=median
demo_dir=${TMPDIR:-/tmp}/explsched-demo
builddir=$top/_build
while [ $# -gt 0 ]; do
    case $1 in
        --keep) keep=yes ;;
        --dir) demo_dir=$2; shift ;;
        --only) only=$2; shift ;;
        --setup) setup=$2; shift ;;
        --optuna-pruner) pruner=$2; shift ;;
        --builddir) builddir=$2; shift ;;
        *) echo "usage: $0 [--keep] [--dir DIR] [--only explsched|basic|optuna|two-users]" \
               "[--setup site_factor|priority] [--optuna-pruner median|sha|hyperband] [--builddir DIR]" >&2; exit 2 ;;
    esac
    shift
done
step() { echo; echo "=== demo: $* ==="; }
[ "$(id -u)" = 0 ] || { echo "demo: run as root (it starts munged, slurmctld and slurmd)" >&2; exit 1; }

step "dependencies"
bash "$top/contrib/install-deps.sh"
step "build"
bash "$top/contrib/build.sh" --builddir "$builddir"
/usr/bin/python3 -c 'import optuna, sqlalchemy' || { echo "demo: python3-optuna is missing (contrib/install-deps.sh)" >&2; exit 1; }

export top_srcdir=$top top_builddir=$builddir
. "$top/testsuite/cluster/cluster.sh"
steps=3000
trials=32

# write_trial_script DIR STEP_DELAY [TRAIN_ARGS]: DIR/trial.sh, one trial of the sweep: learning
# rate and width from the array index (train.py's shuffled 8 x 4 grid), checkpoints in DIR.
write_trial_script() {
    local d=$1 delay=$2 extra=${3:-}
    cat >"$d/trial.sh" <<EOS
#!/bin/bash
echo "run_start \$(date +%s.%N)"
trap 'echo "run_end \$(date +%s.%N)"' EXIT
/usr/bin/python3 $top/contrib/demo/train.py --sweep-index \$SLURM_ARRAY_TASK_ID \\
    --steps $steps --eval-every 100 --step-delay $delay --seed 7 $extra \\
    --checkpoint $d/ckpt.\$SLURM_ARRAY_TASK_ID.npz &
child=\$!
# Slurm signals the batch shell on preemption: pass it on so train.py checkpoints.
trap 'kill -TERM \$child 2>/dev/null' TERM
wait \$child; wait \$child
EOS
    chmod 755 "$d/trial.sh"
}

# wait_sweeps JOB[,JOB...]: until none of their trials runs and none waits with a priority (a
# trial held by ExplSched has priority 0 and counts as done).
wait_sweeps() {
    for _ in $(seq 1 900); do
        [ -z "$(squeue -h -j "$1" -t RUNNING,CONFIGURING,COMPLETING -o %i)" ] && \
            [ -z "$(squeue -h -j "$1" -t PENDING -o '%i %Q' | awk '$2 != 0')" ] && return 0
        sleep 1
    done
}

# record_states JOB DIR: DIR/states ("task JobState Restarts", read by summarize.py) and
# DIR/jobids ("task JobId": each array task's own job id).
record_states() {
    local job=$1 d=$2 t line
    : >"$d/states"
    : >"$d/jobids"
    for t in $(seq 0 $((trials - 1))); do
        line=$(scontrol show job -o "${job}_$t" | tr ' ' '\n')
        echo "$t $(sed -n 's/^JobState=//p' <<<"$line") $(sed -n 's/^Restarts=//p' <<<"$line")" >>"$d/states"
        echo "$t $(sed -n 's/^JobId=//p' <<<"$line")" >>"$d/jobids"
    done
}

# One sweep under one priority plugin, on a fresh cluster in $demo_dir/<policy>.
run_sweep() {
    local policy=$1 dir=$demo_dir/$1
    local args=(--nodes 4 --gpus 4 --explschedd)
    if [ "$policy" = explsched ]; then
        args+=(--params rerank_period=2,min_run=20,grace_time=5,hopeless_action=cancel)
        # README's setup: multifactor's factors (no accounting here: fair-share is flat) plus
        # ExplSched's site factor, stored every PriorityCalcPeriod (1 minute)
        [ "$setup" = site_factor ] && args+=(--site-factor --conf PriorityCalcPeriod=1 \
            --conf PriorityWeightAge=1000 --conf PriorityWeightPartition=1000)
    else  # basic, optuna: Slurm's own scheduling
        args+=(--priority priority/basic --preempt preempt/none)
    fi
    step "$policy: local cluster"
    cluster_down "$dir" >/dev/null 2>&1 || true
    rm -rf "$dir"
    cluster_up "$dir" "${args[@]}"
    (
        . "$dir/env.sh"
        mkdir -p "$dir/sweep" && chmod 1777 "$dir/sweep"
        local optuna_args=""
        if [ "$policy" = optuna ]; then
            # The sweep's study, in a directory every trial can write (SQLite needs the directory
            # for its journal); each trial loads it, reports and asks should_prune().
            /usr/bin/python3 -c 'import optuna, sys; optuna.logging.set_verbosity(optuna.logging.WARNING)
optuna.create_study(study_name="spirals", storage=sys.argv[1], direction="minimize")' "sqlite:///$dir/sweep/optuna.db"
            chmod 666 "$dir/sweep/optuna.db"
            optuna_args="--optuna-storage sqlite:///$dir/sweep/optuna.db --optuna-study spirals --optuna-pruner $pruner"
            echo "Optuna study 'spirals' in $dir/sweep/optuna.db, $pruner pruner"
        fi
        write_trial_script "$dir/sweep" 0.01 "$optuna_args"
        cd "$dir/sweep"
        date +%s.%N >"$dir/sweep/submitted"
        job=$(sbatch --parsable --array=0-$((trials - 1)) --gres=gpu:1 --explore=spirals \
            --explore-metric=val_loss:min --explore-max-steps=$steps --open-mode=append \
            -o "$dir/sweep/trial.%a.out" "$dir/sweep/trial.sh")
        echo "submitted array job $job ($trials trials, $(sinfo -h -o %G | head -1) per node, 4 nodes)"
        sleep 20
        step "$policy: squeue (20 s in)"
        squeue -r -o '%.8i %.10K %.2t %.6M %.10Q %R' | head -40
        if [ "$policy" = explsched ]; then
            step "$policy: sprio (SITE = ExplSched's utility term)"
            sprio -o '%.10i %.10Y %.8A %.8P %.10S' | head -20
            step "$policy: scontrol show job (one trial)"
            scontrol show job "${job}_0" | grep -E "JobId|JobState|Priority|SystemComment|StartTime"
        fi
        step "$policy: waiting for the sweep"
        wait_sweeps "$job"
        record_states "$job" "$dir/sweep"
        if [ "$policy" = explsched ]; then
            echo "trials ExplSched stopped, with the reason it gave:"
            awk '$2 != "COMPLETED" {print $1}' "$dir/sweep/states" | while read -r t; do
                printf '  task %-3s %s\n' "$t" "$(scontrol show job "${job}_$t" | sed -n 's/^ *SystemComment=explsched: //p' | cut -c1-150)"
            done
        fi
    )
    if [ $keep = no ] || [ "$policy" != explsched ]; then cluster_down "$dir"; fi
}

# Two users, two sweeps of the same grid, the second a minute after the first, on the 16 GPUs
# under ExplSched (as the first arm). Trials run four times as long as in the other arms (step
# delay 0.04 s), so the sweeps overlap. Every change of a trial's state is printed as it happens.
users=(explsched-demo-alice explsched-demo-bob)
remove_demo_users() {
    local u
    for u in "${users[@]}"; do
        if id -u "$u" >/dev/null 2>&1; then
            pkill -KILL -u "$u" 2>/dev/null || true
            userdel "$u" 2>/dev/null || true
        fi
    done
}
as_demo_user() {
    local u=$1; shift
    setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --clear-groups --reset-env -- \
        env PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF="$SLURM_CONF" EXPLSCHED_CONF="$EXPLSCHED_CONF" \
        EXPLSCHED_MUNGE_SOCKET="$EXPLSCHED_MUNGE_SOCKET" EXPLSCHED_REPORT_PORT="$EXPLSCHED_REPORT_PORT" "$@"
}
run_two_users() {
    local dir=$demo_dir/two-users
    local args=(--nodes 4 --gpus 4 --explschedd --params rerank_period=2,min_run=20,grace_time=5,hopeless_action=cancel)
    [ "$setup" = site_factor ] && args+=(--site-factor --conf PriorityCalcPeriod=1 \
        --conf PriorityWeightAge=1000 --conf PriorityWeightPartition=1000)
    step "two users: local cluster"
    cluster_down "$dir" >/dev/null 2>&1 || true
    rm -rf "$dir"
    cluster_up "$dir" "${args[@]}"
    remove_demo_users
    local u
    for u in "${users[@]}"; do useradd -M -N -s /usr/sbin/nologin "$u"; done
    (
        . "$dir/env.sh"
        chmod 755 "$dir"
        if [ -f "$dir/accounting" ]; then  # multifactor's accounting: the users need associations
            local cluster
            cluster=$(sed -n 's/^ClusterName=//p' "$SLURM_CONF")
            for u in "${users[@]}"; do sacctmgr -i add user "$u" account=root_acct cluster="$cluster" >/dev/null; done
            for _ in $(seq 1 30); do
                scontrol show assoc_mgr users="${users[1]}" flags=assoc 2>/dev/null | grep -q "Account=root_acct" && break
                sleep 1
            done
        fi
        local jobs=() names=() when=(0 60) i
        for i in 0 1; do
            u=${users[$i]}
            names[$i]=${u#explsched-demo-}
            mkdir -p "$dir/${names[$i]}"
            write_trial_script "$dir/${names[$i]}" 0.04
            chown "$u" "$dir/${names[$i]}"
        done
        local t0 now elapsed line id user state reason key what
        declare -A last ran
        t0=$(date +%s)
        step "two users: $trials trials of ${names[0]} now, $trials of ${names[1]} at +60 s (16 GPUs); events"
        while :; do
            now=$(date +%s)
            elapsed=$((now - t0))
            for i in 0 1; do
                if [ -z "${jobs[$i]:-}" ] && [ "$elapsed" -ge "${when[$i]}" ]; then
                    date +%s.%N >"$dir/${names[$i]}/submitted"
                    jobs[$i]=$(cd "$dir/${names[$i]}" && as_demo_user "${users[$i]}" sbatch --parsable \
                        --array=0-$((trials - 1)) --gres=gpu:1 --explore="spirals-${names[$i]}" \
                        --explore-metric=val_loss:min --explore-max-steps=$steps --open-mode=append \
                        -o "$dir/${names[$i]}/trial.%a.out" "$dir/${names[$i]}/trial.sh")
                    printf '+%4ds  %-5s submitted array job %s (%d trials)\n' "$elapsed" "${names[$i]}" \
                        "${jobs[$i]}" "$trials"
                fi
            done
            if [ "$elapsed" -ge 66 ] && [ -z "${shown_order:-}" ]; then
                shown_order=yes
                echo "        pending trials in scheduling order at +${elapsed} s (both sweeps):"
                squeue -r -h -t PD -S -p -o '%u %i %Q %r' | head -12 | \
                    awk '{sub("explsched-demo-", "", $1); printf "          %-5s %-10s priority %-10s %s\n", $1, $2, $3, $4}'
            fi
            # One line per change of state (started, preempted, held, resumed, ended).
            while read -r id user state reason; do
                key=$id
                [ "${last[$key]:-}" = "$state $reason" ] && continue
                what=""
                case $state in
                    RUNNING) [ -n "${ran[$key]:-}" ] && what="resumed (restart)" || what="started"; ran[$key]=1 ;;
                    PENDING) # back in the queue after running (a preemption or a pause), or held
                        if [ -n "${ran[$key]:-}" ] && [ "${last[$key]%% *}" != PENDING ]; then
                            what="preempted or paused, back in the queue ($reason)"
                        elif [[ $reason == *[Hh]eld* && ${last[$key]:-} != *"$reason"* ]]; then
                            what="held ($reason)"
                        fi ;;
                    COMPLETED) what="completed" ;;
                    CANCELLED) what="cancelled" ;;
                    PREEMPTED|REQUEUED|REQUEUE_HOLD|REQUEUE_FED) what="$state" ;;
                    *) ;;
                esac
                last[$key]="$state $reason"
                [ -n "$what" ] && printf '+%4ds  %-5s %-10s %s\n' "$elapsed" "${user#explsched-demo-}" "$id" "$what"
            done < <(squeue -r -h -t all -u "${users[0]},${users[1]}" -o '%i %u %T %r' 2>/dev/null)
            if [ -n "${jobs[1]:-}" ] && [ "$elapsed" -gt 90 ] && \
                [ -z "$(squeue -h -j "${jobs[0]},${jobs[1]}" -t RUNNING,CONFIGURING,COMPLETING -o %i)" ] && \
                [ -z "$(squeue -h -j "${jobs[0]},${jobs[1]}" -t PENDING -o '%i %Q' | awk '$2 != 0')" ]; then
                break
            fi
            [ "$elapsed" -gt 1200 ] && { echo "two users: still running after 20 minutes; stopping the watch"; break; }
            sleep 2
        done
        for i in 0 1; do
            record_states "${jobs[$i]}" "$dir/${names[$i]}"
            echo "${names[$i]}: trials held or stopped by ExplSched, with its last word:"
            awk '$2 != "COMPLETED" || $3 > 0 {print $1, $2, $3}' "$dir/${names[$i]}/states" | \
                while read -r t state restarts; do
                    printf '  task %-3s %-10s restarts %s  %s\n' "$t" "$state" "$restarts" \
                        "$(scontrol show job "${jobs[$i]}_$t" | sed -n 's/^ *SystemComment=explsched: //p' | cut -c1-120)"
                done
            # One PNG per sweep: every trial's reported curve (the live report store).
            # shellcheck disable=SC2046
            EXPLSCHED_PLOT_SCRIPT=$top/contrib/explsched_plot.py "$builddir/src/cli/explsched" plot \
                --group "spirals-${names[$i]}" $(awk '{print $2}' "$dir/${names[$i]}/jobids") \
                -o "$dir/sweep-${names[$i]}.png" 2>&1 | grep -v '^explsched plot: skipping' || true
        done
        step "two users: summary (times from each user's own submission)"
        /usr/bin/python3 "$top/contrib/demo/summarize.py" --own-best $steps "${names[0]}=$dir/${names[0]}" \
            "${names[1]}=$dir/${names[1]}"
    )
    [ $keep = no ] && { cluster_down "$dir"; remove_demo_users; }
    return 0
}

policies=(explsched basic optuna two-users)
[ -n "$only" ] && policies=("$only")
for p in "${policies[@]}"; do
    if [ "$p" = two-users ]; then run_two_users; else run_sweep "$p"; fi
done

step "summary: one sweep, three ways"
summ_args=()
# With --only, a sweep of another arm left by an earlier run is shown beside it.
for p in explsched basic optuna; do [ -f "$demo_dir/$p/sweep/states" ] && summ_args+=("$p=$demo_dir/$p/sweep"); done
[ ${#summ_args[@]} -gt 0 ] && /usr/bin/python3 "$top/contrib/demo/summarize.py" $steps "${summ_args[@]}"
[ $keep = yes ] && echo "the explsched cluster is still up: . $demo_dir/explsched/env.sh"
exit 0
