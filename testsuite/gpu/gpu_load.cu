// GPU load generator for gpu_contention.sh (real GPU only; built with nvcc at test time).
// One compute-bound kernel (a chain of FMAs per thread) and one memory-bound kernel (a large
// copy), each sized to fill every SM. Two roles:
//   --role hp  open loop: requests arrive as a Poisson process at --rate per second; each
//              request launches --kernels kernels and synchronises; prints the mean and p99
//              request latency.
//   --role be  closed loop: launches --kernels kernels and synchronises, again and again;
//              prints kernels per second.
// The runtime API is used on purpose: cudart fetches the driver's launch entry points through
// cuGetProcAddress, the path the intercept must handle in real applications.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            std::fprintf(stderr, "gpu_load: %s: %s\n", #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                              \
        }                                                                              \
    } while (0)

__global__ void compute_kernel(float* out, int iters) {
    float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f;
    for (int i = 0; i < iters; ++i) {
        a = fmaf(a, b, c);
        b = fmaf(b, c, a * 1e-7f);
    }
    if (a == 12345.0f) out[blockIdx.x] = a + b;  // keep the work
}

__global__ void memory_kernel(const float4* in, float4* out, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

int main(int argc, char** argv) {
    std::string role = "be", kind = "compute";
    double seconds = 10, rate = 20;
    int kernels = 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string o = argv[i];
        if (o == "--role")
            role = argv[i + 1];
        else if (o == "--kind")
            kind = argv[i + 1];
        else if (o == "--seconds")
            seconds = std::atof(argv[i + 1]);
        else if (o == "--rate")
            rate = std::atof(argv[i + 1]);
        else if (o == "--kernels")
            kernels = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "gpu_load: unknown option %s\n", o.c_str());
            return 2;
        }
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const int blocks = prop.multiProcessorCount * 2;
    const size_t n = size_t{64} << 20;  // 64 Mi float4 = 1 GiB each way
    float* sink;
    float4 *in, *out;
    CHECK(cudaMalloc(&sink, blocks * sizeof(float)));
    CHECK(cudaMalloc(&in, n * sizeof(float4)));
    CHECK(cudaMalloc(&out, n * sizeof(float4)));
    CHECK(cudaMemset(in, 0, n * sizeof(float4)));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    auto launch = [&] {
        if (kind == "compute")
            compute_kernel<<<blocks, 1024, 0, s>>>(sink, 4096);
        else
            memory_kernel<<<blocks, 1024, 0, s>>>(in, out, n / 16);  // ~64 MiB per kernel
        CHECK(cudaGetLastError());
    };
    for (int i = 0; i < 10; ++i) launch();  // warm up
    CHECK(cudaStreamSynchronize(s));

    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const auto end = start + std::chrono::duration<double>(seconds);
    if (role == "be") {
        long long done = 0;
        while (clock::now() < end) {
            for (int k = 0; k < kernels; ++k) launch();
            CHECK(cudaStreamSynchronize(s));
            done += kernels;
        }
        const double secs = std::chrono::duration<double>(clock::now() - start).count();
        std::printf("be kernels_per_s %.1f\n", done / secs);
        return 0;
    }
    std::mt19937_64 rng(1);
    std::exponential_distribution<double> gap(rate);
    std::vector<double> lat;
    auto next = start;
    while (next < end) {
        next += std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(gap(rng)));
        std::this_thread::sleep_until(next);
        const auto t0 = std::max(next, clock::now());
        for (int k = 0; k < kernels; ++k) launch();
        CHECK(cudaStreamSynchronize(s));
        lat.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
    }
    std::sort(lat.begin(), lat.end());
    double sum = 0;
    for (double l : lat) sum += l;
    std::printf("hp requests %zu mean_us %.1f p99_us %.1f\n", lat.size(), sum / lat.size(),
                lat[std::min(lat.size() - 1, (size_t)std::ceil(0.99 * lat.size()) - 1)]);
    return 0;
}
