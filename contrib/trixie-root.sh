#!/bin/bash
# A Debian 13 (trixie) minbase root filesystem with trixie's Slurm 24.11, for building and testing
# this source tree against a second Slurm release on a Debian 12 host (or any Debian with
# debootstrap). Made once with debootstrap and cached; each run mounts /proc, /sys, /dev, /dev/pts,
# /dev/shm and /run, bind-mounts the source tree at the same path, makes sure the packages of
# contrib/install-deps.sh --integration and the matching Slurm source (contrib/slurm-source.sh)
# are there, runs COMMAND inside with chroot, and unmounts everything on exit (also on error or
# signal). Processes left running inside the root (a test's slurmd) are stopped first, by PID.
#
#   contrib/trixie-root.sh [--root DIR] [--rebuild] [--] [COMMAND [ARG...]]
#
# COMMAND runs in the source tree with bash -c semantics for one argument, as a program otherwise;
# without it, an interactive shell. Needs root, about 1.3 GB of disk, and a Debian mirror:
# EXPLSCHED_DEBIAN_MIRROR, else the first Debian URI of this host's apt sources, else
# http://deb.debian.org/debian. The root is $EXPLSCHED_CACHE/trixie-root (default
# ~/.cache/explsched/trixie-root); a stamp file marks it complete, so an interrupted debootstrap
# is redone. Runs are serialised with a lock file next to the root.
set -euo pipefail

log() { echo "trixie-root: $*" >&2; }
die() { echo "trixie-root: error: $*" >&2; exit 1; }

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${EXPLSCHED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/explsched}
root=$cache/trixie-root
rebuild=no
while [ $# -gt 0 ]; do
    case $1 in
        --root) root=$2; shift 2 ;;
        --rebuild) rebuild=yes; shift ;;
        --) shift; break ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1" ;;
        *) break ;;
    esac
done
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, mount, chroot)"
suite=trixie
# Bump when the recipe below changes, so that an old root is rebuilt rather than trusted.
recipe=1
stamp=$root/.explsched-root-complete

mkdir -p "$(dirname "$root")"
root=$(cd "$(dirname "$root")" && pwd)/$(basename "$root")
stamp=$root/.explsched-root-complete

exec 9>"$root.lock"
if ! flock -n 9; then
    log "waiting for another run using $root"
    flock 9
fi

# Mount points under the root, deepest first (from the kernel's table, so that leftovers of a
# killed run are found too).
mounts_under_root() {
    awk -v r="$root" '{ gsub(/\\040/, " ", $5); if ($5 == r || index($5, r "/") == 1) print $5 }' \
        /proc/self/mountinfo | sort -r
}

# Processes whose root directory is ours (a slurmd or munged a test left behind).
pids_in_root() {
    local p
    for p in /proc/[0-9]*; do
        if [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ]; then echo "${p#/proc/}"; fi
    done
    return 0
}
stop_processes_in_root() {
    local pids sig i
    for sig in TERM KILL; do
        pids=$(pids_in_root)
        [ -z "$pids" ] && return 0
        log "stopping processes left in the root (SIG$sig):" \
            "$(for p in $pids; do echo "$p/$(cat "/proc/$p/comm" 2>/dev/null)"; done | tr '\n' ' ')"
        # shellcheck disable=SC2086
        kill -"$sig" $pids 2>/dev/null || true
        for i in $(seq 1 50); do [ -z "$(pids_in_root)" ] && return 0; sleep 0.1; done
    done
}

unmount_all() {
    local m tries
    stop_processes_in_root
    for tries in 1 2 3; do
        [ -z "$(mounts_under_root)" ] && return 0
        while read -r m; do
            [ -n "$m" ] && umount "$m" 2>/dev/null || true
        done < <(mounts_under_root)
        [ -z "$(mounts_under_root)" ] && return 0
        stop_processes_in_root
        sleep "$tries"
    done
    # Last resort: detach what is still busy (it goes when its last user does).
    while read -r m; do
        [ -n "$m" ] && { log "lazy unmount of busy $m"; umount -l "$m" || true; }
    done < <(mounts_under_root)
    [ -z "$(mounts_under_root)" ] || log "warning: still mounted under $root: $(mounts_under_root | tr '\n' ' ')"
}

# A killed earlier run may have left its mounts: we hold the lock, so they are stale.
if [ -n "$(mounts_under_root)" ]; then
    log "removing stale mounts under $root"
    (set +e; unmount_all)
    [ -z "$(mounts_under_root)" ] || die "cannot unmount $(mounts_under_root | tr '\n' ' ')"
