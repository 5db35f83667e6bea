#!/bin/bash
# site_factor/explsched without slurmdbd: priority/multifactor would never call it (its decay
# thread runs only with slurmdbd), so the plugin refuses to load and slurmctld's log names the fix,
# instead of leaving every site factor at its submit-time value in silence.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/explsched-test.XXXXXX")
trap 'cluster_down "$CLUSTER_DIR" >/dev/null 2>&1; rm -rf "$CLUSTER_DIR"' EXIT
# --priority/--conf instead of --site-factor, which would bring up slurmdbd too. Slurm 22.05 and
# 24.11 run on without a site factor plugin whose init failed: the error is in the log.
cluster_up "$CLUSTER_DIR" --nodes 1 --gpus 1 --priority priority/multifactor \
    --conf PrioritySiteFactorPlugin=site_factor/explsched >/dev/null 2>&1 || true
log=$CLUSTER_DIR/log/slurmctld.log
wait_until 20 'grep -q "site_factor/explsched: needs AccountingStorageType=accounting_storage/slurmdbd" "$log"' \
    "slurmctld's log to name the missing slurmdbd"
sleep 3
! grep -q "site_factor/explsched: caught up\|site_factor/explsched: ranked" "$log" \
    || fail "site_factor/explsched ranked jobs without slurmdbd"
pass "without slurmdbd site_factor/explsched refuses to load: $(grep -o 'site_factor/explsched: needs.*' "$log" | head -1 | cut -c1-120)"
