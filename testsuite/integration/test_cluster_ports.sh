#!/bin/bash
# The test clusters' port ranges: clusters started together (make -j4 check) never share one. CI
# once failed two tests at once when both chose the same free range before either had bound it.
# No root needed: this runs the harness's reservation alone, on a private lock directory.
set -u
. "$(dirname "$0")/lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/explsched-ports-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export EXPLSCHED_PORT_LOCKS=$work/locks EXPLSCHED_PORT_BLOCKS=3
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# Without EXPLSCHED_PORT_FIRST, clusters take ports outside the kernel's ephemeral range, which any
# outgoing connection may take (CI: slurmctld could not bind port 57000).
window() { (unset EXPLSCHED_PORT_FIRST EXPLSCHED_PORT_BLOCKS; EXPLSCHED_EPHEMERAL_PORTS_FILE=$1 _cluster_port_window); }
printf '32768\t60999\n' >"$work/range"
[ "$(window "$work/range")" = "10000 227" ] || bad "window for ephemeral 32768-60999: '$(window "$work/range")', want '10000 227'"
printf '1024 60999\n' >"$work/range"
[ "$(window "$work/range")" = "61000 45" ] || bad "window for ephemeral 1024-60999: '$(window "$work/range")', want '61000 45'"
read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
read -r wfirst wblocks < <(window /proc/sys/net/ipv4/ip_local_port_range)
if [ $((wfirst + wblocks * 100)) -le "$lo" ] || [ "$wfirst" -gt "$hi" ]; then
    echo "ok: this host's ephemeral ports $lo-$hi; clusters take $wblocks blocks from $wfirst"
else
    bad "window $wfirst+$wblocks blocks overlaps this host's ephemeral ports $lo-$hi"
fi

# The reservation is tested on socket tables of its own (/proc/net/tcp's format), not this host's:
# under make -j4 the other tests' clusters take ports from the same window, and CI once failed
# here when one of them listened in the range this test had found free a moment before.
first=31000
tables=$work/tcp
printf '  sl  local_address rem_address   st\n' >"$tables"
export EXPLSCHED_TCP_TABLES=$tables
export EXPLSCHED_PORT_FIRST=$first

# Eight clusters ask at once for three blocks: three get one each, all different; five get none.
for i in 1 2 3 4 5 6 7 8; do
    mkdir -p "$work/c$i"
    ( _cluster_free_port_base 10 "$work/c$i" >"$work/c$i.base" ) &
done
wait
bases=$(cat "$work"/c*.base | sort)
n=$(echo "$bases" | grep -c .)
distinct=$(echo "$bases" | grep . | sort -u | wc -l)
[ "$n" = "$distinct" ] || bad "two clusters got the same port range: $(echo $bases)"
[ "$n" = 3 ] || bad "$n of 8 clusters got a range of the 3 there are, all free"
links=$(find "$EXPLSCHED_PORT_LOCKS" -maxdepth 1 -type l | wc -l)
[ "$links" = "$n" ] || bad "$links reservations for $n clusters given a range"
for b in $bases; do
    [ "$b" -ge "$first" ] && [ "$b" -lt $((first + 300)) ] && [ $(((b - first) % 100)) = 0 ] \
        || bad "range $b is outside the blocks asked for"
done
[ $fail = 0 ] && echo "ok: 8 concurrent asks, $n ranges given, all different: $(echo $bases)"

# A reservation whose cluster still runs (its slurm.conf exists) is kept even when old; one whose
# directory is gone is taken back; cluster_down releases a cluster's reservations.
rm -rf "${EXPLSCHED_PORT_LOCKS:?}"/* "$work"/c*
mkdir -p "$work/live" && touch "$work/live/slurm.conf"
ln -s "$work/live" "$EXPLSCHED_PORT_LOCKS/$first"
touch -h -d '-1 hour' "$EXPLSCHED_PORT_LOCKS/$first"
ln -s "$work/gone" "$EXPLSCHED_PORT_LOCKS/$((first + 100))"
ln -s "$work/live" "$EXPLSCHED_PORT_LOCKS/$((first + 200))"
mkdir -p "$work/new"
got=$(_cluster_free_port_base 10 "$work/new") || bad "no range given though one cluster is gone"
[ "${got:-}" = $((first + 100)) ] || bad "got range '${got:-}', want the gone cluster's $((first + 100))"
[ "$(readlink "$EXPLSCHED_PORT_LOCKS/$first")" = "$work/live" ] || bad "a live cluster's reservation was taken"
[ "$(readlink "$EXPLSCHED_PORT_LOCKS/$((first + 100))")" = "$work/new" ] || bad "the taken-back block is not the new cluster's"
cluster_down "$work/new" >/dev/null 2>&1
[ -L "$EXPLSCHED_PORT_LOCKS/$((first + 100))" ] && bad "cluster_down left the reservation"
[ -L "$EXPLSCHED_PORT_LOCKS/$first" ] || bad "cluster_down of one cluster released another's"
[ $fail = 0 ] && echo "ok: stale reservation taken back, live ones kept, released on cluster_down"

# A cluster of 130 nodes needs two blocks: it gets two adjacent free ones.
rm -rf "${EXPLSCHED_PORT_LOCKS:?}"/*
ln -s "$work/live" "$EXPLSCHED_PORT_LOCKS/$first"
mkdir -p "$work/big"
got=$(_cluster_free_port_base 135 "$work/big") || bad "no two-block range given"
[ "${got:-}" = $((first + 100)) ] || bad "got '${got:-}' for two blocks, want $((first + 100))"
[ -L "$EXPLSCHED_PORT_LOCKS/$((first + 200))" ] || bad "the second block was not reserved"
[ $fail = 0 ] && echo "ok: a two-block range reserved whole"

# A block where something listens is never given, though nobody reserved it: with the middle block's
# port first+105 in the table and the first block reserved, only the last block is free.
rm -rf "${EXPLSCHED_PORT_LOCKS:?}"/*
ln -s "$work/live" "$EXPLSCHED_PORT_LOCKS/$first"
printf '   0: 0100007F:%04X 00000000:0000 0A\n' $((first + 105)) >>"$tables"
mkdir -p "$work/busy"
got=$(_cluster_free_port_base 10 "$work/busy") || bad "no range given though the last block is free"
[ "${got:-}" = $((first + 200)) ] || bad "got '${got:-}' with port $((first + 105)) in use, want $((first + 200))"
[ -L "$EXPLSCHED_PORT_LOCKS/$((first + 100))" ] && bad "the block with a port in use was reserved"
[ $fail = 0 ] && echo "ok: a block with a port in use is skipped"
exit $fail
