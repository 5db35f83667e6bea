#!/bin/bash
# Installs, with apt-get, everything ExplSched needs to build, test and run its demo on Debian 12.
# Idempotent and non-interactive: installs only what is missing (one apt-get update, if needed).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

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
    # tools the tests, benchmarks and plots use
    python3 python3-numpy python3-matplotlib gnuplot-nox clang clang-format libclang-rt-14-dev valgrind
    procps iproute2 hostname
    # the hostile-user tests make real users (useradd) and run as them (setpriv)
    passwd util-linux
)

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