fi

mirror() {
    if [ -n "${EXPLSCHED_DEBIAN_MIRROR:-}" ]; then echo "$EXPLSCHED_DEBIAN_MIRROR"; return; fi
    local u
    u=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' \
        | grep -E '/debian/?$' | head -1 || true)
    [ -n "$u" ] || u=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
        | awk '$1 == "deb" { print $2 }' | grep -E '/debian/?$' | head -1 || true)
    echo "${u:-http://deb.debian.org/debian}"
}

make_root() {
    local start=$SECONDS m
    m=$(mirror)
    m=${m%/}
    command -v debootstrap >/dev/null || {
        log "installing debootstrap"
        apt-get install -y -qq --no-install-recommends debootstrap >/dev/null \
            || { apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; } \
            || die "cannot install debootstrap"
    }
    [ -z "$(mounts_under_root)" ] || die "mounts under $root; refusing to delete it"
    rm -rf "$root"
    mkdir -p "$root"
    log "debootstrap --variant=minbase $suite $root $m (a few minutes)"
    debootstrap --variant=minbase "$suite" "$root" "$m" >"$root.debootstrap.log" 2>&1 \
        || { tail -20 "$root.debootstrap.log" >&2; die "debootstrap failed (log: $root.debootstrap.log)"; }
    # Sources as trixie's installer writes them (deb822), with the updates and security suites;
    # contrib/apt-deb-src.sh adds the matching deb-src stanza inside.
    local sec=${m%/debian}/debian-security
    [ "$sec" != "$m/debian-security" ] || sec=http://deb.debian.org/debian-security
    rm -f "$root/etc/apt/sources.list"
    cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $m
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $sec
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    # No daemons started by package scripts inside the root (munge's postinst would start one).
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    # Smaller: no documentation or translations from later installs.
    cat >"$root/etc/dpkg/dpkg.cfg.d/explsched-nodoc" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/info/*
EOF
    printf 'APT::Install-Recommends "false";\nBinary::apt::APT::Keep-Downloaded-Packages "false";\n' \
        >"$root/etc/apt/apt.conf.d/90explsched"
    rm -rf "$root/var/cache/apt/archives/"*.deb
    echo "recipe=$recipe suite=$suite mirror=$m made=$(date -u +%FT%TZ)" >"$stamp"
    log "debootstrap done in $((SECONDS - start)) s"
}

if [ $rebuild = yes ] || [ ! -f "$stamp" ] || ! grep -q "^recipe=$recipe " "$stamp"; then
    make_root
else
    log "reusing $root ($(cut -d' ' -f1-3 "$stamp"))"
fi

# The clean-up must run to its end whatever fails in it: no errexit there.
trap 'set +e; unmount_all' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
mount -t tmpfs -o mode=0755 tmpfs "$root/run"
mkdir -p "$root/run/lock" "$root/run/shm" && chmod 1777 "$root/run/lock" "$root/run/shm"
mkdir -p "$root$top"
mount --bind "$top" "$root$top"
# The shared data directory beside the tree, when there is one (data-driven tests read it).
if [ -d "$top/../shared" ]; then
    shared=$(cd "$top/../shared" && pwd)
    mkdir -p "$root$shared"
    mount --bind "$shared" "$root$shared"
    mount -o remount,bind,ro "$root$shared" 2>/dev/null || true
fi
# Name resolution as on the host (apt inside needs it; the local cluster uses `hostname -s`).
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
cp /etc/hosts "$root/etc/hosts"
hostname >"$root/etc/hostname"

in_root() {
    chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        DEBIAN_FRONTEND=noninteractive CI="${CI:-}" EXPLSCHED_IN_ROOT="$suite" \
        /bin/bash -c "cd \"\$1\" && shift && $1" bash "$top" "${@:2}"
}

start=$SECONDS
in_root 'bash contrib/install-deps.sh --integration >&2 && bash contrib/slurm-source.sh >/dev/null' \
    || die "installing the packages or the Slurm source inside the root failed"
log "root ready in $((SECONDS - start)) s: Slurm $(chroot "$root" dpkg-query -W -f='${Version}' slurmctld)"

rc=0
if [ $# -eq 0 ]; then
    in_root 'exec bash -i' || rc=$?
elif [ $# -eq 1 ]; then
    in_root "$1" || rc=$?
else
    in_root 'exec "$@"' "$@" || rc=$?
fi
exit $rc
