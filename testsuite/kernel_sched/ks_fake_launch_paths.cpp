// Test program (FAKE driver): launches kernels through every path an application can reach the
// driver by — direct calls (legacy and per-thread stream variants), dlsym pointers (a driver
// handle and RTLD_DEFAULT), cuGetProcAddress pointers (legacy and per-thread default stream),
// cuGetProcAddress_v2, and a cuGetProcAddress obtained from cuGetProcAddress — from several
// threads and a forked child. Each round makes 14 launches; the test script checks that the
// kernel scheduler saw every one exactly once.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fake_cuda_api.hpp"

namespace {

namespace cu = explsched::cuda;
std::atomic<int> g_errors{0};
bool g_expect_hooked = false;

void fail(const char* what) {
    std::fprintf(stderr, "ks_fake_launch_paths: %s\n", what);
    g_errors.fetch_add(1);
}

void check(es_CUresult r, const char* what) {
    if (r != cu::kSuccess) {
        std::fprintf(stderr, "ks_fake_launch_paths: %s returned %d\n", what, r);
        g_errors.fetch_add(1);
    }
}

// A pointer handed to the application must be the intercept's hook, not the driver's own.
void check_hooked(void* p, const char* symbol, const char* path) {
    if (p == nullptr) {
        std::fprintf(stderr, "ks_fake_launch_paths: %s gave no pointer for %s\n", path, symbol);
        g_errors.fetch_add(1);
    } else if (g_expect_hooked && p == fakecuda_real_address(symbol)) {
        std::fprintf(stderr, "ks_fake_launch_paths: %s handed out the driver's own %s (not hooked)\n", path,
                     symbol);
        g_errors.fetch_add(1);
    }
}

struct Pointers {
    LaunchKernelFn dlsym_handle = nullptr;
    LaunchKernelFn dlsym_default_ptsz = nullptr;
    LaunchKernelFn proc_legacy = nullptr;
    LaunchKernelFn proc_ptds = nullptr;
    LaunchKernelExFn proc_v2_ex = nullptr;
    GraphLaunchFn proc_from_proc_graph_ptsz = nullptr;
};

Pointers obtain() {
    Pointers p;
    void* h = dlopen("libcuda.so.1", RTLD_NOW);
    if (h == nullptr) fail("cannot dlopen libcuda.so.1");
    void* v = h != nullptr ? dlsym(h, "cuLaunchKernel") : nullptr;
    check_hooked(v, "cuLaunchKernel", "dlsym(libcuda handle)");
    p.dlsym_handle = reinterpret_cast<LaunchKernelFn>(v);
    v = dlsym(RTLD_DEFAULT, "cuLaunchKernel_ptsz");
    check_hooked(v, "cuLaunchKernel_ptsz", "dlsym(RTLD_DEFAULT)");
    p.dlsym_default_ptsz = reinterpret_cast<LaunchKernelFn>(v);

    check(cuGetProcAddress("cuLaunchKernel", &v, 4000, cu::kGetProcAddressDefault),
          "cuGetProcAddress(cuLaunchKernel)");
    check_hooked(v, "cuLaunchKernel", "cuGetProcAddress(legacy)");
    p.proc_legacy = reinterpret_cast<LaunchKernelFn>(v);
    check(cuGetProcAddress("cuLaunchKernel", &v, 12000, cu::kGetProcAddressPerThreadDefaultStream),
          "cuGetProcAddress(cuLaunchKernel, ptds)");
    check_hooked(v, "cuLaunchKernel_ptsz", "cuGetProcAddress(per-thread stream)");
    p.proc_ptds = reinterpret_cast<LaunchKernelFn>(v);
    es_CUdriverProcAddressQueryResult status = -1;
    check(cuGetProcAddress_v2("cuLaunchKernelEx", &v, 12000, 0, &status),
          "cuGetProcAddress_v2(cuLaunchKernelEx)");
    if (status != cu::kGetProcAddressSuccess) fail("cuGetProcAddress_v2 status is not success");
    check_hooked(v, "cuLaunchKernelEx", "cuGetProcAddress_v2");
    p.proc_v2_ex = reinterpret_cast<LaunchKernelExFn>(v);
    // What CUDA 12 runtimes do: fetch cuGetProcAddress itself, then everything through it.
    check(cuGetProcAddress("cuGetProcAddress", &v, 12000, 0), "cuGetProcAddress(cuGetProcAddress)");
    check_hooked(v, "cuGetProcAddress", "cuGetProcAddress(cuGetProcAddress)");
    auto gpa = reinterpret_cast<GetProcAddressV2Fn>(v);
    void* g = nullptr;
    if (gpa != nullptr)
        check(gpa("cuGraphLaunch", &g, 12000, cu::kGetProcAddressPerThreadDefaultStream, &status),
              "nested cuGetProcAddress");
    check_hooked(g, "cuGraphLaunch_ptsz", "cuGetProcAddress from cuGetProcAddress");
    p.proc_from_proc_graph_ptsz = reinterpret_cast<GraphLaunchFn>(g);
    // Too old a version must still say "not found", through the hook as from the driver.
    if (cuGetProcAddress("cuLaunchKernelEx", &v, 11000, 0) == cu::kSuccess)
        fail("cuLaunchKernelEx found at version 11000");
    return p;
}

void round(const Pointers& p, es_CUfunction f, es_CUgraphExec graph, es_CUstream s) {
    es_CUlaunchConfig cfg{};
    cfg.gridDimX = 8;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 256;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = s;
    check(cuLaunchKernel(f, 8, 1, 1, 256, 1, 1, 0, s, nullptr, nullptr), "cuLaunchKernel");
    check(cuLaunchKernel_ptsz(f, 8, 1, 1, 256, 1, 1, 0, s, nullptr, nullptr), "cuLaunchKernel_ptsz");
    check(cuLaunchKernelEx(&cfg, f, nullptr, nullptr), "cuLaunchKernelEx");
    check(cuLaunchKernelEx_ptsz(&cfg, f, nullptr, nullptr), "cuLaunchKernelEx_ptsz");
    check(cuLaunchCooperativeKernel(f, 8, 1, 1, 256, 1, 1, 0, s, nullptr), "cuLaunchCooperativeKernel");
    check(cuLaunchCooperativeKernel_ptsz(f, 8, 1, 1, 256, 1, 1, 0, s, nullptr),
          "cuLaunchCooperativeKernel_ptsz");
    check(cuGraphLaunch(graph, s), "cuGraphLaunch");
    check(cuGraphLaunch_ptsz(graph, s), "cuGraphLaunch_ptsz");
    check(p.dlsym_handle(f, 8, 1, 1, 256, 1, 1, 0, s, nullptr, nullptr), "dlsym cuLaunchKernel");
    check(p.dlsym_default_ptsz(f, 8, 1, 1, 256, 1, 1, 0, s, nullptr, nullptr), "dlsym cuLaunchKernel_ptsz");
    check(p.proc_legacy(f, 8, 1, 1, 256, 1, 1, 0, s, nullptr, nullptr), "procaddr cuLaunchKernel");
    check(p.proc_ptds(f, 8, 1, 1, 256, 1, 1, 0, s, nullptr, nullptr), "procaddr cuLaunchKernel_ptsz");
    check(p.proc_v2_ex(&cfg, f, nullptr, nullptr), "procaddr_v2 cuLaunchKernelEx");
    check(p.proc_from_proc_graph_ptsz(graph, s), "nested procaddr cuGraphLaunch_ptsz");
}

void work(int rounds, int index) {
    const Pointers p = obtain();
    if (g_errors.load() != 0) return;
    const std::string name = "ks_paths_kernel_" + std::to_string(index % 3);
    es_CUfunction f = fakecuda_function(name.c_str(), 32, 0, 1024, 0);
    es_CUgraphExec graph = fakecuda_graph(0);
    auto stream = reinterpret_cast<es_CUstream>(static_cast<std::uintptr_t>(0x100 + index));
    for (int r = 0; r < rounds; ++r) round(p, f, graph, stream);
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 10;
    int threads = 1;
    bool do_fork = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = std::atoi(argv[++i]);
        else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = std::atoi(argv[++i]);
        else if (std::strcmp(argv[i], "--fork") == 0)
            do_fork = true;
        else if (std::strcmp(argv[i], "--expect-hooked") == 0)
            g_expect_hooked = true;
        else {
            std::fprintf(
                stderr,
                "usage: ks_fake_launch_paths [--rounds N] [--threads N] [--fork] [--expect-hooked]\n");
            return 2;
        }
    }
    check(cuInit(0), "cuInit");
    // RTLD_NEXT is relative to the caller: through the intercept's dlsym it must still be
    // relative to this program (the intercept relies on a tail call for that).
    if (g_expect_hooked && dlsym(RTLD_NEXT, "dlsym") != dlsym(RTLD_DEFAULT, "dlsym"))
        fail("dlsym(RTLD_NEXT) was resolved relative to the intercept, not the caller");

    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, rounds, t);
    for (std::thread& t : pool) t.join();
    int child_status = 0;
    if (do_fork) {
        const pid_t pid = fork();
        if (pid == 0) {
            work(rounds, 99);
            check(cuCtxSynchronize(), "cuCtxSynchronize (child)");
            _exit(g_errors.load() == 0 ? 0 : 1);
        }
        if (pid < 0 || waitpid(pid, &child_status, 0) != pid)
            fail("fork/wait failed");
        else if (!WIFEXITED(child_status) || WEXITSTATUS(child_status) != 0)
            fail("forked child failed");
    }
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    const long long per_round = 14;
    std::printf("launches %lld\n", per_round * rounds * (threads + (do_fork ? 1 : 0)));
    return g_errors.load() == 0 ? 0 : 1;
}
