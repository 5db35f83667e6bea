#!/bin/bash
# test_termination.sh again under priority/multifactor with site_factor/explsched (the recommended setup):
# the same assertions must hold when ExplSched's utility is only multifactor's site factor.
EXPLSCHED_TEST_SITE_FACTOR=1 exec bash "$(dirname "$0")/test_termination.sh"
