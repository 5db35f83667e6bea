#!/bin/bash
# The test clusters' MariaDB bootstraps, eight at once (make -j check starts several *_site.sh
# clusters together). With the shared /tmp as their tmpdir, a starting server deleted another's
# temporary tables and its bootstrap failed ("Unknown table 'mysql.tmp_user_sys'"): 4 of 12 here,
# and twice in one CI run. Each now has DIR/db/tmp; every bootstrap must pass on its first try
# (the harness's one retry must not be what passes it).
set -u
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to run mariadb-install-db as the mysql user"
command -v mariadb-install-db >/dev/null || skip "mariadb-install-db is not installed (mariadb-server)"
id mysql >/dev/null 2>&1 || skip "no mysql user (mariadb-server)"

work=$(mktemp -d "${TMPDIR:-/tmp}/explsched-mariadb-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

n=8
for i in $(seq 1 $n); do
    d=$work/c$i
    mkdir -p "$d/log" "$d/db/tmp"
    chown mysql: "$d/db" "$d/db/tmp"
    ( _cluster_mariadb_install "$d" 2>"$d/stderr"; echo $? >"$d/rc" ) &
done
wait
for i in $(seq 1 $n); do
    d=$work/c$i
    rc=$(cat "$d/rc" 2>/dev/null || echo none)
    [ "$rc" = 0 ] || { bad "cluster $i: bootstrap failed (rc $rc)"; tail -5 "$d/log/mariadb-install.log"; }
    if grep -q "failed (try" "$d/stderr"; then
        bad "cluster $i: the first bootstrap failed: $(grep -m1 -i 'error' "$d/log/mariadb-install.log")"
    fi
    [ -d "$d/db/data/mysql" ] || bad "cluster $i: no system tables in $d/db/data"
    # The redo log is the small one asked for (16 MB), not the default 96 MB.
    size=$(stat -c %s "$d/db/data/ib_logfile0" 2>/dev/null || echo 0)
    [ "$size" = 16777216 ] || bad "cluster $i: ib_logfile0 is $size bytes, want 16777216"
done
ok=$(grep -lx 0 "$work"/c*/rc | wc -l)
echo "bootstraps at once: $n, passed: $ok"
[ $fail = 0 ] && echo "PASS" || exit 1
