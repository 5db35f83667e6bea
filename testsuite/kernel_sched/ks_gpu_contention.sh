#!/bin/sh
# The real-GPU contention check (testsuite/gpu/gpu_contention.sh): skips (77) without a GPU,
# which is what CI has.
: "${top_srcdir:?}"
exec "$top_srcdir/testsuite/gpu/gpu_contention.sh"
