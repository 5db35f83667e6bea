// Declarations a test program needs to call the (fake) driver directly, as an application
// linked against libcuda.so.1 would, plus the fake driver's test helpers.
#pragma once

#include "kernel_sched/cuda_abi.hpp"

extern "C" {
es_CUresult cuInit(unsigned int flags);
es_CUresult cuLaunchKernel(es_CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, es_CUstream, void**, void**);
es_CUresult cuLaunchKernel_ptsz(es_CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                unsigned, es_CUstream, void**, void**);
es_CUresult cuLaunchKernelEx(const es_CUlaunchConfig*, es_CUfunction, void**, void**);
es_CUresult cuLaunchKernelEx_ptsz(const es_CUlaunchConfig*, es_CUfunction, void**, void**);
es_CUresult cuLaunchCooperativeKernel(es_CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, es_CUstream, void**);
es_CUresult cuLaunchCooperativeKernel_ptsz(es_CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, unsigned, es_CUstream, void**);
es_CUresult cuGraphLaunch(es_CUgraphExec, es_CUstream);
es_CUresult cuGraphLaunch_ptsz(es_CUgraphExec, es_CUstream);
es_CUresult cuGetProcAddress(const char*, void**, int, es_cuuint64_t);
es_CUresult cuGetProcAddress_v2(const char*, void**, int, es_cuuint64_t, es_CUdriverProcAddressQueryResult*);
es_CUresult cuCtxSynchronize(void);
es_CUresult cuStreamSynchronize(es_CUstream);

// FAKE driver helpers (fake_libcuda.cpp).
es_CUfunction fakecuda_function(const char* name, int regs, int static_smem, int max_threads,
                                unsigned long long duration_ns);
es_CUgraphExec fakecuda_graph(unsigned long long duration_ns);
unsigned long long fakecuda_launches(int entry);
void* fakecuda_real_address(const char* symbol);
void fakecuda_set_capturing(es_CUstream stream, int on);
}

using LaunchKernelFn = es_CUresult (*)(es_CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                       unsigned, unsigned, es_CUstream, void**, void**);
using LaunchKernelExFn = es_CUresult (*)(const es_CUlaunchConfig*, es_CUfunction, void**, void**);
using GraphLaunchFn = es_CUresult (*)(es_CUgraphExec, es_CUstream);
using GetProcAddressV2Fn = es_CUresult (*)(const char*, void**, int, es_cuuint64_t,
                                           es_CUdriverProcAddressQueryResult*);
