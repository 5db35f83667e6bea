#!/bin/bash
# explsched why, live: which settings it judges a job by. It reads `scontrol show config`; Slurm
# 22.05 and 24.11 report PrioritySiteFactorPlugin and PrioritySiteFactorParameters as (null)
# there, so under priority/multifactor it reads those two lines from the slurm.conf that
# scontrol names (keys without case, comments skipped). A FAKE `scontrol` (a script first in
# PATH, named as a fake: no cluster runs here) answers `show config` and `show job` with what each
# case needs; the real paths are covered on real clusters by test_preemption(_site).sh and
# test_preemption_rank_margin.sh. Cases: site factor from slurm.conf, priority/explsched, an
# unreadable slurm.conf, a bad settings line, a cluster without ExplSched; and job names with
# shell characters, refused before any scontrol runs.
set -u
. "$(dirname "$0")/lib.sh"
cli=$top_builddir/src/cli/explsched
[ -x "$cli" ] || skip "explsched not built"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
# FAKE scontrol: `show config` prints $tmp/config; `show job [-o] ID` a running trial, priority 40001
cat >"$tmp/bin/scontrol" <<EOF
#!/bin/sh
echo "\$*" >>"$tmp/calls"
case "\$1 \$2" in
    "show config") cat "$tmp/config" ;;
    "show job") cat <<'JOB'
JobId=7 JobName=wrap
   UserId=u(1000) GroupId=g(1000) MCS_label=N/A
   Priority=40001 Nice=0 Account=(null) QOS=(null)
   JobState=RUNNING Reason=None Dependency=(null)
   TRES=cpu=1,node=1,billing=1,gres/gpu=1
   SystemComment=explsched: group=g metric=loss:min max_steps=3000 state=promising decision=preemptable utility=0.0005806 price=0.001161 load=1 pred=0.5034 [0.5016,0.5051]@3000 points=7 extrapolated=yes gpu=unknown gpu_value=no-model reason=preemptable: utility 0.000581/GPU-s is below the GPU price 0.00116 at load 1
JOB
    ;;
    *) echo "fake scontrol: unexpected: \$*" >&2; exit 1 ;;
esac
EOF
chmod +x "$tmp/bin/scontrol"
fail=0
# why_case NAME WANT...: explsched why 7 (no report store) says every WANT (fixed strings)
why_case() {
    local name=$1 out w
    shift
    out=$(PATH="$tmp/bin:$PATH" "$cli" why 7 --db "$tmp/none.db" 2>&1)
    for w in "$@"; do
        grep -qF -- "$w" <<<"$out" || { echo "FAIL: $name: no '$w' in: $out"; fail=1; }
    done
    echo "ok: $name: $(grep -F "What would change it" <<<"$out")"
}

# 1. multifactor + site_factor/explsched: (null) in scontrol, the lines in slurm.conf
cat >"$tmp/slurm.conf" <<'EOF'
# ExplSched as multifactor's site factor
PriorityType=priority/multifactor
prioritysitefactorplugin = site_factor/explsched   # keys are case-insensitive
#PrioritySiteFactorParameters=preempt_rank_margin=9
PrioritySiteFactorParameters=preempt_rank_margin=2,grace_time=5
EOF
cat >"$tmp/config" <<EOF
Configuration data as of 2026-11-28T00:00:00
PriorityParameters      = (null)
PrioritySiteFactorParameters = (null)
PrioritySiteFactorPlugin = (null)
PriorityType            = priority/multifactor
SLURM_CONF              = $tmp/slurm.conf
EOF
why_case "site factor from slurm.conf" "under the site's PrioritySiteFactorParameters ($tmp/slurm.conf)" \
    "priority above 120003 (200% more than its 40001)"

# 2. priority/explsched: PriorityParameters as scontrol reports it
sed -i 's/^PriorityParameters .*/PriorityParameters      = preempt_rank_margin=0.5,preempt_margin=1/; s/^PriorityType .*/PriorityType            = priority\/explsched/' "$tmp/config"
why_case "priority/explsched" "under the site's PriorityParameters)" \
    "priority above 60001 (50% more than its 40001)" "utility above 0.00116 (100% more)"

# 3. multifactor, slurm.conf unreadable: the defaults, and why
sed -i 's/^PriorityType .*/PriorityType            = priority\/multifactor/; s#^SLURM_CONF .*#SLURM_CONF = '"$tmp"'/missing.conf#' "$tmp/config"
why_case "unreadable slurm.conf" "the engine's defaults (the site's are unknown: cannot read $tmp/missing.conf" \
    "priority above 80002 (100% more than its 40001)"

# 4. a bad line: the defaults, naming the key at fault
sed -i 's#^SLURM_CONF .*#SLURM_CONF = '"$tmp"'/slurm.conf#' "$tmp/config"
sed -i 's/^PrioritySiteFactorParameters=.*/PrioritySiteFactorParameters=preempt_rank_margin=lots/' "$tmp/slurm.conf"
why_case "bad settings line" "the site's are unknown: PrioritySiteFactorParameters:" "preempt_rank_margin" \
    "priority above 80002 (100% more"

# 5. no ExplSched plugin configured at all
sed -i '/sitefactorplugin/d' "$tmp/slurm.conf"
why_case "no ExplSched plugin" "ExplSched is not this cluster's priority or site factor plugin (PriorityType priority/multifactor"

# 6. a job name with shell characters never reaches the shell (`why` runs scontrol through it)
: >"$tmp/calls"
for bad in "7;touch $tmp/pwned" "7_1\$(touch $tmp/pwned)" "7 8" "7_" "_1" "1_2_3"; do
    out=$(PATH="$tmp/bin:$PATH" "$cli" why "$bad" 2>&1) && { echo "FAIL: why '$bad' accepted: $out"; fail=1; }
    grep -q "not a job id or an array task" <<<"$out" || { echo "FAIL: why '$bad': $out"; fail=1; }
done
[ ! -e "$tmp/pwned" ] || { echo "FAIL: a job name ran a command"; fail=1; }
grep -q "show job" "$tmp/calls" && { echo "FAIL: scontrol was asked about a bad name: $(cat "$tmp/calls")"; fail=1; }
echo "ok: job names with shell characters are refused before scontrol runs"

[ $fail = 0 ] || exit 1
echo "ok: explsched why judges a live job by the site's settings wherever slurmctld keeps them"
