// Checks the intercept's own CUDA driver declarations (src/kernel_sched/cuda_abi.hpp and the
// signatures in hooks.def) against NVIDIA's cuda.h and cudaTypedefs.h: type sizes, struct field
// offsets, enum values, and every hooked or called entry point's signature (arity, and each
// parameter's size and kind). Compiled by ks_cuda_abi.sh only where a CUDA >= 12 toolkit is
// installed; any mismatch is a compile error naming the item.
#include <cuda.h>
#include <cudaTypedefs.h>
// cuda.h renames cuGetProcAddress to its _v2 for callers; we name the exported symbols.
#undef cuGetProcAddress

#include <cstddef>
#include <cstdio>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernel_sched/cuda_abi.hpp"

namespace cu = explsched::cuda;

// Our signatures, straight from hooks.def.
namespace ours {
#define ES_HOOK(symbol, kind, entry, ptds, params, args) using symbol = es_CUresult(*) params;
#define ES_REAL(symbol, params) using symbol = es_CUresult(*) params;
#include "kernel_sched/hooks.def"
#undef ES_HOOK
#undef ES_REAL
}  // namespace ours

template <typename T>
struct Fn;
template <typename R, typename... A>
struct Fn<R (*)(A...)> {
    static constexpr std::size_t arity = sizeof...(A);
    using args = std::tuple<A...>;
    using ret = R;
};

template <typename A, typename B>
constexpr bool same_kind() {
    return sizeof(A) == sizeof(B) && std::is_pointer_v<A> == std::is_pointer_v<B> &&
           (std::is_integral_v<A> || std::is_enum_v<A>) == (std::is_integral_v<B> || std::is_enum_v<B>);
}

template <typename O, typename T, std::size_t... I>
constexpr bool same_params(std::index_sequence<I...>) {
    return (same_kind<std::tuple_element_t<I, typename Fn<O>::args>,
                      std::tuple_element_t<I, typename Fn<T>::args>>() &&
            ...);
}

template <typename O, typename T>
constexpr bool same_signature() {
    if constexpr (Fn<O>::arity != Fn<T>::arity) {
        return false;
    } else {
        return same_kind<typename Fn<O>::ret, typename Fn<T>::ret>() &&
               same_params<O, T>(std::make_index_sequence<Fn<O>::arity>{});
    }
}

