// Test program (FAKE driver): one job's launches. Launches --count kernels of --us microseconds
// (the fake driver runs each for that long) with --blocks blocks of --block-threads threads,
// optionally pausing between launches, then synchronises and optionally keeps the process (and
// so its scheduler client) alive for --hold-ms. Prints "done <ms>" with the elapsed time.
// For the hostile tests, --grid X,Y,Z and --block X,Y,Z set every launch dimension and --regs
// the registers the function reports, unchecked (decimal or 0x hex: 0, 0xFFFFFFFF, ...), as a
// user's process may pass them to the driver. --latency 1 prints the distribution of the time one
// launch call takes (the intercept's wait for admission included): "launch_us p50 P p99 Q max M".
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fake_cuda_api.hpp"

namespace {

// "X,Y,Z" -> three unsigned values (decimal or 0x hex); false when malformed.
bool parse_dims(const char* text, unsigned (&out)[3]) {
    const char* p = text;
    for (int i = 0; i < 3; ++i) {
        char* end = nullptr;
        const unsigned long v = std::strtoul(p, &end, 0);
        if (end == p || v > 0xFFFFFFFFul) return false;
        out[i] = static_cast<unsigned>(v);
        if (i < 2 && *end != ',') return false;
        p = end + 1;
        if (i == 2 && *end != '\0') return false;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    std::string name = "ks_workload_kernel";
    unsigned long long us = 100;
    int count = 10;
    unsigned blocks = 264;
    unsigned block_threads = 1024;
    int hold_ms = 0;
    int gap_us = 0;
    unsigned grid[3] = {0, 1, 1};
    unsigned block[3] = {0, 1, 1};
    bool grid_set = false;
    bool block_set = false;
    bool latency = false;
    unsigned regs = 32;
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
        else if (opt == "--latency")
            latency = std::atoi(v) != 0;
        else if (opt == "--regs")
            regs = static_cast<unsigned>(std::strtoul(v, nullptr, 0));
        else if (opt == "--grid" && parse_dims(v, grid))
            grid_set = true;
        else if (opt == "--block" && parse_dims(v, block))
            block_set = true;
        else {
            std::fprintf(stderr, "ks_fake_workload: unknown option %s\n", opt.c_str());
            return 2;
        }
    }
    const auto start = std::chrono::steady_clock::now();
    if (!grid_set) grid[0] = blocks;
    if (!block_set) block[0] = block_threads;
    if (cuInit(0) != explsched::cuda::kSuccess) return 1;
    es_CUfunction f = fakecuda_function(name.c_str(), static_cast<int>(regs), 0, 1024, us * 1000ULL);
    std::vector<double> call_us;
    call_us.reserve(static_cast<std::size_t>(count > 0 ? count : 0));
    for (int i = 0; i < count; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const es_CUresult r = cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0,
                                             nullptr, nullptr, nullptr);
        if (r != explsched::cuda::kSuccess) {
            std::fprintf(stderr, "ks_fake_workload: launch %d returned %d\n", i, r);
            return 1;
        }
        call_us.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        if (gap_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
    }
    cuCtxSynchronize();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (latency && !call_us.empty()) {
        std::sort(call_us.begin(), call_us.end());
        auto at = [&](double q) {
            return call_us[static_cast<std::size_t>(q * static_cast<double>(call_us.size() - 1))];
        };
        std::printf("launch_us p50 %.1f p99 %.1f max %.1f\n", at(0.5), at(0.99), call_us.back());
    }
    std::printf("done %.1f\n", ms);
    std::fflush(stdout);
    if (hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    return 0;
}
