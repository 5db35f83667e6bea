#!/bin/sh
# The intercept exports exactly the hooks hooks.def lists plus dlsym (nm -D), nothing else.
set -eu
: "${INTERCEPT:?}" "${EXPORTS:?}"
nm -D --defined-only "$INTERCEPT" | awk '{print $3}' | LC_ALL=C sort > exports.actual
if ! diff -u "$EXPORTS" exports.actual; then
    echo "FAIL: libexplsched_intercept.so exports differ from hooks.def" >&2
    exit 1
fi
rm -f exports.actual