#define CHECK_SIG(symbol, pfn) \
    static_assert(same_signature<ours::symbol, pfn>(), "signature of " #symbol " differs from " #pfn)
CHECK_SIG(cuInit, PFN_cuInit_v2000);
CHECK_SIG(cuGetProcAddress, PFN_cuGetProcAddress_v11030);
CHECK_SIG(cuGetProcAddress_v2, PFN_cuGetProcAddress_v12000);
CHECK_SIG(cuLaunchKernel, PFN_cuLaunchKernel_v4000);
CHECK_SIG(cuLaunchKernel_ptsz, PFN_cuLaunchKernel_v7000_ptsz);
CHECK_SIG(cuLaunchKernelEx, PFN_cuLaunchKernelEx_v11060);
CHECK_SIG(cuLaunchKernelEx_ptsz, PFN_cuLaunchKernelEx_v11060_ptsz);
CHECK_SIG(cuLaunchCooperativeKernel, PFN_cuLaunchCooperativeKernel_v9000);
CHECK_SIG(cuLaunchCooperativeKernel_ptsz, PFN_cuLaunchCooperativeKernel_v9000_ptsz);
CHECK_SIG(cuGraphLaunch, PFN_cuGraphLaunch_v10000);
CHECK_SIG(cuGraphLaunch_ptsz, PFN_cuGraphLaunch_v10000_ptsz);
CHECK_SIG(cuFuncGetName, PFN_cuFuncGetName_v12030);
CHECK_SIG(cuFuncGetAttribute, PFN_cuFuncGetAttribute_v2020);
CHECK_SIG(cuDeviceGetAttribute, PFN_cuDeviceGetAttribute_v2000);
CHECK_SIG(cuCtxGetDevice, PFN_cuCtxGetDevice_v2000);
CHECK_SIG(cuStreamIsCapturing, PFN_cuStreamIsCapturing_v10000);
CHECK_SIG(cuLaunchHostFunc, PFN_cuLaunchHostFunc_v10000);

#define CHECK_SIZE(a, b) \
    static_assert(sizeof(a) == sizeof(b) && alignof(a) == alignof(b), "size of " #a " differs from " #b)
CHECK_SIZE(es_CUresult, CUresult);
CHECK_SIZE(es_CUdevice, CUdevice_v1);
CHECK_SIZE(es_CUfunction, CUfunction);
CHECK_SIZE(es_CUstream, CUstream);
CHECK_SIZE(es_CUgraphExec, CUgraphExec);
CHECK_SIZE(es_CUcontext, CUcontext);
CHECK_SIZE(es_cuuint64_t, cuuint64_t);
CHECK_SIZE(es_CUfunction_attribute, CUfunction_attribute);
CHECK_SIZE(es_CUdevice_attribute, CUdevice_attribute);
CHECK_SIZE(es_CUlaunchAttributeID, CUlaunchAttributeID);
CHECK_SIZE(es_CUdriverProcAddressQueryResult, CUdriverProcAddressQueryResult);
CHECK_SIZE(es_CUstreamCaptureStatus, CUstreamCaptureStatus);
CHECK_SIZE(es_CUhostFn, CUhostFn);
CHECK_SIZE(es_CUlaunchAttributeValue, CUlaunchAttributeValue);
CHECK_SIZE(es_CUlaunchAttribute, CUlaunchAttribute);
CHECK_SIZE(es_CUlaunchConfig, CUlaunchConfig);

#define CHECK_OFFSET(ours_t, theirs_t, field) \
    static_assert(offsetof(ours_t, field) == offsetof(theirs_t, field), "offset of " #theirs_t "::" #field)
CHECK_OFFSET(es_CUlaunchConfig, CUlaunchConfig, gridDimX);
CHECK_OFFSET(es_CUlaunchConfig, CUlaunchConfig, gridDimY);
CHECK_OFFSET(es_CUlaunchConfig, CUlaunchConfig, gridDimZ);
CHECK_OFFSET(es_CUlaunchConfig, CUlaunchConfig, blockDimX);
CHECK_OFFSET(es_CUlaunchConfig, CUlaunchConfig, blockDimY);
CHECK_OFFSET(es_CUlaunchConfig, CUlaunchConfig, blockDimZ);
CHECK_OFFSET(es_CUlaunchConfig, CUlaunchConfig, sharedMemBytes);
CHECK_OFFSET(es_CUlaunchConfig, CUlaunchConfig, hStream);
CHECK_OFFSET(es_CUlaunchConfig, CUlaunchConfig, attrs);
CHECK_OFFSET(es_CUlaunchConfig, CUlaunchConfig, numAttrs);
CHECK_OFFSET(es_CUlaunchAttribute, CUlaunchAttribute, id);
CHECK_OFFSET(es_CUlaunchAttribute, CUlaunchAttribute, value);
CHECK_OFFSET(es_CUlaunchAttributeValue, CUlaunchAttributeValue, cooperative);

#define CHECK_VALUE(ours_v, theirs_v)                                                 \
    static_assert(static_cast<long long>(ours_v) == static_cast<long long>(theirs_v), \
                  #ours_v " != " #theirs_v)
CHECK_VALUE(cu::kSuccess, CUDA_SUCCESS);
CHECK_VALUE(cu::kErrorInvalidValue, CUDA_ERROR_INVALID_VALUE);
CHECK_VALUE(cu::kErrorNotInitialized, CUDA_ERROR_NOT_INITIALIZED);
CHECK_VALUE(cu::kErrorInvalidHandle, CUDA_ERROR_INVALID_HANDLE);
CHECK_VALUE(cu::kErrorNotFound, CUDA_ERROR_NOT_FOUND);
CHECK_VALUE(cu::kErrorNotSupported, CUDA_ERROR_NOT_SUPPORTED);
CHECK_VALUE(cu::kFuncMaxThreadsPerBlock, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
CHECK_VALUE(cu::kFuncSharedSizeBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
CHECK_VALUE(cu::kFuncNumRegs, CU_FUNC_ATTRIBUTE_NUM_REGS);
CHECK_VALUE(cu::kDevMultiprocessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
CHECK_VALUE(cu::kDevMaxThreadsPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
CHECK_VALUE(cu::kDevMaxSharedMemoryPerMultiprocessor,
            CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
CHECK_VALUE(cu::kDevMaxRegistersPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
CHECK_VALUE(cu::kDevMaxBlocksPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
CHECK_VALUE(cu::kLaunchAttributeCooperative, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
CHECK_VALUE(cu::kGetProcAddressDefault, CU_GET_PROC_ADDRESS_DEFAULT);
CHECK_VALUE(cu::kGetProcAddressLegacyStream, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
CHECK_VALUE(cu::kGetProcAddressPerThreadDefaultStream, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
CHECK_VALUE(cu::kGetProcAddressSuccess, CU_GET_PROC_ADDRESS_SUCCESS);
CHECK_VALUE(cu::kGetProcAddressSymbolNotFound, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
CHECK_VALUE(cu::kStreamCaptureStatusNone, CU_STREAM_CAPTURE_STATUS_NONE);

int main() {
    // The special stream handles are pointer constants, not constant expressions.
    int errors = 0;
    if (reinterpret_cast<void*>(cu::stream_legacy()) != reinterpret_cast<void*>(CU_STREAM_LEGACY)) ++errors;
    if (reinterpret_cast<void*>(cu::stream_per_thread()) != reinterpret_cast<void*>(CU_STREAM_PER_THREAD))
        ++errors;
    std::printf("cuda_abi.hpp and hooks.def match cuda.h %d.%d: %s\n", CUDA_VERSION / 1000,
                CUDA_VERSION % 1000 / 10, errors == 0 ? "yes" : "NO (stream handles)");
    return errors == 0 ? 0 : 1;
}
