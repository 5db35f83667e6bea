// Test program (FAKE driver): one job's launches. Launches --count kernels of --us microseconds
// (the fake driver runs each for that long) with --blocks blocks of --block-threads threads,
// optionally pausing between launches, then synchronises and optionally keeps the process (and
// so its scheduler client) alive for --hold-ms. Prints "done <ms>" with the elapsed time.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "fake_cuda_api.hpp"

int main(int argc, char** argv) {
    std::string name = "ks_workload_kernel";
    unsigned long long us = 100;
    int count = 10;
    unsigned blocks = 264;
    unsigned block_threads = 1024;
    int hold_ms = 0;
    int gap_us = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string opt = argv[i];
        const char* v = argv[i + 1];
        if (opt == "--name")
            name = v;
        else if (opt == "--us")
            us = std::strtoull(v, nullptr, 10);
        else if (opt == "--count")
            count = std::atoi(v);
        else if (opt == "--blocks")
            blocks = static_cast<unsigned>(std::atoi(v));
        else if (opt == "--block-threads")
            block_threads = static_cast<unsigned>(std::atoi(v));
        else if (opt == "--hold-ms")
            hold_ms = std::atoi(v);
        else if (opt == "--gap-us")
            gap_us = std::atoi(v);
        else {
            std::fprintf(stderr, "ks_fake_workload: unknown option %s\n", opt.c_str());
            return 2;
        }
    }
    const auto start = std::chrono::steady_clock::now();
    if (cuInit(0) != explsched::cuda::kSuccess) return 1;
    es_CUfunction f = fakecuda_function(name.c_str(), 32, 0, 1024, us * 1000ULL);
    for (int i = 0; i < count; ++i) {
        const es_CUresult r =
            cuLaunchKernel(f, blocks, 1, 1, block_threads, 1, 1, 0, nullptr, nullptr, nullptr);
        if (r != explsched::cuda::kSuccess) {
            std::fprintf(stderr, "ks_fake_workload: launch %d returned %d\n", i, r);
            return 1;
        }
        if (gap_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
    }
    cuCtxSynchronize();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("done %.1f\n", ms);
    std::fflush(stdout);
    if (hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    return 0;
}
