#!/bin/sh
# Compiles ks_cuda_abi_check.cpp against the installed cuda.h (CUDA >= 12) and runs it: our own
# driver declarations must match NVIDIA's. Skips (77) where no such toolkit is installed.
set -eu
: "${CXX:?}" "${top_srcdir:?}"
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/cuda.h" ] || [ ! -f "$cuda/include/cudaTypedefs.h" ]; then
    echo "SKIP: no cuda.h under $cuda/include"
    exit 77
fi
version=$(sed -n 's/^#define CUDA_VERSION \([0-9][0-9]*\).*/\1/p' "$cuda/include/cuda.h")
if [ -z "$version" ] || [ "$version" -lt 12000 ]; then
    echo "SKIP: cuda.h is CUDA ${version:-unknown}, the check needs 12.0 or later"
    exit 77
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/explsched-abi.XXXXXX")
trap 'rm -rf "$out"' EXIT
$CXX -std=c++17 -Wall -Wextra -Werror -I"$top_srcdir/src" -isystem "$cuda/include" \
    -o "$out/check" "${srcdir:-.}/ks_cuda_abi_check.cpp"
"$out/check"
