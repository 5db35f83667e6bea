#!/bin/sh
# Test driver wrapper of the ThreadSanitizer tree: runs one test script with every instrumented
# process (kerneld, the fake-driver programs with the intercept) writing its reports to a private
# directory, and fails the test if any process reported (a race, a lock-order inversion, ...),
# whatever the script did with that process's exit status. Suppressions: tsan.supp.
#   tsan_check.sh TEST.sh
here=$(cd "$(dirname "$0")" && pwd)
reports=$(mktemp -d "${TMPDIR:-/tmp}/explsched-tsan.XXXXXX")
chmod 1777 "$reports"
TSAN_OPTIONS="log_path=$reports/tsan halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=$here/tsan.supp ${TSAN_OPTIONS:-}"
export TSAN_OPTIONS
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
