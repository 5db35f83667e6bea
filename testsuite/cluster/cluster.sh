#!/bin/bash
# A real Slurm cluster on this one host, for tests and the demo: munged, slurmctld and N slurmd
# (`slurmd -N nX`), each node with M fake GPUs (character devices 195:i, as NVIDIA's), all in an
# isolated directory with its own ports, loading ExplSched's plugins from the build tree through a
# PluginDir list. Everything is stopped by PID (never by process name).
#
# As a command:   cluster.sh up DIR [options]    cluster.sh down DIR    cluster.sh status DIR
#                 cluster.sh cost DIR (memory of slurmctld and the slurmd processes)
# As a library:   . cluster.sh; cluster_up DIR [options]; ...; cluster_down DIR
# Options of up:  --nodes N (4)  --gpus M (4)  --cpus C (8)  --priority TYPE (priority/explsched)
#                 --preempt TYPE (preempt/explsched)  --params 'k=v,...' (PriorityParameters)
#                 --spank-args 'k=v ...'  --no-spank  --debug  --log-level LEVEL
#                 --slurmd-log-level LEVEL (SlurmdDebug; default: the --log-level)
#                 --shared-slurmd-log (every slurmd appends to log/slurmd.log, not one file a node)
#                 --explschedd (start the report collector; PriorityParameters gets its report_db)
#                 --explschedd-args 'ARGS' (more explschedd options, e.g. '--limit user_rate=2000')
#                 --conf 'Key=Value' (an extra slurm.conf line; repeatable)
#                 --select-params P (SelectTypeParameters, default CR_Core)
#                 --proctrack TYPE (proctrack/linuxproc; proctrack/pgid scans no /proc, which
#                 matters with a thousand jobs running on one host)
#                 --site-factor (priority/multifactor with site_factor/explsched, and --accounting,
#                 which multifactor needs; --params then go to PrioritySiteFactorParameters)
#                 --accounting (a private MariaDB and slurmdbd: associations and fair-share)
#                 --gpu-types 'T1:K1,T2:K2,...' (typed GPUs: the first K1 nodes have type T1, the
#                   next K2 type T2, ...; nodes past them stay untyped; default: all untyped)
# After up, DIR/env.sh exports SLURM_CONF, EXPLSCHED_CLUSTER_DIR, EXPLSCHED_MUNGE_SOCKET and
# EXPLSCHED_REPORT_PORT for clients; source it.
#
# Root is required (slurmd, munged as user munge, mknod). Needs: slurmctld slurmd slurm-client munge.

cluster_log() { echo "cluster: $*" >&2; }
cluster_die() { echo "cluster: error: $*" >&2; return 1; }

_cluster_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$_cluster_here/accounting.sh"
: "${top_srcdir:=$(cd "$_cluster_here/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"

_cluster_sbin() {
    local p
    for p in "$(command -v "$1" 2>/dev/null)" "/usr/sbin/$1" "/sbin/$1"; do
        [ -n "$p" ] && [ -x "$p" ] && { echo "$p"; return 0; }
    done
    return 1
}

# Port ranges are reserved under this directory, one symlink per block of 100 ports naming the
# cluster's directory: the checks run four at a time (make -j4) and two clusters starting together
# once chose the same free range before either had bound it (CI: "Address already in use").
EXPLSCHED_PORT_LOCKS=${EXPLSCHED_PORT_LOCKS:-/tmp/explsched-port-locks}

# Reserve block B for DIR: ln -sn is atomic (-n: never into the directory an existing link
# names). A block whose cluster is gone (its directory, or its slurm.conf two minutes after the
# reservation) is taken back.
_cluster_reserve_block() {
    local b=$1 dir=$2 link=$EXPLSCHED_PORT_LOCKS/$1 owner age
    ln -sn "$dir" "$link" 2>/dev/null && return 0
    owner=$(readlink "$link" 2>/dev/null) || return 1
    age=$(( $(date +%s) - $(stat -c %Y "$link" 2>/dev/null || date +%s) ))
    if [ ! -d "$owner" ] || { [ ! -f "$owner/slurm.conf" ] && [ "$age" -gt 120 ]; }; then
        # take it back through a private name, so that two takers cannot both win
        mv -T "$link" "$link.stale.$$" 2>/dev/null || return 1
        rm -f "$link.stale.$$"
        ln -sn "$dir" "$link" 2>/dev/null && return 0
    fi
    return 1
}

