#!/bin/bash
# Replays the seed corpus through the fuzz target of explsched-kerneld's record validator, then
# fuzzes for FUZZ_SECONDS (default 5; 0 = replay only) from a scratch copy of the corpus.
# Skips (77) without clang.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${srcdir:=$here}"
bin=./fuzz_record_check
[ -x "$bin" ] || bin=$here/fuzz_record_check
[ -x "$bin" ] || { echo "SKIP: fuzz_record_check not built (clang++ with libFuzzer missing)"; exit 77; }
corpus=$srcdir/corpus/record_check
[ -d "$corpus" ] || { echo "FAIL: seed corpus $corpus missing"; exit 1; }

echo "replaying $(ls "$corpus" | wc -l) seed inputs"
"$bin" -runs=0 "$corpus"/* || { echo "FAIL: a seed input crashed the record validator"; exit 1; }

seconds=${FUZZ_SECONDS:-5}
if [ "$seconds" -gt 0 ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/explsched-fuzz.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    cp "$corpus"/* "$work"/
    # Crash reproducers land in $work; keep them where a developer can find them on failure.
    if ! "$bin" -max_total_time="$seconds" -max_len=8192 -artifact_prefix="$work/" "$work" 2>fuzz_record_check.log; then
        tail -40 fuzz_record_check.log
        mkdir -p fuzz-artifacts && cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* fuzz-artifacts/ 2>/dev/null
        echo "FAIL: fuzzing found a crash (reproducer in $(pwd)/fuzz-artifacts)"
        exit 1
    fi
    grep -E "^Done|#[0-9]+.*DONE" fuzz_record_check.log | tail -1
fi
echo "ok: record validator fuzz target"
