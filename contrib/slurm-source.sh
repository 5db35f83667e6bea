#!/bin/bash
# Fetch the Debian source of exactly the installed Slurm version and configure it (headers only)
# into a cache directory, so that slurmctld plugins can be built against Slurm's internal headers.
#
# Usage: contrib/slurm-source.sh [CACHE_DIR]
# Prints two lines on stdout: SLURM_SOURCE=<dir> and SLURM_BUILD=<dir>. Reuses a complete tree.
set -euo pipefail

log() { echo "slurm-source: $*" >&2; }
die() { echo "slurm-source: error: $*" >&2; exit 1; }

cache=${1:-${EXPLSCHED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/explsched}}
command -v dpkg-query >/dev/null || die "dpkg-query not found: this script supports Debian and derivatives"
version=$(dpkg-query -W -f='${Version}' slurmctld 2>/dev/null || true)
[ -n "$version" ] || version=$(dpkg-query -W -f='${Version}' libslurm-dev 2>/dev/null || true)
[ -n "$version" ] || die "neither slurmctld nor libslurm-dev is installed; install Slurm first"
upstream=${version#*:}; upstream=${upstream%%-*}
dir="$cache/slurm-$version"
src="$dir/src"
build="$dir/build"
stamp="$dir/.configured"

if [ -f "$stamp" ] && [ -f "$build/config.h" ] && [ -f "$src/src/slurmctld/slurmctld.h" ]; then
    log "reusing $dir"
    echo "SLURM_SOURCE=$src"
    echo "SLURM_BUILD=$build"
    exit 0
fi

command -v apt-get >/dev/null || die "apt-get not found"
command -v dpkg-source >/dev/null || die "dpkg-source not found: install dpkg-dev"

# apt-get source needs deb-src entries; add them (same URIs and keyring as the deb entries).
if ! apt-get indextargets --format '$(CREATED_BY)' 2>/dev/null | grep -q '^Sources$'; then
    [ "$(id -u)" = 0 ] || die "no deb-src entries configured and not root: add deb-src lines for bookworm, or run as root"
    log "adding deb-src entries to /etc/apt/sources.list.d/explsched-src.sources"
    contrib/apt-deb-src.sh
    apt-get update -qq
fi

rm -rf "$dir"
mkdir -p "$dir/dl"
# apt downloads as _apt when it can; let it write there (otherwise it warns and runs as root).
chown _apt "$dir/dl" 2>/dev/null || true
# Fallback when apt-get source fails: each file of the source package from any deb-src
# repository that lists this version (the file can be in the security archive's pool, or a mirror
# may lack one), checked against the SHA-256 of apt's signed index by apt-helper.
fetch_each_file() {
    local dirs repos uri name size sum c
    dirs=$(apt-cache showsrc slurm-wlm 2>/dev/null | awk -v v="$version" 'BEGIN { RS = "" } {
        ver = ""; d = ""; n = split($0, l, "\n")
        for (i = 1; i <= n; i++) {
            if (l[i] ~ /^Version: /) ver = substr(l[i], 10)
            if (l[i] ~ /^Directory: /) d = substr(l[i], 12)
        }
        if (ver == v && d != "") print d }' | sort -u)
    repos=$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Sources' 2>/dev/null | sort -u)
    apt-get source --print-uris -qq "slurm-wlm=$version" 2>/dev/null | while read -r uri name size sum; do
        uri=${uri//\'/}
        for c in "$uri" $(for r in $repos; do for d in $dirs; do echo "${r%/}/$d/${uri##*/}"; done; done); do
            if /usr/lib/apt/apt-helper download-file "$c" "$dir/dl/$name" "$sum" >/dev/null 2>&1; then
                log "got $name ($size bytes) from ${c%/*}"
                continue 2
            fi
        done
        log "$name: not found in any deb-src repository"
    done
}

# Unpack a 3.0 (quilt) source without its .dsc: what dpkg-source -x does (orig tarball, debian
# tarball, then debian/patches/series in order).
unpack_without_dsc() {
    local orig deb p opts
    orig=$(ls "$dir"/dl/slurm-wlm_"$upstream".orig.tar.* 2>/dev/null | head -1)
    deb=$(ls "$dir"/dl/slurm-wlm_*.debian.tar.* 2>/dev/null | head -1)
    [ -n "$orig" ] && [ -n "$deb" ] || return 1
    mkdir -p "$src"
    tar -xf "$orig" -C "$src" --strip-components=1 && tar -xf "$deb" -C "$src" || return 1
    [ "$(cat "$src/debian/source/format" 2>/dev/null)" = "3.0 (quilt)" ] || return 1
    [ -f "$src/debian/patches/series" ] || return 0
    while read -r p opts; do
        case $p in "" | "#"*) continue ;; esac
        case " $opts " in *" -p"*) ;; *) opts="-p1 $opts" ;; esac
        # shellcheck disable=SC2086
        patch -d "$src" -s -N $opts <"$src/debian/patches/$p" || { log "patch $p failed"; return 1; }
    done <"$src/debian/patches/series"
}

log "downloading slurm-wlm=$version source"
if ! ( cd "$dir/dl" && apt-get source --download-only -qq "slurm-wlm=$version" >&2 ); then
    log "apt-get source failed; fetching each file from every deb-src repository that lists it"
    fetch_each_file
fi
log "unpacking (applies Debian's patches)"
if ls "$dir"/dl/slurm-wlm_*.dsc >/dev/null 2>&1; then
    dpkg-source -x "$dir"/dl/slurm-wlm_*.dsc "$src" >/dev/null || die "dpkg-source -x failed"
else
    log "no .dsc in the archive; unpacking the checked tarballs and applying debian/patches/series"
    unpack_without_dsc || die "cannot get the slurm-wlm=$version source (is the version still in the archive?)"
fi
mkdir -p "$build"
log "configuring headers (about 30 s)"
# Same layout options as Debian's build; never --enable-developer (changes NDEBUG, struct layout).
( cd "$build" && "$src/configure" --prefix=/usr --sysconfdir=/etc/slurm \
    --enable-multiple-slurmd --disable-debug >config.out 2>&1 ) \
    || { tail -20 "$build/config.out" >&2; die "configure of the Slurm source failed"; }
grep -q "SLURM_VERSION_NUMBER" "$build/slurm/slurm_version.h" 2>/dev/null \
    || die "configured tree lacks slurm/slurm_version.h"
echo "$upstream" >"$stamp"
rm -rf "$dir/dl"
log "ready: $dir"
echo "SLURM_SOURCE=$src"
echo "SLURM_BUILD=$build"
