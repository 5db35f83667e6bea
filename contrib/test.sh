#!/bin/bash
# One command for the whole test suite on a Debian 12 machine (as root for the cluster tests):
# installs what is missing, builds, and runs every unit and integration test.
#   1. a build with ASan + UBSan: the core library, tools and their unit tests;
#   2. a build with ThreadSanitizer: the core, explschedd and the kernel-scheduler intercept and
#      daemon, with the unit and fake-driver tests that run their threads;
#   3. the normal build: the integration and hostile-user tests on a real local Slurm cluster,
#      the kernel-scheduler and contrib tests (the unit and fuzz tests too with --no-sanitizers);
#   4. the same source tree again in a Debian 13 (trixie) root filesystem with trixie's Slurm
#      24.11 (contrib/trixie-root.sh: debootstrap, cached between runs, entered with chroot):
#      its own build against 24.11's headers, and the integration tests on a local cluster of
#      that root's slurmctld and slurmd (the unit tests do not depend on Slurm: step 1 ran them).
# Prints a summary of all runs; exits non-zero if any test failed.
#   contrib/test.sh [--no-sanitizers] [--no-trixie] [--distcheck]
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
sanitizers=yes distcheck=no trixie=yes
for a in "$@"; do
    case $a in
        --no-sanitizers) sanitizers=no ;;
        --no-trixie) trixie=no ;;
        --distcheck) distcheck=yes ;;
        *) echo "usage: $0 [--no-sanitizers] [--no-trixie] [--distcheck]" >&2; exit 2 ;;
    esac
done
cd "$top"
step() { echo; echo "=== test: $* === (at $SECONDS s)"; }

step "dependencies"
bash contrib/install-deps.sh || exit 1
[ -d ../shared/data ] || echo "test: warning: ../shared/data not found; data-driven tests will skip"

