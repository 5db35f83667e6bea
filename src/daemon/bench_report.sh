#!/bin/bash
# Runs explschedd-bench against a private munged (as the munge user, on a socket in a temporary
# directory). Needs root (to start munged as munge) and a built tree.
#   src/daemon/bench_report.sh [--clients N] [--seconds S] [--munge-threads T]
# Prints reports/s with group commit and with one commit per report, and their ratio.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
builddir=${builddir:-$here}
threads=2
args=()
while [ $# -gt 0 ]; do
    case $1 in
        --munge-threads) threads=$2; shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "bench_report.sh: needs root to start a private munged" >&2; exit 77; }
munged=$(command -v munged || echo /usr/sbin/munged)
[ -x "$munged" ] || { echo "bench_report.sh: munged not installed" >&2; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/explschedd-bench.XXXXXX")
chmod 755 "$dir"
mkdir "$dir/munge" && chown munge: "$dir/munge"
cleanup() {
    [ -f "$dir/munge/munged.pid" ] && kill "$(cat "$dir/munge/munged.pid")" 2>/dev/null
    sleep 0.2
    rm -rf "$dir"
}
trap cleanup EXIT
runuser -u munge -- "$munged" --socket="$dir/munge/munge.sock" --pid-file="$dir/munge/munged.pid" \
    --seed-file="$dir/munge/seed" --log-file="$dir/munge/munged.log" --key-file=/etc/munge/munge.key \
    --num-threads="$threads"
echo "munged: $threads threads; machine: $(nproc) cores"
"$builddir/explschedd-bench" --explschedd "$builddir/explschedd" --munge-socket "$dir/munge/munge.sock" \
    --dir "$dir" --munged-pid "$(cat "$dir/munge/munged.pid")" "${args[@]}"
