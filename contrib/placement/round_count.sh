#!/bin/bash
# Counts the instructions of slurmctld's placement round (contrib/placement/round_count.cpp) for
# one or two source trees, with callgrind; doc/placement.md's "Decision cost" quotes its counts.
#   contrib/placement/round_count.sh DATA TREE [TREE2]
# DATA: DeepShare's tables (../shared/data/network). A TREE is a checkout (a worktree of an older
# commit, say); its placement sources are compiled with -O2 into the harness. Needs valgrind.
set -eu
data=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for tree in "$@"; do
    bin=$out/$(basename "$tree")-$RANDOM
    g++ -std=c++17 -O2 -I"$tree/src" "$here/round_count.cpp" \
        "$tree"/src/core/sched/net_{contention,placement,plan,round,table}.cpp "$tree"/src/core/base/*.cpp -o "$bin"
    for mode in "FRESH=1" "FRESH=1 CHURN=1" "CHURN=1" "NONE=1"; do
        count=$(env $mode valgrind --tool=callgrind --callgrind-out-file=/dev/null \
            --toggle-collect='explsched::net::placement_round(*)' "$bin" "$data" 31 1 64 2>&1 |
            sed -n 's/.*refs: *//p')
        echo "$tree: $mode: 31 rounds of 64 spread jobs: $count instructions"
    done
done
