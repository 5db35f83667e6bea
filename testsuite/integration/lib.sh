# Shared by the integration tests: locations, skip rules, and the local cluster harness.
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir

skip() { echo "SKIP: $*"; exit 77; }

# Tests that bring up a cluster need root, Slurm, munge, and a non-sanitized build.
require_cluster() {
    [ "$(id -u)" = 0 ] || skip "needs root to run munged, slurmctld and slurmd"
    for p in slurmctld slurmd munged sbatch scontrol; do
        command -v "$p" >/dev/null || [ -x "/usr/sbin/$p" ] || skip "$p is not installed"
    done
    [ -f "$top_builddir/src/plugins/priority/explsched/.libs/priority_explsched.so" ] \
        || skip "plugins not built (a --enable-sanitizers build does not build them)"
}
