#!/bin/bash
# Long fuzzing run of both libFuzzer targets, one after the other: the report wire parser
# (fuzz_report_wire, what a hostile client sends explschedd) and explsched-kerneld's record
# validator (fuzz_record_check, what a hostile client writes into its channel). A benchmark, not
# a test: `make check` fuzzes each target for FUZZ_SECONDS (5 s) only.
#
# Run from the build tree after the targets are built (make -C testsuite/fuzz check builds them):
#     make -C testsuite/fuzz fuzz-long                  # 600 s per target (20 minutes)
#     testsuite/fuzz/fuzz_long.sh [DURATION_SECONDS]    # from <build>/testsuite/fuzz or the build root
# Environment: FUZZ_JOBS (parallel fuzzing processes per target, default 1), FUZZ_KEEP=1 keeps the
# grown corpora. Prints per target: executions, execs/s, corpus size (inputs, bytes), coverage
# (libFuzzer's cov/ft) and crashes; exits 1 if any target crashed (reproducers are copied to
# ./fuzz-artifacts).
set -u
duration=${1:-600}
case $duration in '' | *[!0-9]*) echo "usage: $0 [DURATION_SECONDS]" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
srcdir=${srcdir:-$here}
jobs=${FUZZ_JOBS:-1}
bindir=
for d in . testsuite/fuzz "$here"; do
    [ -x "$d/fuzz_report_wire" ] && [ -x "$d/fuzz_record_check" ] && { bindir=$(cd "$d" && pwd); break; }
done
[ -n "$bindir" ] || { echo "fuzz_long: fuzz_report_wire/fuzz_record_check not built (make -C testsuite/fuzz check; needs clang++)" >&2; exit 77; }

status=0
printf '%-20s %8s %12s %10s %10s %12s %14s %8s\n' target seconds execs execs/s corpus corpus_bytes "cov/ft" crashes
for target in report_wire:3000 record_check:8192; do
    name=${target%%:*} max_len=${target#*:}
    bin=$bindir/fuzz_$name
    work=$(mktemp -d "${TMPDIR:-/tmp}/explsched-fuzz-long.XXXXXX")
    mkdir -p "$work/corpus" "$work/artifacts"
    cp "$srcdir/corpus/$name"/* "$work/corpus/"
    log=$work/fuzz.log
    start=$SECONDS
    if [ "$jobs" -gt 1 ]; then
        "$bin" -max_total_time="$duration" -max_len="$max_len" -jobs="$jobs" -workers="$jobs" \
            -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" >"$log" 2>&1
    else
        "$bin" -max_total_time="$duration" -max_len="$max_len" -print_final_stats=1 \
            -artifact_prefix="$work/artifacts/" "$work/corpus" >"$log" 2>&1
    fi
    rc=$?
    elapsed=$((SECONDS - start))
    # The last status line of libFuzzer: "#N ... cov: C ft: F corp: I/B ... exec/s: E".
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    persec=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    [ -n "$persec" ] || persec=$((${execs:-0} / (elapsed > 0 ? elapsed : 1)))
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 | sed 's/cov: //; s/ ft: /\//')
    inputs=$(find "$work/corpus" -type f | wc -l)
    bytes=$(du -sb "$work/corpus" | cut -f1)
    crashes=$(find "$work/artifacts" -type f | wc -l)
    printf '%-20s %8s %12s %10s %10s %12s %14s %8s\n' "$name" "$elapsed" "${execs:-?}" "${persec:-?}" \
        "$inputs" "$bytes" "${cov:-?}" "$crashes"
    if [ "$crashes" -gt 0 ] || { [ $rc -ne 0 ] && [ "$jobs" -le 1 ]; }; then
        status=1
        mkdir -p fuzz-artifacts && cp "$work"/artifacts/* fuzz-artifacts/ 2>/dev/null
        echo "  $name: crash (rc $rc); reproducers in $(pwd)/fuzz-artifacts; log tail:"
        tail -20 "$log" | sed 's/^/    /'
    fi
    if [ "${FUZZ_KEEP:-0}" = 1 ]; then echo "  kept $work"; else rm -rf "$work"; fi
done
exit $status
