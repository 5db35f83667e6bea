#!/bin/bash
# A real Slurm cluster on this one host, for tests and the demo: munged, slurmctld and N slurmd
# (`slurmd -N nX`), each node with M fake GPUs (character devices 195:i, as NVIDIA's), all in an
# isolated directory with its own ports, loading ExplSched's plugins from the build tree through a
# PluginDir list. Everything is stopped by PID (never by process name).
#
# As a command:   cluster.sh up DIR [options]    cluster.sh down DIR    cluster.sh status DIR
# As a library:   . cluster.sh; cluster_up DIR [options]; ...; cluster_down DIR
# Options of up:  --nodes N (4)  --gpus M (4)  --cpus C (8)  --priority TYPE (priority/explsched)
#                 --preempt TYPE (preempt/explsched)  --params 'k=v,...' (PriorityParameters)
#                 --spank-args 'k=v ...'  --no-spank  --debug  --log-level LEVEL
#                 --explschedd (start the report collector; PriorityParameters gets its report_db)
#                 --conf 'Key=Value' (an extra slurm.conf line; repeatable)
#                 --site-factor (priority/multifactor with site_factor/explsched; --params then
#                 go to PrioritySiteFactorParameters)
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

# A TCP port nobody listens on, from a per-run random base (tests run one after another and
# TIME_WAIT sockets of the last cluster may linger).
_cluster_free_port_base() {
    local count=$1 base p busy i
    for _ in $(seq 1 50); do
        base=$(( 20000 + (RANDOM % 400) * 100 ))
        busy=0
        for ((i = 0; i <= count; i++)); do
            p=$(printf '%04X' $((base + i)))
            if grep -qi ":$p " /proc/net/tcp /proc/net/tcp6 2>/dev/null; then busy=1; break; fi
        done
        [ $busy = 0 ] && { echo "$base"; return 0; }
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
    local params="" spank_args="" spank=yes debug=info explschedd=no extra_conf=() site=no accounting=no
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
            --explschedd) explschedd=yes ;;
            --conf) extra_conf+=("$2"); shift ;;
            --site-factor) site=yes; priority=priority/multifactor ;;
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
    base=$(_cluster_free_port_base $((nodes + 5))) || { cluster_die "no free port range"; return 1; }
    host=$(hostname -s)
    local ctld_port=$base report_port=$((base + 1)) dbd_port=$((base + nodes + 3)) db_port=$((base + nodes + 4))

    local b=$top_builddir
    if [ $explschedd = yes ]; then
        [ -x "$b/src/daemon/explschedd" ] || { cluster_die "explschedd not built"; return 1; }
        case ",$params," in *,report_db=*) ;; *) params="${params:+$params,}report_db=$dir/state/reports.db" ;; esac
        printf 'report_host=127.0.0.1\nreport_port=%s\nreport_db=%s\nmunge_socket=%s\n' \
            "$report_port" "$dir/state/reports.db" "$dir/munge/munge.sock" >"$dir/explschedd.conf"
    fi
    local plugindir="$b/src/plugins/priority/explsched/.libs:$b/src/plugins/site_factor/explsched/.libs"
    plugindir="$plugindir:$b/src/plugins/preempt/explsched/.libs:$sysplugins"

    # Fake GPUs: gres.conf File= must name character devices; NVIDIA's major is 195.
    local n i
    for ((n = 1; n <= nodes; n++)); do
        mkdir -p "$dir/dev/n$n" "$dir/spool/n$n"
        for ((i = 0; i < gpus; i++)); do
            mknod "$dir/dev/n$n/nvidia$i" c 195 "$i" || { cluster_die "mknod failed"; return 1; }
        done
    done

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
        echo "SlurmdLogFile=$dir/log/slurmd.%n.log"
        echo "SlurmctldDebug=$debug"
        echo "SlurmdDebug=$debug"
        echo "PluginDir=$plugindir"
        [ $spank = yes ] && echo "PlugStackConfig=$dir/plugstack.conf"
        echo "GresTypes=gpu"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core"
        echo "TaskPlugin=task/none"
        echo "ProctrackType=proctrack/linuxproc"
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
    for ((n = 1; n <= nodes; n++)); do
        "$slurmd" -f "$dir/slurm.conf" -N "n$n" \
            || { cluster_die "slurmd -N n$n failed:"; tail -20 "$dir/log/slurmd.n$n.log" >&2; return 1; }
    done
    cluster_wait_idle "$dir" 60 || return 1
    if [ $explschedd = yes ]; then cluster_start_explschedd "$dir" || return 1; fi
    cluster_log "up: $nodes nodes x $gpus GPUs in $dir (slurmctld port $ctld_port)"
}

