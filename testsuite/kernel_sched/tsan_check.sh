#!/bin/sh
# Test driver wrapper of the ThreadSanitizer tree: runs one test script with every instrumented
# process (kerneld, the fake-driver programs with the intercept) writing its reports to a private
# directory, and fails the test if any process reported (a race, a lock-order inversion, ...),
# whatever the script did with that process's exit status. Suppressions: tsan.supp.
#   tsan_check.sh TEST.sh
here=$(cd "$(dirname "$0")" && pwd)
reports=$(mktemp -d "${TMPDIR:-/tmp}/explsched-tsan.XXXXXX")
chmod 1777 "$reports"
# die_after_fork=0: ks_fake_launch_paths forks while other threads run, and the child (a new
# client) starts the fake driver's callback thread; TSan refuses threads after such a fork unless
# told to go on (it may then miss races in that child, never invent them).
TSAN_OPTIONS="log_path=$reports/tsan die_after_fork=0 halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=$here/tsan.supp ${TSAN_OPTIONS:-}"
# Instrumented processes run several times slower: timing bounds in the scripts scale by this.
KS_SLOWDOWN=${KS_SLOWDOWN:-3}
export TSAN_OPTIONS KS_SLOWDOWN
start=$(date +%s)
sh "$@"
rc=$?
found=$(find "$reports" -type f -name 'tsan*' | wc -l)
if [ "$found" -gt 0 ]; then
    echo "FAIL: ThreadSanitizer reports from $found process(es):"
    for f in "$reports"/tsan*; do echo "--- $f"; head -60 "$f"; done
    [ "${KS_KEEP:-0}" = 1 ] || rm -rf "$reports"
    exit 1
fi
rm -rf "$reports"
echo "tsan: no reports ($(($(date +%s) - start)) s)"
exit $rc
