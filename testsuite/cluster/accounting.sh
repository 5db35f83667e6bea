# Accounting for the local test cluster (sourced by cluster.sh): a private MariaDB server and
# slurmdbd on loopback ports of the cluster's own range, so that associations, fair-share and
# sacctmgr are the real ones. The database lives in DIR/db and is thrown away with the cluster.
# slurmdbd reads DIR/slurmdbd.conf (beside SLURM_CONF). The server runs with --skip-grant-tables: it listens on 127.0.0.1 only, for this test cluster.
# Needs: mariadb-server (mariadb-install-db, mariadbd) and slurmdbd.

# _cluster_accounting_up DIR CLUSTER DBD_PORT DB_PORT
_cluster_accounting_up() {
    local dir=$1 cluster=$2 dbd_port=$3 db_port=$4 slurmdbd
    _cluster_sbin mariadbd >/dev/null || { cluster_die "--accounting needs mariadb-server"; return 1; }
    slurmdbd=$(_cluster_sbin slurmdbd) || { cluster_die "--accounting needs slurmdbd"; return 1; }
    command -v mariadb-install-db >/dev/null || { cluster_die "mariadb-install-db not found"; return 1; }
    mkdir -p "$dir/db/tmp"
    chown mysql: "$dir/db" "$dir/db/tmp"
    chmod 700 "$dir/db/tmp"
    _cluster_mariadb_install "$dir" || return 1
    echo "$db_port" >"$dir/db/port"
    _cluster_mariadbd_start "$dir" || return 1
    {
        echo "AuthType=auth/munge"
        echo "AuthInfo=socket=$dir/munge/munge.sock"
        echo "DbdHost=localhost"
        echo "DbdAddr=127.0.0.1"
        echo "DbdPort=$dbd_port"
        echo "SlurmUser=root"
        echo "PidFile=$dir/run/slurmdbd.pid"
        echo "LogFile=$dir/log/slurmdbd.log"
        echo "DebugLevel=info"
        echo "StorageType=accounting_storage/mysql"
        echo "StorageHost=127.0.0.1"
        echo "StoragePort=$db_port"
        echo "StorageUser=root"
        echo "StorageLoc=slurm_acct_$cluster"
    } >"$dir/slurmdbd.conf"
    chmod 600 "$dir/slurmdbd.conf"
    # The database made here, not by slurmdbd: slurmdbd makes a missing one and then connects
    # again with the same client handle, and Debian 13's MariaDB client library (11.8.9) fails
    # the first query on that handle ("Number of columns in result (=1) ... (=0)"), which is
    # fatal to slurmdbd 24.11. slurmdbd creates its tables in an empty database either way.
    mariadb --no-defaults --protocol=socket --socket="$dir/db/mysqld.sock" -u root \
        -e "CREATE DATABASE IF NOT EXISTS slurm_acct_$cluster" >>"$dir/log/mariadb-install.log" 2>&1 \
        || { cluster_die "cannot create the accounting database"; return 1; }
    SLURM_CONF=$dir/slurm.conf "$slurmdbd" >>"$dir/log/slurmdbd.log" 2>&1 \
        || { cluster_die "slurmdbd failed to start"; tail -10 "$dir/log/slurmdbd.log" >&2; return 1; }
    deadline=$((SECONDS + 60))
    until (exec 3<>"/dev/tcp/127.0.0.1/$dbd_port") 2>/dev/null; do
        [ $SECONDS -lt $deadline ] || { cluster_die "slurmdbd not listening on $dbd_port"; tail -10 "$dir/log/slurmdbd.log" >&2; return 1; }
        sleep 0.2
    done
    # The cluster must exist before slurmctld registers; root gets an association for the set-up.
    SLURM_CONF=$dir/slurm.conf sacctmgr -i add cluster "$cluster" >/dev/null \
        && SLURM_CONF=$dir/slurm.conf sacctmgr -i add account root_acct cluster="$cluster" >/dev/null \
        && SLURM_CONF=$dir/slurm.conf sacctmgr -i add user root account=root_acct cluster="$cluster" >/dev/null \
        || { cluster_die "sacctmgr could not add the cluster"; return 1; }
}

