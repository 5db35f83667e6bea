#!/bin/bash
# hostile_place_pass_flood.sh again under priority/multifactor with site_factor/explsched: the
# flooding user's job is lifted by its site factor only just above the job it passes, and the
# victim's job is placed, and starts, once passed for placement_pass_limit.
. "$(dirname "$0")/lib.sh"
for p in mariadbd slurmdbd; do _cluster_sbin $p >/dev/null || skip "$p is not installed (mariadb-server, slurmdbd)"; done
EXPLSCHED_TEST_SITE_FACTOR=1 exec bash "$(dirname "$0")/hostile_place_pass_flood.sh"
