// The few CUDA driver API types, constants and signatures the intercept needs, declared from
// NVIDIA's CUDA Driver API documentation so that the project builds without a CUDA toolkit
// (Debian's nvidia-cuda-dev 11.8 lacks cuLaunchKernelEx). test_kernel_sched_cuda_abi checks
// every declaration here against a CUDA >= 12 cuda.h where one is installed.
// The names carry an `es_` prefix so this header can sit next to cuda.h in that test.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

typedef int es_CUresult;  // enum cudaError_enum
typedef int es_CUdevice;  // CUdevice_v1
typedef struct es_CUfunc_st* es_CUfunction;
typedef struct es_CUstream_st* es_CUstream;
typedef struct es_CUgraphExec_st* es_CUgraphExec;
typedef struct es_CUctx_st* es_CUcontext;
typedef std::uint64_t es_cuuint64_t;
typedef int es_CUfunction_attribute;  // enum CUfunction_attribute_enum
typedef int es_CUdevice_attribute;    // enum CUdevice_attribute_enum
typedef int es_CUlaunchAttributeID;   // enum CUlaunchAttributeID_enum
typedef int es_CUdriverProcAddressQueryResult;
typedef int es_CUstreamCaptureStatus;
typedef void (*es_CUhostFn)(void* user_data);

// CUlaunchAttributeValue is a union padded to 64 bytes; the intercept reads only `cooperative`.
// Some of NVIDIA's members hold pointers and 64-bit values, so the union is 8-byte aligned.
typedef union es_CUlaunchAttributeValue_union {
    char pad[64];
    int cooperative;
    std::uint64_t align8;
} es_CUlaunchAttributeValue;

typedef struct es_CUlaunchAttribute_st {
    es_CUlaunchAttributeID id;
    char pad[8 - sizeof(es_CUlaunchAttributeID)];
    es_CUlaunchAttributeValue value;
} es_CUlaunchAttribute;

typedef struct es_CUlaunchConfig_st {
    unsigned int gridDimX;
    unsigned int gridDimY;
    unsigned int gridDimZ;
    unsigned int blockDimX;
    unsigned int blockDimY;
    unsigned int blockDimZ;
    unsigned int sharedMemBytes;
    es_CUstream hStream;
    es_CUlaunchAttribute* attrs;
    unsigned int numAttrs;
} es_CUlaunchConfig;

}  // extern "C"

namespace explsched::cuda {

inline constexpr es_CUresult kSuccess = 0;               // CUDA_SUCCESS
inline constexpr es_CUresult kErrorInvalidValue = 1;     // CUDA_ERROR_INVALID_VALUE
inline constexpr es_CUresult kErrorNotInitialized = 3;   // CUDA_ERROR_NOT_INITIALIZED
inline constexpr es_CUresult kErrorInvalidHandle = 400;  // CUDA_ERROR_INVALID_HANDLE
inline constexpr es_CUresult kErrorNotFound = 500;       // CUDA_ERROR_NOT_FOUND
inline constexpr es_CUresult kErrorNotSupported = 801;   // CUDA_ERROR_NOT_SUPPORTED

inline constexpr es_CUfunction_attribute kFuncMaxThreadsPerBlock = 0;
inline constexpr es_CUfunction_attribute kFuncSharedSizeBytes = 1;
inline constexpr es_CUfunction_attribute kFuncNumRegs = 4;

inline constexpr es_CUdevice_attribute kDevMultiprocessorCount = 16;
inline constexpr es_CUdevice_attribute kDevMaxThreadsPerMultiprocessor = 39;
inline constexpr es_CUdevice_attribute kDevMaxSharedMemoryPerMultiprocessor = 81;
inline constexpr es_CUdevice_attribute kDevMaxRegistersPerMultiprocessor = 82;
inline constexpr es_CUdevice_attribute kDevMaxBlocksPerMultiprocessor = 106;

inline constexpr es_CUlaunchAttributeID kLaunchAttributeCooperative = 2;

inline constexpr es_cuuint64_t kGetProcAddressDefault = 0;
inline constexpr es_cuuint64_t kGetProcAddressLegacyStream = 1;
inline constexpr es_cuuint64_t kGetProcAddressPerThreadDefaultStream = 2;

inline constexpr es_CUdriverProcAddressQueryResult kGetProcAddressSuccess = 0;
inline constexpr es_CUdriverProcAddressQueryResult kGetProcAddressSymbolNotFound = 1;

inline constexpr es_CUstreamCaptureStatus kStreamCaptureStatusNone = 0;

// The per-thread default stream handle (CU_STREAM_PER_THREAD) and the legacy one.
inline es_CUstream stream_legacy() { return reinterpret_cast<es_CUstream>(std::uintptr_t{1}); }
inline es_CUstream stream_per_thread() { return reinterpret_cast<es_CUstream>(std::uintptr_t{2}); }

}  // namespace explsched::cuda
