#!/bin/bash
# Every shared object we install loads with RTLD_NOW (all its undefined symbols resolve at load),
# and a C program links against the report library alone:
#   - libexplsched_report.so (users' training processes; Python's ctypes.CDLL(mode=RTLD_NOW)),
#   - libexplsched_intercept.so (LD_PRELOADed into CUDA processes),
#   - spank_explsched.so inside libslurmfull (what sbatch, srun and slurmstepd provide),
#   - preempt_explsched.so inside libslurmfull.
# priority_explsched.so calls functions only the slurmctld executable defines:
# test_load_now_slurmctld.sh loads both slurmctld plugins eagerly inside a real slurmctld.
set -u
. "$(dirname "$0")/lib.sh"
b=$top_builddir
[ -x "$b/testsuite/integration/load_now" ] || fail "load_now not built"
[ -f "$b/src/client/.libs/libexplsched_report.so" ] || fail "libexplsched_report.so not built"
objs=("$b/src/client/.libs/libexplsched_report.so")
[ -f "$b/src/kernel_sched/.libs/libexplsched_intercept.so" ] && objs+=("$b/src/kernel_sched/.libs/libexplsched_intercept.so")
slurmfull=""
for d in "${SLURM_PLUGIN_INSTALLED_DIR:-}" /usr/lib/*/slurm-wlm /usr/lib64/slurm /usr/lib/slurm; do
    [ -f "$d/libslurmfull.so" ] && { slurmfull=$d/libslurmfull.so; break; }
done
if [ -f "$b/src/spank/.libs/spank_explsched.so" ]; then
    [ -n "$slurmfull" ] || fail "libslurmfull.so not found (the host library of SPANK plugins)"
    objs+=("+$slurmfull" "$b/src/spank/.libs/spank_explsched.so" "$b/src/plugins/preempt/explsched/.libs/preempt_explsched.so")
fi
"$b/testsuite/integration/load_now" "${objs[@]}" || fail "a shared object does not load with RTLD_NOW"

# The two-line C program of a site's training code: the public header and -lexplsched_report only.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/train.c" <<'C'
#include <explsched/report.h>
int main(void) { explsched_report_result r; return explsched_report(1, 0.5, 0.0, &r) == EXPLSCHED_REPORT_ERROR ? 0 : 1; }
C
${CC:-cc} -Wall -Werror -I"$top_srcdir/src/client" "$tmp/train.c" -o "$tmp/train" \
    -L"$b/src/client/.libs" -lexplsched_report -Wl,-z,now || fail "a C program does not link against libexplsched_report alone"
# Outside a job, with nothing listening, the report is a local error (not a crash, not "stored").
env -u EXPLSCHED_JOB_ID -u SLURM_JOB_ID LD_BIND_NOW=1 LD_LIBRARY_PATH="$b/src/client/.libs" \
    EXPLSCHED_REPORT_ADDR=127.0.0.1:1 "$tmp/train" || fail "the linked C program did not run as expected"
pass "a C program links against libexplsched_report alone and runs with every symbol bound at start"