_cluster_release_ports() {
    local dir=$1 link
    for link in "$EXPLSCHED_PORT_LOCKS"/*; do
        [ -L "$link" ] && [ "$(readlink "$link")" = "$dir" ] && rm -f "$link"
    done
    return 0
}

# The window clusters take ports from, as "FIRST BLOCKS" (blocks of 100 ports): EXPLSCHED_PORT_FIRST
# and EXPLSCHED_PORT_BLOCKS, or else ports outside the kernel's ephemeral range
# (net.ipv4.ip_local_port_range): an outgoing connection may take any port in that range at any
# time, and CI once saw slurmctld fail to bind port 57000 ("Address already in use") that way.
_cluster_port_window() {
    if [ -n "${EXPLSCHED_PORT_FIRST:-}" ]; then
        echo "$EXPLSCHED_PORT_FIRST ${EXPLSCHED_PORT_BLOCKS:-100}"
        return 0
    fi
    local lo=32768 hi=60999
    read -r lo hi <"${EXPLSCHED_EPHEMERAL_PORTS_FILE:-/proc/sys/net/ipv4/ip_local_port_range}" 2>/dev/null || true
    [[ $lo =~ ^[0-9]+$ && $hi =~ ^[0-9]+$ ]] || { lo=32768; hi=60999; }
    if [ $(( (lo - 10000) / 100 )) -ge 20 ]; then
        echo "10000 $(( (lo - 10000) / 100 ))"
    elif [ $(( (65500 - hi - 100) / 100 )) -ge 20 ]; then
        echo "$(( (hi / 100 + 1) * 100 )) $(( (65500 - (hi / 100 + 1) * 100) / 100 ))"
    else
        echo "20000 400"  # no room outside the ephemeral range: fall back, and hope
    fi
}

# A range of COUNT+1 TCP ports nobody listens on and no other cluster has reserved, from a random
# base (TIME_WAIT sockets of the last cluster may linger), reserved for DIR.
_cluster_free_port_base() {
    local count=$1 dir=$2 base busy i used blocks b got first nblocks
    mkdir -p "$EXPLSCHED_PORT_LOCKS" && chmod 1777 "$EXPLSCHED_PORT_LOCKS" 2>/dev/null
    blocks=$(( count / 100 + 1 ))
    read -r first nblocks < <(_cluster_port_window)
    [ "$nblocks" -ge "$blocks" ] || return 1
    # the local ports in use, as " 4E21 4E22 ... " (read once: a large cluster asks for 130 ports);
    # EXPLSCHED_TCP_TABLES names other tables in /proc/net/tcp's format (test_cluster_ports.sh)
    # shellcheck disable=SC2086
    used=" $(awk 'FNR > 1 { split($2, a, ":"); printf "%s ", toupper(a[2]) }' \
        ${EXPLSCHED_TCP_TABLES:-/proc/net/tcp /proc/net/tcp6} 2>/dev/null) "
    for _ in $(seq 1 50); do
        base=$(( first + (RANDOM % (nblocks - blocks + 1)) * 100 ))
        busy=0
        for ((i = 0; i <= count; i++)); do
            case $used in *" $(printf '%04X' $((base + i))) "*) busy=1; break ;; esac
        done
        [ $busy = 0 ] || continue
        got=()
        for ((b = 0; b < blocks; b++)); do
            _cluster_reserve_block $((base + b * 100)) "$dir" || { busy=1; break; }
            got+=("$EXPLSCHED_PORT_LOCKS/$((base + b * 100))")
        done
        if [ $busy = 0 ]; then echo "$base"; return 0; fi
        [ ${#got[@]} -gt 0 ] && rm -f "${got[@]}"
    done
    return 1
}

# The installed Slurm's release as major*100+minor (2205, 2411), from `slurmctld -V`.
_cluster_slurm_release() {
    local v
    v=$("$1" -V 2>/dev/null | awk '{ print $2 }')
    [[ $v =~ ^([0-9]+)\.([0-9]+) ]] || return 1
    echo $((10#${BASH_REMATCH[1]} * 100 + 10#${BASH_REMATCH[2]}))
}

_cluster_plugindir() {
    local d
    for d in "${SLURM_PLUGIN_INSTALLED_DIR:-}" /usr/lib/x86_64-linux-gnu/slurm-wlm \
        "/usr/lib/$(gcc -print-multiarch 2>/dev/null)/slurm-wlm" /usr/lib64/slurm /usr/lib/slurm; do
        [ -n "$d" ] && [ -f "$d/priority_basic.so" ] && { echo "$d"; return 0; }
    done
    return 1
}

cluster_up() {
    local dir=$1; shift
    local nodes=4 gpus=4 cpus=8 priority=priority/explsched preempt=preempt/explsched
    local params="" spank_args="" spank=yes debug=info slurmd_debug="" explschedd=no extra_conf=()
    local select_params=CR_Core
    local slurmd_log='slurmd.%n.log' explschedd_args="" proctrack=proctrack/linuxproc site=no accounting=no
    local gpu_types=""
    while [ $# -gt 0 ]; do
        case $1 in
            --nodes) nodes=$2; shift ;;
            --gpus) gpus=$2; shift ;;
            --cpus) cpus=$2; shift ;;
            --priority) priority=$2; shift ;;
            --preempt) preempt=$2; shift ;;
            --params) params=$2; shift ;;
            --spank-args) spank_args=$2; shift ;;
            --no-spank) spank=no ;;
            --debug) debug=debug2 ;;
            --log-level) debug=$2; shift ;;
            --slurmd-log-level) slurmd_debug=$2; shift ;;
            --shared-slurmd-log) slurmd_log=slurmd.log ;;
            --explschedd) explschedd=yes ;;
            --explschedd-args) explschedd_args=$2; shift ;;
            --proctrack) proctrack=$2; shift ;;
            --conf) extra_conf+=("$2"); shift ;;
            --select-params) select_params=$2; shift ;;
            # multifactor calls the site factor plugin only with slurmdbd: accounting too
            --site-factor) site=yes; accounting=yes; priority=priority/multifactor ;;
            --accounting) accounting=yes ;;
            --gpu-types) gpu_types=$2; shift ;;
            *) cluster_die "unknown option $1"; return 1 ;;
        esac
        shift
    done
    [ "$(id -u)" = 0 ] || { cluster_die "must run as root"; return 1; }
    local node_type=() item t k
    if [ -n "$gpu_types" ]; then  # node_type[n]: the GPU type of node n ("" untyped)
        for item in ${gpu_types//,/ }; do
            t=${item%%:*}; k=${item#*:}
            [[ "$t" =~ ^[A-Za-z0-9_.-]+$ && "$k" =~ ^[0-9]+$ ]] \
                || { cluster_die "--gpu-types: '$item' is not TYPE:NODES"; return 1; }
            while [ "$k" -gt 0 ]; do node_type+=("$t"); k=$((k - 1)); done
        done
        [ ${#node_type[@]} -le "$nodes" ] || { cluster_die "--gpu-types names more than $nodes nodes"; return 1; }
    fi
    local slurmctld slurmd munged
    slurmctld=$(_cluster_sbin slurmctld) || { cluster_die "slurmctld not installed"; return 1; }
    slurmd=$(_cluster_sbin slurmd) || { cluster_die "slurmd not installed"; return 1; }
    munged=$(_cluster_sbin munged) || { cluster_die "munged not installed"; return 1; }
    [ -r /etc/munge/munge.key ] || { cluster_die "/etc/munge/munge.key missing (reinstall munge)"; return 1; }
    local release
    release=$(_cluster_slurm_release "$slurmctld") || { cluster_die "cannot read the version of $slurmctld"; return 1; }
    local sysplugins
    sysplugins=$(_cluster_plugindir) || { cluster_die "Slurm's plugin directory not found"; return 1; }

    mkdir -p "$dir" && dir=$(cd "$dir" && pwd) || return 1
    [ -e "$dir/slurm.conf" ] && { cluster_die "$dir already holds a cluster; take it down first"; return 1; }
    mkdir -p "$dir"/{munge,state,log,spool,dev,run,tmp}
    chmod 755 "$dir"
    chmod 1777 "$dir/tmp"

    # munged on a private socket, as the munge user (it refuses to run as root).
    chown munge: "$dir/munge" && chmod 755 "$dir/munge"
    runuser -u munge -- "$munged" --socket="$dir/munge/munge.sock" \
        --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/seed" \
        --log-file="$dir/munge/munged.log" --key-file=/etc/munge/munge.key \
        || { cluster_die "munged failed to start (see $dir/munge/munged.log)"; return 1; }

    local base host
    base=$(_cluster_free_port_base $((nodes + 5)) "$dir") || { cluster_die "no free port range"; return 1; }
    host=$(hostname -s)
    local ctld_port=$base report_port=$((base + 1)) dbd_port=$((base + nodes + 3)) db_port=$((base + nodes + 4))

    local b=$top_builddir
    if [ $explschedd = yes ]; then
        [ -x "$b/src/daemon/explschedd" ] || { cluster_die "explschedd not built"; return 1; }
        case ",$params," in *,report_db=*) ;; *) params="${params:+$params,}report_db=$dir/state/reports.db" ;; esac
        printf 'report_host=127.0.0.1\nreport_port=%s\nreport_db=%s\nmunge_socket=%s\n' \
            "$report_port" "$dir/state/reports.db" "$dir/munge/munge.sock" >"$dir/explschedd.conf"
        echo "$explschedd_args" >"$dir/explschedd.args"
    fi
    local plugindir="$b/src/plugins/priority/explsched/.libs:$b/src/plugins/site_factor/explsched/.libs"
    plugindir="$plugindir:$b/src/plugins/preempt/explsched/.libs:$sysplugins"

    # Fake GPUs: gres.conf File= must name character devices; NVIDIA's major is 195. (One process
    # for all of them: one mknod(1) per device took 2 s for 1,024 devices.)
    local n i
    /usr/bin/python3 - "$dir" "$nodes" "$gpus" <<'EOF' || { cluster_die "mknod failed"; return 1; }
import os, stat, sys
top, nodes, gpus = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for n in range(1, nodes + 1):
    os.makedirs(f"{top}/dev/n{n}", exist_ok=True)
    os.makedirs(f"{top}/spool/n{n}", exist_ok=True)
    for i in range(gpus):
        os.mknod(f"{top}/dev/n{n}/nvidia{i}", 0o666 | stat.S_IFCHR, os.makedev(195, i))
EOF

    {
        echo "ClusterName=explsched$base"
        echo "SlurmctldHost=$host(127.0.0.1)"
        echo "SlurmctldPort=$ctld_port"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "AuthType=auth/munge"
        echo "CredType=cred/munge"
        # Short credential lifetime: a requeued job is eligible again after cred_expire + 1 s.
        echo "AuthInfo=socket=$dir/munge/munge.sock,cred_expire=10"
        echo "StateSaveLocation=$dir/state"
        echo "SlurmdSpoolDir=$dir/spool/%n"
        echo "SlurmctldPidFile=$dir/run/slurmctld.pid"
        echo "SlurmdPidFile=$dir/run/slurmd.%n.pid"
        echo "SlurmctldLogFile=$dir/log/slurmctld.log"
        echo "SlurmdLogFile=$dir/log/$slurmd_log"
        echo "SlurmctldDebug=$debug"
        echo "SlurmdDebug=${slurmd_debug:-$debug}"
        echo "PluginDir=$plugindir"
        [ $spank = yes ] && echo "PlugStackConfig=$dir/plugstack.conf"
        echo "GresTypes=gpu"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=$select_params"
        echo "TaskPlugin=task/none"
        echo "ProctrackType=$proctrack"
        echo "JobAcctGatherType=jobacct_gather/none"
        if [ $accounting = yes ]; then
            echo "AccountingStorageType=accounting_storage/slurmdbd"
            echo "AccountingStorageHost=127.0.0.1"
            echo "AccountingStoragePort=$dbd_port"
            echo "AccountingStoragePass=$dir/munge/munge.sock"  # the munge socket, for dbd connections
            echo "AccountingStorageEnforce=associations"
        else
            echo "AccountingStorageType=accounting_storage/none"
        fi
        echo "JobCompType=jobcomp/none"
        echo "SwitchType=switch/none"
        echo "MpiDefault=none"
        echo "ReturnToService=2"
        echo "SchedulerType=sched/backfill"
        echo "SchedulerParameters=sched_interval=2,bf_interval=2"
        echo "PriorityType=$priority"
        if [ $site = yes ]; then
            echo "PrioritySiteFactorPlugin=site_factor/explsched"
            [ -n "$params" ] && echo "PrioritySiteFactorParameters=$params"
        else
            [ -n "$params" ] && echo "PriorityParameters=$params"
        fi
        echo "PreemptType=$preempt"
        [ "$preempt" = preempt/none ] && echo "PreemptMode=OFF" || echo "PreemptMode=REQUEUE"
        echo "JobRequeue=1"
        echo "MinJobAge=3600"
        echo "KillWait=5"
        echo "InactiveLimit=0"
        echo "SlurmdTimeout=60"
        echo "MessageTimeout=10"
        echo "TmpFS=$dir/tmp"
        echo "SlurmdParameters=config_overrides"
        # What differs between the Slurm releases (with cgroup.conf below); the rest is common.
        # 24.11 checks MailProg at start and logs an error when it is missing (a minimal root
        # has no mail program).
        [ "$release" -ge 2405 ] && echo "MailProg=/bin/true"
        for line in "${extra_conf[@]}"; do echo "$line"; done
        for ((n = 1; n <= nodes; n++)); do
            t=${node_type[n - 1]:-}
            echo "NodeName=n$n NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base + 2 + n)) CPUs=$cpus RealMemory=4096 Gres=gpu:${t:+$t:}$gpus State=UNKNOWN"
        done
        echo "PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
    } >"$dir/slurm.conf"
    # Since 24.05 slurmd loads a cgroup plugin even with proctrack/linuxproc and task/none, and
    # fails where no cgroup file system is mounted (a chroot); CgroupPlugin=disabled (new in 24.05)
    # turns it off. 22.05 reads no cgroup.conf in this setup.
    if [ "$release" -ge 2405 ]; then echo "CgroupPlugin=disabled" >"$dir/cgroup.conf"; fi
    for ((n = 1; n <= nodes; n++)); do
        t=${node_type[n - 1]:-}
        echo "NodeName=n$n Name=gpu ${t:+Type=$t }File=$dir/dev/n$n/nvidia[0-$((gpus - 1))]"
    done >"$dir/gres.conf"
    if [ $spank = yes ]; then
        echo "required $b/src/spank/.libs/spank_explsched.so report_port=$report_port munge_socket=$dir/munge/munge.sock $spank_args" \
            >"$dir/plugstack.conf"
    fi
    cat >"$dir/env.sh" <<EOF
export SLURM_CONF=$dir/slurm.conf
export EXPLSCHED_CLUSTER_DIR=$dir
export EXPLSCHED_MUNGE_SOCKET=$dir/munge/munge.sock
export EXPLSCHED_REPORT_PORT=$report_port
EOF
    [ $explschedd = yes ] && echo "export EXPLSCHED_CONF=$dir/explschedd.conf" >>"$dir/env.sh"
    echo "$nodes" >"$dir/nodes"

    export SLURM_CONF=$dir/slurm.conf
    if [ $accounting = yes ]; then
        echo yes >"$dir/accounting"
        _cluster_accounting_up "$dir" "explsched$base" "$dbd_port" "$db_port" || return 1
    fi
    "$slurmctld" -c -f "$dir/slurm.conf" \
        || { cluster_die "slurmctld failed to start:"; tail -20 "$dir/log/slurmctld.log" >&2; return 1; }
    _cluster_start_slurmds "$dir" "$slurmd" "$nodes" || return 1
    # A node registers within a second or two of its start; slurmctld takes the registrations
    # one by one, so a large cluster gets longer. A slurmd that is gone by then (one exited after
    # daemonizing in a trixie root once, and its node stayed unknown) is started once more, its
    # log's tail shown; so are a database server or slurmdbd that is gone.
    if ! _cluster_wait_up "$dir" $((30 + nodes / 2)); then
        _cluster_restart_gone_accounting "$dir" || return 1
        _cluster_restart_gone_slurmds "$dir" "$slurmd" "$nodes" || return 1
        cluster_wait_idle "$dir" $((60 + nodes / 2)) || return 1
    fi
    if [ $explschedd = yes ]; then cluster_start_explschedd "$dir" || return 1; fi
    cluster_log "up: $nodes nodes x $gpus GPUs in $dir (slurmctld port $ctld_port)"
}

# Starts `slurmd -N nX` for X in 1..NODES, up to 16 at a time (each daemonizes once it has read
# its configuration, so a batch returns quickly; one at a time, 128 nodes took 11 s here).
_cluster_start_slurmds() {
    local dir=$1 slurmd=$2 nodes=$3 n pids=() names=() k failed=0 log
    for ((n = 1; n <= nodes; n++)); do
        "$slurmd" -f "$dir/slurm.conf" -N "n$n" &
        pids+=($!)
        names+=("n$n")
        if [ ${#pids[@]} -ge 16 ] || [ "$n" = "$nodes" ]; then
            for k in "${!pids[@]}"; do
                wait "${pids[$k]}" && continue
                failed=1
                log=$dir/log/slurmd.${names[$k]}.log
                [ -f "$log" ] || log=$dir/log/slurmd.log
                cluster_die "slurmd -N ${names[$k]} failed:"
                tail -20 "$log" >&2
            done
            pids=() names=()
            [ $failed = 0 ] || return 1
        fi
    done
}

# Starts explschedd for the cluster (its config in DIR/explschedd.conf) and waits until it listens.
cluster_start_explschedd() {
    local dir=$1 port
    local args=()
    port=$(sed -n 's/^report_port=//p' "$dir/explschedd.conf")
    [ -f "$dir/explschedd.args" ] && read -r -a args <"$dir/explschedd.args"
    "$top_builddir/src/daemon/explschedd" -f "$dir/explschedd.conf" --pid-file "$dir/run/explschedd.pid" \
        --slurm-conf "$dir/slurm.conf" "${args[@]}" >>"$dir/log/explschedd.log" 2>&1 \
        || { cluster_die "explschedd failed to start"; tail -5 "$dir/log/explschedd.log" >&2; return 1; }
    local deadline=$((SECONDS + 20))
    while [ $SECONDS -lt $deadline ]; do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        sleep 0.1
    done
    cluster_die "explschedd not listening on $port"
}

cluster_kill_explschedd() {  # SIGKILL, as a crash would
    local pid
    pid=$(cat "$1/run/explschedd.pid" 2>/dev/null) && kill -KILL "$pid" 2>/dev/null
    sleep 0.2
    rm -f "$1/run/explschedd.pid"
}

# True once every node is idle (or mixed/allocated: up and responding), false after TIMEOUT s.
_cluster_wait_up() {
    local dir=$1 timeout=$2 states
    local deadline=$((SECONDS + timeout))
    while [ $SECONDS -lt $deadline ]; do
        states=$(SLURM_CONF=$dir/slurm.conf sinfo -h -N -o '%t' 2>/dev/null)
        if [ -n "$states" ] && ! echo "$states" | grep -qvE '^(idle|mix|alloc)$'; then
            return 0
        fi
        sleep 0.2
    done
    return 1
}

# Starts again the slurmd of every node whose slurmd is not running (its pid file names no live
# process), after showing the end of its log.
_cluster_restart_gone_slurmds() {
    local dir=$1 slurmd=$2 nodes=$3 n pid log
    for ((n = 1; n <= nodes; n++)); do
        pid=$(cat "$dir/run/slurmd.n$n.pid" 2>/dev/null) || pid=
        _cluster_pid_alive "$pid" && continue
        cluster_log "slurmd of n$n is not running; starting it again"
        log=$dir/log/slurmd.n$n.log
        [ -f "$log" ] && tail -n 10 "$log" >&2
        "$slurmd" -f "$dir/slurm.conf" -N "n$n" || { cluster_die "slurmd -N n$n failed again"; return 1; }
    done
}

# Waits until every node is idle (or mixed/allocated: up and responding).
cluster_wait_idle() {
    local dir=$1 timeout=${2:-60} states
    _cluster_wait_up "$dir" "$timeout" && return 0
    states=$(SLURM_CONF=$dir/slurm.conf sinfo -h -N -o '%t' 2>/dev/null)
    cluster_die "nodes not idle after ${timeout}s (states: $states)"
    SLURM_CONF=$dir/slurm.conf sinfo -N -l >&2 2>/dev/null || true
    tail -n 5 "$dir"/log/*.log >&2
    return 1
}

_cluster_kill_pidfile() {
    _cluster_kill_pidfiles "$@"
}

# Whether PID names a live process: not a zombie (a killed daemon stays one where nobody reaps
# it, and holds no port or file then).
_cluster_pid_alive() {
    local pid=$1
    [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] && [ "$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" != Z ]
}

# SIGTERM to the daemons of all the pid files at once, then waits up to 5 s for them all,
# SIGKILLs the rest and waits up to 5 s more for them to be gone (a slurmd takes about 2 s to
# stop: 128 of them one after another took minutes). Returning before a killed slurmctld is gone
# let the next one fail to bind its port ("Address already in use").
_cluster_kill_pidfiles() {
    local pidfile pid pids=() alive i
    for pidfile in "$@"; do
        [ -f "$pidfile" ] || continue
        pid=$(cat "$pidfile" 2>/dev/null)
        [ -n "$pid" ] || continue
        kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
    done
    [ ${#pids[@]} -gt 0 ] || return 0
    for ((i = 1; i <= 100; i++)); do
        alive=()
        for pid in "${pids[@]}"; do _cluster_pid_alive "$pid" && alive+=("$pid"); done
        [ ${#alive[@]} -gt 0 ] || return 0
        pids=("${alive[@]}")
        [ "$i" = 50 ] && { kill -KILL "${pids[@]}" 2>/dev/null || true; }
        sleep 0.1
    done
    cluster_log "still running after SIGKILL: ${pids[*]}"
}

# Processes that belong to this cluster: their environment names its slurm.conf (job steps,
# slurmstepd) or their command line names its directory.
_cluster_pids() {
    local dir=$1
    # two greps over /proc, not two processes per process (0.8 s with a 128-node cluster running)
    { grep -lzxF "SLURM_CONF=$dir/slurm.conf" /proc/[0-9]*/environ; grep -lzF "$dir/" /proc/[0-9]*/cmdline; } 2>/dev/null \
        | sed -n 's|^/proc/\([0-9]*\)/.*|\1|p' | sort -un | grep -vxF -e "$$" -e "$BASHPID"
}

