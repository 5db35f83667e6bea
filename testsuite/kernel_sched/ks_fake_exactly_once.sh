#!/bin/sh
# FAKE driver: every launch, through every path (direct, dlsym, cuGetProcAddress legacy and
# per-thread stream, cuGetProcAddress_v2, nested), from 8 threads and a forked child, reaches
# the driver once and is recorded by explsched-kerneld exactly once, per entry point, in observe
# and in enforce mode.
. "${srcdir:-.}/ks_lib.sh"

check_mode() {
    mode=$1
    ks_start_daemon
    : > "$KS_TMP/fake.log"
    out=$(FAKECUDA_LOG="$KS_TMP/fake.log" ks_run "$mode" "paths.$mode" 1 \
          "$KS_BIN/ks_fake_launch_paths" --rounds 40 --threads 8 --fork --expect-hooked 2>"$KS_TMP/program.err") \
        || ks_fail "$mode: ks_fake_launch_paths failed"
    ks_stop_daemon
    expected=${out#launches }
    "$PYTHON" - "$KS_TMP/fake.log" "$KS_TMP/stats.json" "$expected" "paths.$mode" <<'PY' || ks_fail "$mode: counts differ"
import collections, json, sys
log, stats, expected, job = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
driver = collections.Counter(line.split()[2] for line in open(log) if line.startswith("launch "))
jobs = {j["job"]: j for j in json.load(open(stats))["jobs"]}
seen = jobs[job]
total = sum(driver.values())
ok = True
if total != expected:
    print(f"driver saw {total} launches, the program made {expected}"); ok = False
if seen["launches"] != expected:
    print(f"kerneld saw {seen['launches']} launches, the program made {expected}"); ok = False
if seen["dropped"] != 0:
    print(f"{seen['dropped']} records dropped"); ok = False
for entry, n in sorted(seen["by_entry"].items()):
    if driver.get(entry, 0) != n:
        print(f"{entry}: driver {driver.get(entry, 0)}, kerneld {n}"); ok = False
for entry in driver:
    if entry not in seen["by_entry"]:
        print(f"{entry}: unknown to kerneld"); ok = False
print(f"{job}: {expected} launches, per entry point {dict(sorted(driver.items()))}")
sys.exit(0 if ok else 1)
PY
    if grep -q "explsched:" "$KS_TMP/program.err"; then ks_fail "$mode: unexpected warning: $(cat "$KS_TMP/program.err")"; fi
}

check_mode observe
check_mode enforce
