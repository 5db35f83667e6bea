#!/bin/bash
# Installs, with apt-get, everything ExplSched needs to build, test and run its demo on Debian 12
# (bookworm, Slurm 22.05) or Debian 13 (trixie, Slurm 24.11).
# Idempotent and non-interactive: installs only what is missing (one apt-get update, if needed).
#   contrib/install-deps.sh [--integration]
# --integration: only what the build and the integration and hostile-user tests need (no
# clang, clang-format, sanitizer runtime, valgrind or plotting); contrib/trixie-root.sh uses it.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
profile=full
case ${1:-} in
    --integration) profile=integration ;;
    "") ;;
    *) echo "usage: $0 [--integration]" >&2; exit 2 ;;
esac

# The names that differ between releases: the sanitizer runtime goes with the default clang
# (clang 14 on Debian 12, 19 on Debian 13).
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
case $codename in
    bookworm | "") clang_rt=libclang-rt-14-dev ;;
    trixie) clang_rt=libclang-rt-19-dev ;;
    *) clang_rt=libclang-rt-dev ;;
esac

packages=(
    # build
    build-essential autoconf autoconf-archive automake libtool pkg-config dpkg-dev
    # Slurm, munge (the real ones, run by the tests)
    slurmctld slurmd slurm-client libslurm-dev munge libmunge-dev
    # accounting for the fair-share tests (a private server per test cluster)
    slurmdbd mariadb-server
    # libraries from Debian rather than our own
    libeigen3-dev nlohmann-json3-dev libsqlite3-dev sqlite3 libglpk-dev
    libboost-test-dev
    # tools the tests use
    python3 python3-numpy procps iproute2 hostname
    # the Optuna peer of bench.sh and demo.sh (its RDB storage is SQLAlchemy on SQLite)
    python3-optuna python3-sqlalchemy
    # the hostile-user tests make real users (useradd) and run as them (setpriv)
    passwd util-linux
)
if [ $profile = full ]; then
    # plots, formatting, sanitizers, memory checks
    packages+=(python3-matplotlib gnuplot-nox clang clang-format "$clang_rt" valgrind)
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi
[ "$(id -u)" = 0 ] || { echo "install-deps: missing ${missing[*]}; run as root to install" >&2; exit 1; }
echo "install-deps: installing ${missing[*]}"
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The munge package creates /etc/munge/munge.key on install; make sure one exists.
if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
fi
chown munge: /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
echo "install-deps: done"
