#define BOOST_TEST_MODULE test_device_kernel_profile
#include <boost/test/unit_test.hpp>

#include "core/device/kernel_occupancy.hpp"
#include "core/device/kernel_profile.hpp"

#include <ostream>

namespace explsched {
std::ostream& operator<<(std::ostream& out, KernelClass c) { return out << to_string(c); }
}  // namespace explsched

using namespace explsched;

BOOST_AUTO_TEST_SUITE(device_kernel_profile)

BOOST_AUTO_TEST_CASE(bandwidth_demand_follows_class_and_sms) {
    // A memory-bound kernel saturates DRAM with half the SMs; compute-bound ones draw little.
    BOOST_TEST(bandwidth_demand(KernelClass::memory, 40, 80) == 1.0);
    BOOST_TEST(bandwidth_demand(KernelClass::memory, 10, 80) == 0.25);
    BOOST_TEST(bandwidth_demand(KernelClass::compute, 80, 80) == kComputeBoundBwPerSmShare);
    BOOST_TEST(bandwidth_demand(KernelClass::unknown, 80, 80) == kUnknownBwPerSmShare);
    BOOST_TEST(bandwidth_demand(KernelClass::memory, 0, 80) == 0.0);
    BOOST_TEST(bandwidth_demand(KernelClass::memory, 10, 0) == 0.0);
}

BOOST_AUTO_TEST_CASE(name_heuristic) {
    BOOST_TEST(classify_kernel_name("void at::native::vectorized_elementwise_kernel<4>") ==
               KernelClass::memory);
    BOOST_TEST(classify_kernel_name("void cudnn::detail::bn_fw_tr_1C11_kernel_NCHW") == KernelClass::memory);
    BOOST_TEST(classify_kernel_name("sm90_xmma_gemm_f16f16_f16f32") == KernelClass::compute);
    BOOST_TEST(classify_kernel_name("volta_scudnn_128x64_relu_interior_nn_v1") == KernelClass::unknown);
    BOOST_TEST(classify_kernel_name("Conv") == KernelClass::compute);
}

BOOST_AUTO_TEST_CASE(fnv_is_stable) {
    // Published FNV-1a 64 test vectors: the daemon and tools must agree across builds.
    BOOST_TEST(fnv1a64("") == 0xcbf29ce484222325ULL);
    BOOST_TEST(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
    BOOST_TEST(fnv1a64("foobar") == 0x85944171f73967e8ULL);
}

BOOST_AUTO_TEST_CASE(store_imports_majority_class_and_median) {
    auto p = [](const char* name, KernelClass c, std::uint64_t ns) {
        KernelProfile k;
        k.name = name;
        k.cls = c;
        k.demand.duration_ns = ns;
        return k;
    };
    KernelProfileStore store(0.5, 1234);
    store.import({p("Conv", KernelClass::compute, 100), p("Conv", KernelClass::compute, 300),
                  p("Conv", KernelClass::memory, 200), p("odd", KernelClass::unknown, 50)});
    BOOST_TEST(store.imported_names() == 2u);
    BOOST_TEST(store.kernel_class("Conv") == KernelClass::compute);
    BOOST_TEST(store.imported_duration_ns("Conv") == 200u);  // median
    // Only "unknown" rows: the name heuristic decides.
    BOOST_TEST(store.kernel_class("odd") == KernelClass::unknown);
    BOOST_TEST(store.kernel_class("elementwise_add") == KernelClass::memory);
    BOOST_TEST(store.expected_duration_ns(7, "nobody") == 1234u);
    BOOST_TEST(store.expected_duration_ns(7, "Conv") == 200u);
}

BOOST_AUTO_TEST_CASE(store_learns_with_ewma) {
    KernelProfileStore store(0.5, 1000);
    BOOST_TEST(store.learned(42) == nullptr);
    store.observe_duration(42, 100);
    BOOST_TEST(store.expected_duration_ns(42, "x") == 100u);  // first sample taken as is
    store.observe_duration(42, 300);
    BOOST_TEST(store.expected_duration_ns(42, "x") == 200u);
    store.observe_duration(42, 200);
    BOOST_TEST(store.expected_duration_ns(42, std::uint64_t{5}) == 200u);
    BOOST_TEST(store.learned(42)->samples == 3u);
    BOOST_TEST(store.expected_duration_ns(43, std::uint64_t{5}) == 5u);
}

BOOST_AUTO_TEST_CASE(occupancy_matches_the_calculator) {
    const GpuLimits h100;  // 132 SMs, 2048 threads, 64K registers, 228 KiB shared memory, 32 blocks
    // 1024 threads, 32 registers: two blocks per SM (thread limit).
    BOOST_TEST(blocks_per_sm(h100, 1024, 32, 0) == 2u);
    // 256 threads, 128 registers: 4096 registers per warp... 65536 / (128*32) = 16 warps -> 2 blocks.
    BOOST_TEST(blocks_per_sm(h100, 256, 128, 0) == 2u);
    // 128 threads, 16 registers, no shared memory: the 32-block limit.
    BOOST_TEST(blocks_per_sm(h100, 64, 16, 0) == 32u);
    // 100 KiB of shared memory per block (+1 KiB reserved): two fit in 228 KiB.
    BOOST_TEST(blocks_per_sm(h100, 128, 32, 100 * 1024) == 2u);
    // More shared memory than an SM has: the launch cannot run.
    BOOST_TEST(blocks_per_sm(h100, 128, 32, 300 * 1024) == 0u);
    BOOST_TEST(blocks_per_sm(h100, 0, 32, 0) == 0u);
    BOOST_TEST(sms_needed(h100, 264, 2) == 132u);
    BOOST_TEST(sms_needed(h100, 10000, 2) == 132u);
    BOOST_TEST(sms_needed(h100, 5, 2) == 3u);
    BOOST_TEST(sms_needed(h100, 0, 2) == 0u);
    BOOST_TEST(sms_needed(h100, 5, 0) == 132u);
}

BOOST_AUTO_TEST_SUITE_END()