# _cluster_mariadb_install DIR: makes the private server's data folder DIR/db/data.
# Each cluster's server, the bootstrap one too, has its own temporary folder DIR/db/tmp: a
# starting MariaDB server deletes every "#sql*" file in its tmpdir, so with the shared /tmp one
# cluster's start deleted the temporary tables of another's bootstrap ("Unknown table
# 'mysql.tmp_user_sys'"; 4 of 12 bootstraps started at once failed so here, and a CI run failed
# on it twice). The bootstrap also gets the running server's small footprint (a 16 MB redo log,
# not 96 MB; a 64 MB buffer pool; no native AIO, whose system-wide budget is shared) and no
# host-name check (--force): the server is reached on 127.0.0.1 with --skip-grant-tables. A
# failed bootstrap is tried once more on a fresh folder, and its log's tail is printed.
_cluster_mariadb_install() {
    local dir=$1 try
    for try in 1 2; do
        rm -rf "$dir/db/data"
        if mariadb-install-db --no-defaults --user=mysql --datadir="$dir/db/data" --skip-test-db \
            --tmpdir="$dir/db/tmp" --force --skip-name-resolve --innodb-buffer-pool-size=64M \
            --innodb-log-file-size=16M --innodb-use-native-aio=0 \
            >>"$dir/log/mariadb-install.log" 2>&1; then
            return 0
        fi
        echo "cluster: mariadb-install-db failed (try $try of 2); the tail of $dir/log/mariadb-install.log:" >&2
        tail -n 25 "$dir/log/mariadb-install.log" >&2
        sleep 1
    done
    cluster_die "mariadb-install-db failed twice (see $dir/log/mariadb-install.log)"
    return 1
}

# _cluster_mariadbd_start DIR: starts the private server on DIR/db/data and the port in
# DIR/db/port, and waits until it listens (60 s at most; sooner a failure where it exits).
_cluster_mariadbd_start() {
    local dir=$1 mariadbd db_port pid deadline
    mariadbd=$(_cluster_sbin mariadbd) || { cluster_die "--accounting needs mariadb-server"; return 1; }
    db_port=$(cat "$dir/db/port") || return 1
    # The log made here for the server's user: it runs as mysql and could not create a file in
    # root's log folder, so its messages, a crash's trace among them, went nowhere.
    touch "$dir/log/mariadbd.log" && chown mysql: "$dir/log/mariadbd.log" || return 1
    "$mariadbd" --no-defaults --user=mysql --datadir="$dir/db/data" --bind-address=127.0.0.1 \
        --port="$db_port" --socket="$dir/db/mysqld.sock" --pid-file="$dir/db/mysqld.pid" \
        --tmpdir="$dir/db/tmp" --skip-grant-tables --skip-name-resolve \
        --innodb-buffer-pool-size=64M --innodb-log-file-size=16M --innodb-use-native-aio=0 \
        --log-error="$dir/log/mariadbd.log" >>"$dir/log/mariadbd.log" 2>&1 &
    pid=$!
    deadline=$((SECONDS + 60))
    until (exec 3<>"/dev/tcp/127.0.0.1/$db_port") 2>/dev/null; do
        if [ $SECONDS -ge $deadline ] || ! _cluster_pid_alive "$pid"; then
            cluster_die "MariaDB not listening on $db_port"
            tail -n 20 "$dir/log/mariadbd.log" >&2
            return 1
        fi
        sleep 0.2
    done
}

# _cluster_restart_gone_accounting DIR: starts again the database server and slurmdbd where
# either is gone, after showing the end of its log. Once, in a Debian 13 root, mariadbd died of
# a segmentation fault after the cluster had been registered; slurmctld then never learnt its
# cluster id and no node came up. The server starts again on the same data (InnoDB recovers it),
# and slurmdbd and slurmctld connect again by themselves.
_cluster_restart_gone_accounting() {
    local dir=$1 pid slurmdbd
    [ -f "$dir/accounting" ] || return 0
    pid=$(cat "$dir/db/mysqld.pid" 2>/dev/null) || pid=
    if ! _cluster_pid_alive "$pid"; then
        cluster_log "mariadbd is not running; starting it again"
        tail -n 30 "$dir/log/mariadbd.log" >&2
        _cluster_mariadbd_start "$dir" || return 1
    fi
    pid=$(cat "$dir/run/slurmdbd.pid" 2>/dev/null) || pid=
    if ! _cluster_pid_alive "$pid"; then
        cluster_log "slurmdbd is not running; starting it again"
        tail -n 10 "$dir/log/slurmdbd.log" >&2
        slurmdbd=$(_cluster_sbin slurmdbd) || return 1
        SLURM_CONF=$dir/slurm.conf "$slurmdbd" >>"$dir/log/slurmdbd.log" 2>&1 \
            || { cluster_die "slurmdbd failed to start again"; return 1; }
    fi
}

_cluster_accounting_down() {
    local dir=$1
    _cluster_kill_pidfile "$dir/run/slurmdbd.pid"
    _cluster_kill_pidfile "$dir/db/mysqld.pid"
}
