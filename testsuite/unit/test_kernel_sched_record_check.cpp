#define BOOST_TEST_MODULE test_kernel_sched_record_check
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <ostream>

#include "core/device/kernel_occupancy.hpp"
#include "kernel_sched/record_check.hpp"

using namespace explsched;
using namespace explsched::ksched;

namespace explsched::ksched {
std::ostream& operator<<(std::ostream& out, Refusal r) { return out << to_string(r); }
}  // namespace explsched::ksched

namespace {

RecordBody launch(std::uint32_t gx, std::uint16_t bx, std::uint32_t bz) {
    RecordBody b{};
    b.type = RecordType::request;
    b.entry = Entry::launch_kernel;
    b.func_index = 0;
    b.grid_x = gx;
    b.grid_y = b.grid_z = 1;
    b.block_x = bx;
    b.block_y = 1;
    b.block_z = bz;
    return b;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_sched_record_check)

BOOST_AUTO_TEST_CASE(occupancy_survives_absurd_values) {
    const GpuLimits g;
    // Each of these divided by zero or overflowed before.
    BOOST_TEST(blocks_per_sm(g, 0xFFFFFFFFu, 32, 0) == 0u);
    BOOST_TEST(blocks_per_sm(g, 1024, 0xFFFFFFFFu, 0) == 0u);
    BOOST_TEST(blocks_per_sm(g, 0xFFFFFFE1u, 0xFFFFFFFFu, ~0ull) == 0u);
    BOOST_TEST(blocks_per_sm(g, 0, 32, 0) == 0u);
    BOOST_TEST(blocks_per_sm(g, 256, 32, ~0ull) == 0u);
    GpuLimits zero{};
    zero.sm_count = 0;
    zero.max_threads_per_sm = 0;
    zero.max_regs_per_sm = 0;
    zero.max_smem_per_sm = 0;
    zero.max_blocks_per_sm = 0;
    zero.reg_alloc_unit = 0;
    BOOST_TEST(blocks_per_sm(zero, 1024, 255, 4096) == 0u);
    BOOST_TEST(sms_needed(zero, ~0ull, 0) == 0u);
    BOOST_TEST(sms_needed(g, ~0ull, 1) == g.sm_count);
    // Ordinary values are unchanged: 1024 threads x 32 registers: 2 blocks per SM.
    BOOST_TEST(blocks_per_sm(g, 1024, 32, 0) == 2u);
    BOOST_TEST(sms_needed(g, 264, 2) == 132u);
    BOOST_TEST(sms_needed(g, 3, 2) == 2u);
}

BOOST_AUTO_TEST_CASE(records_are_refused_or_clamped) {
    CheckedRecord out;
    BOOST_TEST(check_record(launch(264, 1024, 1), kMaxFuncs, out) == Refusal::none);
    BOOST_TEST(out.blocks == 264u);
    BOOST_TEST(out.threads == 1024u);
    BOOST_TEST(check_record(launch(1, 32, 0xFFFFFFFFu), kMaxFuncs, out) == Refusal::too_many_threads);
    BOOST_TEST(check_record(launch(1, 32, 0), kMaxFuncs, out) == Refusal::zero_dimension);
    BOOST_TEST(check_record(launch(0, 32, 1), kMaxFuncs, out) == Refusal::zero_dimension);
    BOOST_TEST(check_record(launch(0xFFFFFFFFu, 32, 1), kMaxFuncs, out) == Refusal::grid_too_large);
    BOOST_TEST(check_record(launch(1, 1024, 2), kMaxFuncs, out) == Refusal::too_many_threads);
    RecordBody b = launch(1, 32, 1);
    b.func_index = 10;
    BOOST_TEST(check_record(b, 10, out) == Refusal::bad_func_index);
    b.func_index = kGraphFunc;
    BOOST_TEST(check_record(b, 10, out) == Refusal::none);
    b.entry = static_cast<Entry>(200);
    BOOST_TEST(check_record(b, 10, out) == Refusal::bad_entry);
    RecordBody garbage;
    std::memset(static_cast<void*>(&garbage), 0xFF, sizeof garbage);
    BOOST_TEST(check_record(garbage, kMaxFuncs, out) == Refusal::bad_type);
    b = launch(1, 32, 1);
    b.smem_dynamic = 0xFFFFFFFFu;
    b.flags = 0xFFFF;
    BOOST_TEST(check_record(b, kMaxFuncs, out) == Refusal::none);
    BOOST_TEST(out.smem_dynamic == kMaxSmemPerBlock);
    BOOST_TEST(out.flags == kKnownFlags);
    BOOST_TEST(std::string(to_string(Refusal::zero_dimension)) == "a grid or block dimension is zero");
}

BOOST_AUTO_TEST_CASE(function_entries_and_limits_are_clamped) {
    FuncInfo f{};
    f.regs = 0xFFFFFFFFu;
    f.static_smem = 0xFFFFFFFFu;
    f.max_threads = 0xFFFFFFFFu;
    std::memset(f.name, '\n', sizeof f.name);  // unterminated, unprintable
    const CheckedFunc c = check_func(f);
    BOOST_TEST(c.regs == kMaxRegsPerThread);
    BOOST_TEST(c.static_smem == kMaxSmemPerBlock);
    BOOST_TEST(c.max_threads == kMaxThreadsPerBlock);
    BOOST_TEST(c.name == std::string(kNameMax - 1, '?'));  // as with a NUL (found by fuzz_record_check)
    HelloMsg h{};
    h.sm_count = 0xFFFFFFFFu;
    h.max_threads_per_sm = 1;
    h.max_regs_per_sm = 0;  // unknown: the daemon's value
    const GpuLimits fallback;
    const GpuLimits g = check_limits(h, fallback);
    BOOST_TEST(g.sm_count == 1024u);
    BOOST_TEST(g.max_threads_per_sm == 32u);
    BOOST_TEST(g.max_regs_per_sm == fallback.max_regs_per_sm);
}

BOOST_AUTO_TEST_SUITE_END()
