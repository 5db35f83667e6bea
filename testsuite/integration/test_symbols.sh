#!/bin/bash
# Every module Slurm (or a user process) loads exports exactly the symbols its version script
# names: nothing of the core library or the C++ runtime leaks into slurmctld's namespace.
set -u
. "$(dirname "$0")/lib.sh"

[ -f "$top_builddir/src/plugins/priority/explsched/.libs/priority_explsched.so" ] \
    || skip "plugins not built (a --enable-sanitizers build does not build them)"

fail=0
check() {
    local so=$1 map=$2
    [ -f "$so" ] || { echo "FAIL: $so not built"; fail=1; return; }
    expected=$(sed -n '/global:/,/local:/p' "$map" | sed 's#/\*.*\*/##; s/global://; s/local:.*//' \
        | tr ' ;\t' '\n\n\n' | grep -v '^$' | sort)
    actual=$(nm -D --defined-only "$so" | awk '{print $3}' | sed 's/@.*//' | grep -v '^$' | sort)
    if [ "$expected" != "$actual" ]; then
        echo "FAIL: $so exports differ from $map"
        diff <(echo "$expected") <(echo "$actual") | sed 's/^/    /'
        fail=1
    else
        echo "ok: $(basename "$so"): $(echo $actual)"
    fi
}

b=$top_builddir; s=$top_srcdir
check "$b/src/plugins/priority/explsched/.libs/priority_explsched.so" "$s/src/plugins/priority/explsched/priority_explsched.map"
check "$b/src/plugins/site_factor/explsched/.libs/site_factor_explsched.so" "$s/src/plugins/site_factor/explsched/site_factor_explsched.map"
check "$b/src/plugins/preempt/explsched/.libs/preempt_explsched.so" "$s/src/plugins/preempt/explsched/preempt_explsched.map"
check "$b/src/spank/.libs/spank_explsched.so" "$s/src/spank/spank_explsched.map"
check "$b/src/client/.libs/libexplsched_report.so" "$s/src/client/libexplsched_report.map"
# libexplsched_intercept.so: its export list is generated from hooks.def and checked by
# testsuite/kernel_sched/ks_exports.sh.
exit $fail