# Starts explschedd for the cluster (its config in DIR/explschedd.conf) and waits until it listens.
cluster_start_explschedd() {
    local dir=$1 port
    port=$(sed -n 's/^report_port=//p' "$dir/explschedd.conf")
    "$top_builddir/src/daemon/explschedd" -f "$dir/explschedd.conf" --pid-file "$dir/run/explschedd.pid" \
        --slurm-conf "$dir/slurm.conf" >>"$dir/log/explschedd.log" 2>&1 \
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

# Waits until every node is idle (or mixed/allocated: up and responding).
cluster_wait_idle() {
    local dir=$1 timeout=${2:-60} states
    local deadline=$((SECONDS + timeout))
    while [ $SECONDS -lt $deadline ]; do
        states=$(SLURM_CONF=$dir/slurm.conf sinfo -h -N -o '%t' 2>/dev/null)
        if [ -n "$states" ] && ! echo "$states" | grep -qvE '^(idle|mix|alloc)$'; then
            return 0
        fi
        sleep 0.2
    done
    cluster_die "nodes not idle after ${timeout}s (states: $states)"
    SLURM_CONF=$dir/slurm.conf sinfo -N -l >&2 2>/dev/null || true
    tail -5 "$dir"/log/*.log >&2
    return 1
}

_cluster_kill_pidfile() {
    local pidfile=$1 pid
    [ -f "$pidfile" ] || return 0
    pid=$(cat "$pidfile" 2>/dev/null)
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}

# Processes that belong to this cluster: their environment names its slurm.conf (job steps,
# slurmstepd) or their command line names its directory.
_cluster_pids() {
    local dir=$1 p
    for p in /proc/[0-9]*; do
        [ "${p#/proc/}" = "$$" ] && continue
        if { tr '\0' '\n' <"$p/environ" | grep -qxF "SLURM_CONF=$dir/slurm.conf"; } 2>/dev/null \
            || { tr '\0' ' ' <"$p/cmdline" | grep -qF "$dir/"; } 2>/dev/null; then
            echo "${p#/proc/}"
        fi
    done 2>/dev/null
}

cluster_restart_slurmctld() {
    local dir=$1 slurmctld
    slurmctld=$(_cluster_sbin slurmctld) || return 1
    _cluster_kill_pidfile "$dir/run/slurmctld.pid"
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
    [ -f "$dir/slurm.conf" ] || return 0
    export SLURM_CONF=$dir/slurm.conf
    scancel --quiet --full -u root 2>/dev/null || true
    scancel --quiet --full --state=PENDING 2>/dev/null || true
    nodes=$(cat "$dir/nodes" 2>/dev/null || echo 0)
    _cluster_kill_pidfile "$dir/run/slurmctld.pid"
    for ((n = 1; n <= nodes; n++)); do _cluster_kill_pidfile "$dir/run/slurmd.n$n.pid"; done
    _cluster_kill_pidfile "$dir/run/explschedd.pid"
    [ -f "$dir/accounting" ] && _cluster_accounting_down "$dir"
    # Steps still running (slurmstepd and the tasks under it) and helpers started for the cluster.
    for pid in $(_cluster_pids "$dir"); do kill -TERM "$pid" 2>/dev/null; done
    sleep 0.3
    for pid in $(_cluster_pids "$dir"); do kill -KILL "$pid" 2>/dev/null; done
    _cluster_kill_pidfile "$dir/munge/munged.pid"
    rm -f "$dir/slurm.conf"
    cluster_log "down: $dir"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -u
    cmd=${1:-}; shift || true
    case $cmd in
        up) cluster_up "$@" ;;
        down) cluster_down "$@" ;;
        status) SLURM_CONF=$1/slurm.conf sinfo -N -l; SLURM_CONF=$1/slurm.conf squeue ;;
        *) echo "usage: $0 up DIR [options] | down DIR | status DIR" >&2; exit 2 ;;
    esac
fi
