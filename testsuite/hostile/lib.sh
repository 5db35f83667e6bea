# Shared by the hostile-user tests: each test plays an attacker against ExplSched on this host,
# with real unprivileged users it creates (useradd) and runs as (setpriv), and checks that the
# attack hurts no one but the attacker. Sources the integration harness (cluster, skip, fail).
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/integration/lib.sh"

HOSTILE_USERS=()

# Needs root, useradd and setpriv; otherwise the test is skipped with the reason.
require_users() {
    [ "$(id -u)" = 0 ] || skip "needs root to create test users"
    command -v useradd >/dev/null || skip "useradd is not installed (package passwd)"
    command -v setpriv >/dev/null || skip "setpriv is not installed (package util-linux)"
}

# make_user NAME: creates an unprivileged user with no home and no login shell, removed when the
# test exits (even on failure). Prints nothing; `id -u NAME` gives its uid. NAME must be this
# test's alone (tests run in parallel, and the clean-up kills the user's processes).
make_user() {
    local name=$1
    if ! id -u "$name" >/dev/null 2>&1; then
        useradd -M -N -s /usr/sbin/nologin "$name" || fail "cannot create user $name"
    fi
    HOSTILE_USERS+=("$name")
}

remove_users() {
    local u
    for u in "${HOSTILE_USERS[@]}"; do
        pkill -KILL -u "$u" 2>/dev/null || true
        userdel "$u" 2>/dev/null || true
    done
    HOSTILE_USERS=()
}

# as_user NAME CMD...: runs CMD as NAME (uid and primary gid, no supplementary groups).
as_user() {
    local name=$1
    shift
    setpriv --reuid="$(id -u "$name")" --regid="$(id -g "$name")" --clear-groups --reset-env -- "$@"
}

# submit_as USER sbatch-args...: submits as USER (sbatch --uid/--gid, as root), in $work (the
# cluster's tmp directory, mode 1777), output discarded; prints the job id.
submit_as() {
    local u=$1
    shift
    sbatch --parsable --uid="$(id -u "$u")" --gid="$(id -g "$u")" -D "${work:-$CLUSTER_DIR/tmp}" -o /dev/null "$@" |
        cut -d';' -f1
}

# two_users PREFIX: the preamble of a test whose trials two users run: needs a cluster, root (for
# the users), explschedd and /usr/bin/python3, else skips; creates users A=PREFIX_a$$ and
# B=PREFIX_b$$ (this test's alone).
two_users() {
    require_cluster
    require_users
    [ -x "$top_builddir/src/daemon/explschedd" ] || skip "explschedd not built"
    [ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"
    A=$1_a$$
    B=$1_b$$
    make_user "$A"
    make_user "$B"
}

# open_to_users: after start_cluster, lets the users' clients read slurm.conf and reach munged;
# sets work (the cluster's tmp directory, mode 1777: the users' jobs keep their checkpoints there)
# and trial (the synthetic trial program).
open_to_users() {
    chmod o+x "$CLUSTER_DIR" "$CLUSTER_DIR/munge" 2>/dev/null
    chmod o+r "$SLURM_CONF" "$CLUSTER_DIR"/*.conf 2>/dev/null
    work=$CLUSTER_DIR/tmp
    trial="/usr/bin/python3 $top_srcdir/testsuite/integration/synthetic_trial.py"
}

# power_trial_as USER SWEEP NAME A EVERY [SBATCH-ARGS...]: after open_to_users, one trial (or
# array) of USER's sweep SWEEP reporting loss = A + step^-0.5 over 1000 steps, a report every 10
# steps and EVERY seconds, its checkpoint (last step) in $work/NAME.<array index, else 0>.ckpt;
# cancelled when hopeless. Prints the job id.
power_trial_as() {
    local u=$1 sweep=$2 name=$3 a=$4 every=$5
    shift 5
    submit_as "$u" --gres=gpu:1 --explore="$sweep" --explore-max-steps=1000 --explore-on-hopeless=cancel "$@" \
        --wrap "exec $trial --a $a --b 1 --steps 1000 --every $every --checkpoint $work/$name.\${SLURM_ARRAY_TASK_ID:-0}.ckpt"
}
# state_of JOB, ended JOB (completed, cancelled, failed or timed out), step_of NAME.INDEX (the
# last step in a power_trial_as checkpoint, 0 before the first)
# keeps_gpu WHO JOB JOBID PREEMPTOR: for 30 s (preemption came within 20 s in the rank-margin
# tests) JOB stays RUNNING without a restart, and slurmctld's log ($log) has no line of PREEMPTOR
# preempting it (JOBID: JOB's numeric id, as the log names it); fails otherwise.
keeps_gpu() {
    local who=$1 job=$2 id=$3 by=$4 t_end=$((SECONDS + 30))
    while [ $SECONDS -lt $t_end ]; do
        [ "$(job_state "$job")" = RUNNING ] && [ "$(job_field "$job" Restarts)" = 0 ] ||
            fail "$who $job was preempted ($(job_state "$job"), restarts $(job_field "$job" Restarts)); log: $(grep -h "may preempt job $id\b" "$log" | head -1)"
        sleep 1
    done
    if grep -q "job $by may preempt job $id\b" "$log"; then
        fail "slurmctld logged $by preempting $who $job"
    fi
}

state_of() { job_field "$1" JobState; }
ended() { case $(state_of "$1") in COMPLETED | CANCELLED | FAILED | TIMEOUT) return 0 ;; esac; return 1; }
step_of() { cat "$work/$1.ckpt" 2>/dev/null || echo 0; }

# read_slurm_user_uid: sets slurm_user_uid to SlurmUser's uid in the running cluster
# (explschedd's; a report credential made outside a job step must be restricted to it), or fails.
read_slurm_user_uid() {
    slurm_user_uid=$(scontrol show config | sed -n 's/^SlurmUser *= *[^(]*(\([0-9]*\)).*/\1/p')
    [ -n "$slurm_user_uid" ] || fail "cannot read SlurmUser's uid from scontrol show config"
}

# The users go when the test exits: start_cluster's EXIT trap calls on_exit_hook; a test that
# installs its own EXIT trap must call on_exit_hook in it.
on_exit_hook() { remove_users; }
trap 'rc=$?; on_exit_hook; exit $rc' EXIT
