#!/bin/bash
# Configures and builds ExplSched in a build directory (default: _build) against the installed
# Slurm. Extra arguments go to configure. Used by test.sh and demo.sh; idempotent.
#   contrib/build.sh [--builddir DIR] [--subdirs "DIR..."] [configure options...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
builddir=$top/_build
subdirs=.
if [ "${1:-}" = "--builddir" ]; then builddir=$2; shift 2; fi
if [ "${1:-}" = "--subdirs" ]; then subdirs=$2; shift 2; fi

cd "$top"
# A sanitizer build has no slurmctld plugins, so it needs no Slurm source tree.
slurm_args=""
case " $* " in
    *" --enable-sanitizers "* | *" --enable-sanitizers="*) ;;
    *) eval "$(bash contrib/slurm-source.sh)"
       slurm_args="--with-slurm-source=$SLURM_SOURCE --with-slurm-build=$SLURM_BUILD" ;;
esac
# After the first bootstrap, make's own rebuild rules regenerate what changed (configure.ac,
# Makefile.am) without reconfiguring from scratch, so an update rebuilds only what it touched.
if [ ! -x configure ]; then
    echo "build: ./bootstrap"
    ./bootstrap >/dev/null 2>&1 || { ./bootstrap; exit 1; }
fi
mkdir -p "$builddir"
cd "$builddir"
want="$slurm_args --enable-werror $*"
if [ ! -f Makefile ] || [ "$(cat .configure-args 2>/dev/null)" != "$want" ]; then
    echo "build: configure $want (in $builddir)"
    # shellcheck disable=SC2086
    "$top/configure" $want >configure.out 2>&1 || { tail -30 configure.out; exit 1; }
    echo "$want" >.configure-args
fi
echo "build: make -j$(nproc) (in $builddir${subdirs:+: $subdirs})"
: >make.out
for sd in $subdirs; do
    make -C "$sd" -j"$(nproc)" >>make.out 2>&1 || { grep -E "error|Error" make.out | head -40; tail -20 make.out; exit 1; }
done
echo "build: done"
