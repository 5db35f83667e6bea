#!/bin/bash
# Replays the seed corpus through the wire-format fuzz target, then fuzzes for FUZZ_SECONDS
# (default 5; 0 = replay only) from a scratch copy of the corpus. Skips (77) without clang.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${srcdir:=$here}"
bin=./fuzz_report_wire
[ -x "$bin" ] || bin=$here/fuzz_report_wire
[ -x "$bin" ] || { echo "SKIP: fuzz_report_wire not built (clang++ with libFuzzer missing)"; exit 77; }
corpus=$srcdir/corpus/report_wire
[ -d "$corpus" ] || { echo "FAIL: seed corpus $corpus missing"; exit 1; }

echo "replaying $(ls "$corpus" | wc -l) seed inputs"
"$bin" -runs=0 "$corpus"/* || { echo "FAIL: a seed input crashed the wire parser"; exit 1; }

seconds=${FUZZ_SECONDS:-5}
if [ "$seconds" -gt 0 ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/explsched-fuzz.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    cp "$corpus"/* "$work"/
    # Crash reproducers land in $work; keep them where a developer can find them on failure.
    if ! "$bin" -max_total_time="$seconds" -max_len=3000 -artifact_prefix="$work/" "$work" 2>fuzz.log; then
        tail -40 fuzz.log
        mkdir -p fuzz-artifacts && cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* fuzz-artifacts/ 2>/dev/null
        echo "FAIL: fuzzing found a crash (reproducer in $(pwd)/fuzz-artifacts)"
        exit 1
    fi
    grep -E '^Done|#[0-9]+.*DONE' fuzz.log | tail -1
fi
echo "ok: wire parser fuzz target"