# _cluster_wait_ctld_port DIR: after slurmctld was killed, waits (15 s at most) until nothing
# listens on the cluster's SlurmctldPort any more. The killed process may be gone while a child
# that inherited the listening socket is not yet: CI once failed to start the next slurmctld there
# ("Error binding slurm stream socket: Address already in use", Slurm 24.11).
_cluster_wait_ctld_port() {
    local dir=$1 port deadline killed=no
    port=$(sed -n 's/^SlurmctldPort=\([0-9]*\).*/\1/p' "$dir/slurm.conf" 2>/dev/null | head -1)
    [ -n "$port" ] || return 0
    deadline=$((SECONDS + 15))
    while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
        # After 5 s, the Slurm processes still holding the listening socket are killed: CI saw the
        # port held for more than 15 s after a reconfigure under 24.11, by slurmctld itself (24.11
        # restarts slurmctld as a new process on reconfigure; the pid file named the old one).
        if [ $killed = no ] && [ $((deadline - SECONDS)) -le 10 ]; then
            killed=yes
            local p exe
            for p in $(_cluster_port_holders "$port"); do
                exe=$(readlink "/proc/$p/exe" 2>/dev/null)
                cluster_log "port $port still held after slurmctld stopped by $p ($exe: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80))"
                # only Slurm's own processes (slurmctld's children run its executable)
                case $exe in */slurm*) kill -KILL "$p" 2>/dev/null || true ;; esac
            done
        fi
        [ $SECONDS -lt $deadline ] || { cluster_log "port $port still in use after slurmctld stopped"; return 0; }
        sleep 0.2
    done
}

