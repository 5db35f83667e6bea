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
log "downloading slurm-wlm=$version source"
( cd "$dir/dl" && apt-get source --download-only -qq "slurm-wlm=$version" >&2 ) \
    || die "apt-get source slurm-wlm=$version failed (is the version still in the archive?)"
log "unpacking (applies Debian's patches)"
dpkg-source -x "$dir"/dl/slurm-wlm_*.dsc "$src" >/dev/null || die "dpkg-source -x failed"
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
