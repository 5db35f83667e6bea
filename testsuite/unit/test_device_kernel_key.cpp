#define BOOST_TEST_MODULE test_device_kernel_key
#include <boost/test/unit_test.hpp>

#include "core/device/kernel_key.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(device_kernel_key)

BOOST_AUTO_TEST_CASE(profiled_kernel_key_is_name_and_sm_demand) {
    KernelProfile k;
    k.name = "foobar";
    k.demand.sms = 40.7;  // whole SMs count
    // fnv1a64("foobar") ^ 40 * 0x9E3779B97F4A7C15 (mod 2^64): the contention simulator's key.
    BOOST_TEST(kernel_key(k) == (0x85944171f73967e8ULL ^ 0xb8ab04fbe3a36348ULL));
    KernelProfile other = k;
    other.demand.sms = 41.0;
    BOOST_TEST(kernel_key(other) != kernel_key(k));
}

BOOST_AUTO_TEST_CASE(launch_key_tells_shapes_apart) {
    const std::uint64_t name = fnv1a64("gemm");
    const LaunchShape a{128, 1, 1, 256, 1, 1, 0};
    LaunchShape b = a;
    BOOST_TEST(kernel_key(name, a) == kernel_key(name, b));
    b.smem_dynamic = 4096;
    BOOST_TEST(kernel_key(name, a) != kernel_key(name, b));
    b = a;
    b.grid_x = 1;
    b.block_x = 128;  // the same number of threads in another geometry is another shape
    BOOST_TEST(kernel_key(name, a) != kernel_key(name, b));
    BOOST_TEST(kernel_key(name, a) != kernel_key(fnv1a64("gemv"), a));
}

BOOST_AUTO_TEST_CASE(key_is_name_hash_xor_shape_hash) {
    const LaunchShape s{2, 3, 4, 32, 8, 1, 256};
    BOOST_TEST(kernel_key(0, s) == shape_hash(s));
    BOOST_TEST(kernel_key(fnv1a64("x"), s) == (fnv1a64("x") ^ shape_hash(s)));
}

BOOST_AUTO_TEST_SUITE_END()