# _cluster_port_holders PORT: the processes holding a socket that listens on PORT (from
# /proc/net/tcp{,6} and /proc/PID/fd, as ss -p does; ss is not in every root).
_cluster_port_holders() {
    local hex inodes f link
    hex=$(printf '%04X' "$1")
    inodes=$(awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { print $10 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u)
    [ -n "$inodes" ] || return 0
    for f in /proc/[0-9]*/fd/*; do
        link=$(readlink "$f" 2>/dev/null) || continue
        case $link in socket:\[*\]) ;; *) continue ;; esac
        link=${link#socket:[}; link=${link%]}
        grep -qxF "$link" <<<"$inodes" && { f=${f#/proc/}; echo "${f%%/*}"; }
    done | sort -un | grep -vxF -e "$$" -e "$BASHPID"
}

# cluster_stop_slurmctld DIR: stops the cluster's slurmctld and waits until its port is free, so
# that the next slurmctld (restarted, started with other settings or with a clean state) can bind.
cluster_stop_slurmctld() {
    local dir=$1
    _cluster_kill_pidfile "$dir/run/slurmctld.pid"
    _cluster_wait_ctld_port "$dir"
}

cluster_restart_slurmctld() {
    local dir=$1 slurmctld
    slurmctld=$(_cluster_sbin slurmctld) || return 1
    cluster_stop_slurmctld "$dir"
    SLURM_CONF=$dir/slurm.conf "$slurmctld" -f "$dir/slurm.conf" \
        || { cluster_die "slurmctld failed to restart"; tail -20 "$dir/log/slurmctld.log" >&2; return 1; }
    local deadline=$((SECONDS + 30))
    while [ $SECONDS -lt $deadline ]; do
        SLURM_CONF=$dir/slurm.conf scontrol ping 2>/dev/null | grep -q "is UP" && return 0
        sleep 0.2
    done
    cluster_die "slurmctld not answering after restart"
}

cluster_down() {
    local dir=$1 n nodes pid
    [ -d "$dir" ] && dir=$(cd "$dir" && pwd)
    [ -f "$dir/slurm.conf" ] || { _cluster_release_ports "$dir"; return 0; }
    export SLURM_CONF=$dir/slurm.conf
    # Slurm 22.05's scancel sends one RPC per job: with 10,000 jobs queued it took over ten minutes.
    # Bounded; whatever is left is killed below with the daemons.
    timeout 15 scancel --quiet --full -u root 2>/dev/null || true
    timeout 5 scancel --quiet --full --state=PENDING 2>/dev/null || true
    nodes=$(cat "$dir/nodes" 2>/dev/null || echo 0)
    local pidfiles=("$dir/run/slurmctld.pid" "$dir/run/explschedd.pid")
    for ((n = 1; n <= nodes; n++)); do pidfiles+=("$dir/run/slurmd.n$n.pid"); done
    _cluster_kill_pidfiles "${pidfiles[@]}"
    [ -f "$dir/accounting" ] && _cluster_accounting_down "$dir"
    # Steps still running (slurmstepd and the tasks under it) and helpers started for the cluster.
    for pid in $(_cluster_pids "$dir"); do kill -TERM "$pid" 2>/dev/null || true; done
    sleep 0.3
    for pid in $(_cluster_pids "$dir"); do kill -KILL "$pid" 2>/dev/null || true; done
    _cluster_kill_pidfile "$dir/munge/munged.pid"
    rm -f "$dir/slurm.conf"
    _cluster_release_ports "$dir"
    cluster_log "down: $dir"
}

# What the cluster's daemons cost: resident memory (RSS, and PSS, which shares the pages common to
# the 128 slurmd processes out among them) of slurmctld and of every slurmd, from their pid files.
cluster_cost() {
    local dir=$1 f pid
    for f in "$dir"/run/slurmctld.pid "$dir"/run/slurmd.*.pid; do
        pid=$(cat "$f" 2>/dev/null) || continue
        [ -r "/proc/$pid/smaps_rollup" ] || continue
        awk -v who="$(basename "$f" .pid)" '/^Rss:/ { r = $2 } /^Pss:/ { p = $2 } END { print who, r, p }' \
            "/proc/$pid/smaps_rollup"
    done | awk '
        $1 == "slurmctld" { printf "slurmctld: RSS %.1f MiB, PSS %.1f MiB\n", $2 / 1024, $3 / 1024; next }
        { n++; r += $2; p += $3 }
        END { if (n) printf "%d slurmd: RSS %.1f MiB in all (%.1f each), PSS %.1f MiB in all\n", n, r / 1024, r / 1024 / n, p / 1024 }'
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -u
    cmd=${1:-}; shift || true
    case $cmd in
        up) cluster_up "$@" ;;
        down) cluster_down "$@" ;;
        status) SLURM_CONF=$1/slurm.conf sinfo -N -l; SLURM_CONF=$1/slurm.conf squeue ;;
        cost) cluster_cost "$1" ;;
        *) echo "usage: $0 up DIR [options] | down DIR | status DIR | cost DIR" >&2; exit 2 ;;
    esac
fi