overall=0
summaries=()
# Runs a shell command line here, or inside the Debian 13 root when $check_root is yes.
in_check_env() {
    if [ "${check_root:-no}" = yes ]; then bash "$top/contrib/trixie-root.sh" "$1"; else bash -c "$1"; fi
}
run_check() {  # run_check NAME BUILDDIR [SUBDIR...]  (default: the whole tree); only the tests in $check_tests if set
    local name=$1 dir=$2 rc; shift 2
    local subdirs=("$@")
    [ ${#subdirs[@]} -gt 0 ] || subdirs=(.)
    : >"$dir/check.out"
    rc=0
    if [ "${check_together:-no}" = yes ]; then
        # Every subdirectory's tests under one jobserver: the cluster tests of one directory fill
        # the slots another's last slow tests leave, instead of each directory waiting for its
        # slowest. Their programs are built first (TESTS= runs none), since integration tests run
        # programs of testsuite/kernel_sched.
        for sd in "${subdirs[@]}"; do
            in_check_env "cd $(printf %q "$dir/$sd") && make -j$(nproc) check TESTS=" >>"$dir/check.out" 2>&1 || rc=1
        done
        {
            printf 'all:'; printf ' %s' "${subdirs[@]}"; printf '\n.PHONY: all'; printf ' %s' "${subdirs[@]}"; printf '\n'
            for sd in "${subdirs[@]}"; do printf '%s:\n\t+$(MAKE) -C %q check\n' "$sd" "$dir/$sd"; done
        } >"$dir/check-together.mk"
        in_check_env "make -k -j${check_jobs:-$(nproc)} -f $(printf %q "$dir/check-together.mk")" >>"$dir/check.out" 2>&1 || rc=1
    fi
    for sd in "${subdirs[@]}"; do
        [ "${check_together:-no}" = yes ] && break
        if [ -n "${check_tests:-}" ]; then
            # Build only the programs those tests are (make check would build every check_PROGRAM).
            in_check_env "cd $(printf %q "$dir/$sd") && make -j${check_jobs:-$(nproc)} check \
TESTS=$(printf %q "$check_tests") check_PROGRAMS=$(printf %q "$check_tests")" >>"$dir/check.out" 2>&1 || rc=1
        else
            in_check_env "cd $(printf %q "$dir/$sd") && make -j${check_jobs:-$(nproc)} check" >>"$dir/check.out" 2>&1 || rc=1
        fi
    done
    grep -hE '^(PASS|FAIL|XFAIL|XPASS|ERROR|SKIP):' "$dir/check.out" | sed "s/^/[$name] /"
    local logs
    logs=$(for sd in "${subdirs[@]}"; do find "$dir/$sd" -name test-suite.log; done)
    local t p s f e
    sum() { cat $logs | awk -v k="# $1:" 'index($0, k) == 1 { n += $NF } END { print n + 0 }'; }
    t=$(sum TOTAL); p=$(sum PASS); s=$(sum SKIP); f=$(sum FAIL); e=$(sum ERROR)
    summaries+=("$name: TOTAL ${t:-0}  PASS ${p:-0}  SKIP ${s:-0}  FAIL ${f:-0}  ERROR ${e:-0}")
    # the slowest tests (a test's log is made when it starts and last written when it ends)
    local slow
    slow=$(for l in $(for sd in "${subdirs[@]}"; do find "$dir/$sd" -name '*.log' ! -name test-suite.log ! -name config.log; done); do
        b=$(stat -c %W "$l" 2>/dev/null) && [ "${b:-0}" -gt 0 ] && echo "$(( $(stat -c %Y "$l") - b ))s $(basename "$l" .log)"
    done | sort -rn | head -6 | tr '\n' ' ')
    [ -z "$slow" ] || echo "[$name] slowest: $slow"
    if [ $rc != 0 ]; then
        overall=1
        echo "--- [$name] failures:"
        for l in $logs; do
            awk '/^(FAIL|ERROR): /{show=1} show' "$l" | head -200
        done
        grep -E "error:|Error [0-9]" "$dir/check.out" | head -40
    fi
}

if [ $sanitizers = yes ]; then
    # Also the smallest configuration: no Slurm source tree and no GLPK (the simulator then lacks
    # its gavel policy and says so).
    step "build with sanitizers (ASan + UBSan), without the Slurm source and GLPK"
    if bash contrib/build.sh --builddir "$top/_build-san" --subdirs src --enable-sanitizers --without-glpk; then
        step "tests under sanitizers (unit tests and the wire-format fuzzer)"
        # The integration tests need the Slurm-loaded modules, which a sanitized build lacks.
        run_check sanitizers "$top/_build-san" testsuite/unit testsuite/fuzz
    else
        overall=1; summaries+=("sanitizers: BUILD FAILED")
    fi
fi

if [ $sanitizers = yes ]; then
    step "build with ThreadSanitizer (core, explschedd, kernel scheduler), without the Slurm source and GLPK"
    if bash contrib/build.sh --builddir "$top/_build-tsan" --subdirs src --enable-sanitizers=thread --without-glpk; then
        step "tests under ThreadSanitizer (the tests whose code runs threads)"
        # The rest of the unit tests are single-threaded: ASan above covers them.
        check_tests="test_daemon_committer test_daemon_daemon_util test_daemon_job_owners \
test_daemon_pipeline test_daemon_peer_identity test_report_report_store \
test_kernel_sched_ksched_shm test_kernel_sched_kerneld test_kernel_sched_step_setup" \
            run_check tsan "$top/_build-tsan" testsuite/unit
        # The intercept, kerneld, the fake driver and its test programs, all instrumented
        # (tsan_check.sh fails a test on any ThreadSanitizer report).
        tsan_start=$SECONDS
        run_check tsan-ksched "$top/_build-tsan" testsuite/kernel_sched
        echo "tsan: fake-driver tests (build and run) took $((SECONDS - tsan_start)) s"
    else
        overall=1; summaries+=("tsan: BUILD FAILED")
    fi
fi

step "build"
if bash contrib/build.sh --builddir "$top/_build"; then
    step "tests (integration and hostile-user on a local Slurm cluster; unit too with --no-sanitizers)"
    # The cluster tests mostly wait on Slurm's own cycles, not the CPU: twice as many run at once
    # as there are cores (CI at -j2 took 46 minutes, over its 45), all directories' under one
    # jobserver. The unit and fuzz tests ran in step 1 under ASan and UBSan (the same sources and
    # tests): here only without it (--no-sanitizers).
    main_dirs=(contrib testsuite/kernel_sched testsuite/integration testsuite/hostile)
    [ $sanitizers = yes ] || main_dirs+=(testsuite/unit testsuite/fuzz)
    check_together=yes check_jobs=$(( $(nproc) * 2 )) run_check main "$top/_build" "${main_dirs[@]}"
    if [ $distcheck = yes ]; then
        step "make distcheck"
        (cd "$top/_build" && make distcheck >distcheck.out 2>&1) && summaries+=("distcheck: passed") \
            || { overall=1; summaries+=("distcheck: FAILED"); tail -40 "$top/_build/distcheck.out"; }
    fi
else
    overall=1; summaries+=("main: BUILD FAILED")
fi

if [ $trixie = yes ]; then
    step "Debian 13 (trixie) root with Slurm 24.11: build, integration tests"
    trixie_start=$SECONDS
    # The build, and the fake CUDA driver and its programs that test_kernel_sched_fake_driver.sh
    # runs (make check builds them; TESTS= runs none of the kernel-scheduler tests here).
    tb=$(printf %q "$top/_build-trixie")
    if bash contrib/trixie-root.sh "bash contrib/build.sh --builddir $tb \
            && make -C $tb/testsuite/kernel_sched -j$(nproc) check TESTS= >$tb/ks-programs.out 2>&1"; then
        echo "trixie: root and build took $((SECONDS - trixie_start)) s"
        check_root=yes check_jobs=$(( $(nproc) * 2 )) run_check trixie-slurm24.11 "$top/_build-trixie" testsuite/integration
    else
        overall=1; summaries+=("trixie-slurm24.11: ROOT OR BUILD FAILED")
    fi
    echo "trixie: root, build and integration tests took $((SECONDS - trixie_start)) s"
fi

echo
echo "=== test summary ==="
for s in "${summaries[@]}"; do echo "  $s"; done
[ $overall = 0 ] && echo "  result: PASS" || echo "  result: FAIL"
exit $overall
