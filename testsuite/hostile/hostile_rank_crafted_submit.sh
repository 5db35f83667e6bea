#!/bin/bash
# Attack: a user submits through libslurm directly (testsuite/hostile/crafted_submit.c), so no
# SPANK plugin checks the --explore options, with a job environment of their own making: a bad
# or 100,000-character --explore-model, control bytes, an absurd max_steps, 20,000 milestones,
# 20,000 or unordered learning-rate drops (--explore-lr-drops; valid drops only defer a trial's
# stop, as --explore-on-hopeless=none does, never its price or preemption), two groups, entries without '=', 5,000 padding entries. slurmctld must stay up, the rounds go
# on, the log names what was wrong in bounded, printable lines (a record naming one of our
# variables twice is refused), no crafted job is ranked as a trial or out-ranks another
# user's honest trial, and that trial keeps being ranked. Prints what each submission got.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
require_users
command -v cc >/dev/null || skip "no C compiler for the crafted client"
[ -r /usr/include/slurm/slurm.h ] || skip "no slurm/slurm.h (libslurm-dev)"
make_user esh_craft_evil
make_user esh_craft_honest
start_cluster --nodes 1 --gpus 1 --params rerank_period=1 --log-level verbose
log=$CLUSTER_DIR/log/slurmctld.log
chmod o+x "$CLUSTER_DIR" "$CLUSTER_DIR/munge" 2>/dev/null
chmod o+r "$SLURM_CONF" "$CLUSTER_DIR"/*.conf 2>/dev/null
bin=$CLUSTER_DIR/crafted_submit
cc -O1 -o "$bin" "$top_srcdir/testsuite/hostile/crafted_submit.c" -lslurm || fail "cannot build the crafted client"
chmod 755 "$bin"
evil() { as_user esh_craft_evil env SLURM_CONF="$SLURM_CONF" sh -c 'cd /tmp && exec "$0" "$@"' "$bin" "$@"; }

honest=$(sbatch --parsable --uid="$(id -u esh_craft_honest)" --gid="$(id -g esh_craft_honest)" -D /tmp \
    -o /dev/null --begin=now+1hour --explore=honest --wrap true) || fail "honest sbatch failed"
wait_until 20 "scontrol show job $honest | grep -q 'SystemComment=explsched: .*group=honest'" "the honest trial ranked"

ok_model=EXPLSCHED_MODEL=ResNet-50
cases=(
    "bad-model|EXPLSCHED_GROUP=g1|EXPLSCHED_MODEL=\$(rm -rf /)"
    "control-bytes|EXPLSCHED_GROUP=g2|EXPLSCHED_MODEL=a$(printf '\001\033')[2J"
    "huge-model|EXPLSCHED_GROUP=g3|@100000:EXPLSCHED_MODEL=x"
    "huge-group|@100000:EXPLSCHED_GROUP=y|$ok_model"
    "absurd-steps|EXPLSCHED_GROUP=g4|EXPLSCHED_MAX_STEPS=99999999999999999999999"
    "many-milestones|EXPLSCHED_GROUP=g5|EXPLSCHED_MILESTONES=$(seq -s, 1 20000)"
    "many-drops|EXPLSCHED_GROUP=g8|EXPLSCHED_LR_DROPS=$(seq -s, 1 20000)"
    "bad-drops|EXPLSCHED_GROUP=g9|EXPLSCHED_LR_DROPS=900,5,$(printf '\001')"
    "two-groups|EXPLSCHED_GROUP=g6|EXPLSCHED_GROUP=honest|$ok_model"
    "no-equals|EXPLSCHED_GROUP|EXPLSCHED_MODEL"
    "padding|EXPLSCHED_GROUP=g7|#5000:EXPLSCHED_PAD=zzzzzzzzzzzzzzzz"
)
crafted=()
for c in "${cases[@]}"; do
    IFS='|' read -r -a args <<<"$c"
    name=${args[0]}
    out=$(evil "${args[@]:1}" 2>&1)
    if [[ $out =~ ^[0-9]+$ ]]; then
        crafted+=("$out")
        echo "    $name: accepted by Slurm as job $out"
    else
        echo "    $name: refused by Slurm: $out"
    fi
done
[ ${#crafted[@]} -gt 0 ] || fail "Slurm refused every crafted submission: nothing was tested"

# rounds go on after every crafted job is in the queue
: >"$log.mark"
before=$(grep -c "ranked [0-9]* jobs" "$log")
wait_until 30 "[ \$(grep -c 'ranked [0-9]* jobs' '$log') -ge $((before + 3)) ]" "three rounds with the crafted jobs queued"
scontrol ping | grep -q UP || fail "slurmctld is not up"
pass "slurmctld up, rounds continue with ${#crafted[@]} crafted jobs queued"

grep -q "explore-model.*is not a model name" "$log" || fail "the log does not name the bad --explore-model"
grep -q "max-steps\|max_steps" "$log" || fail "the log does not name the bad max_steps"
grep -q "EXPLSCHED_LR_DROPS: --explore-lr-drops" "$log" || fail "the log does not name the bad learning-rate drops"
long=$(grep -a 'priority/explsched' "$log" | awk 'length > 1000' | wc -l)
[ "$long" = 0 ] || fail "$long of our log lines are over 1,000 bytes: user text is not bounded"
grep -a 'priority/explsched' "$log" | grep -q -P '[\x00-\x08\x0b-\x1f\x7f]' && fail "raw control bytes in our log lines"
pass "slurmctld's log names the bad fields: $(grep -o 'job [0-9]*: [^;]*explore-model[^(]*' "$log" | head -1)"

hp=$(squeue -h -j "$honest" -o %Q)
[ -n "$hp" ] || fail "no priority for the honest trial $honest"
scontrol show job "$honest" | grep -q 'SystemComment=explsched: .*group=honest' || fail "the honest trial lost its SystemComment"
for j in "${crafted[@]}"; do
    p=$(squeue -h -j "$j" -o %Q)
    comment=$(scontrol show job "$j" | grep -o 'SystemComment=.*' || true)
    echo "    job $j: priority ${p:-gone}, ${comment:-no SystemComment}"
    [ -z "$p" ] && continue
    [ "$p" -le "$hp" ] || fail "crafted job $j (priority $p) out-ranks the honest trial $honest ($hp)"
    case $comment in
        *group=honest*) fail "crafted job $j joined the honest user's sweep: $comment" ;;
    esac
done
pass "no crafted job out-ranks the honest trial $honest (priority $hp) or joins its sweep"
