#define BOOST_TEST_MODULE test_base_hash
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <set>

#include "core/base/hash.hpp"

using namespace explsched;

// Usable in constant expressions.
static_assert(hash_combine(0, 0) == 0x632BE59BD9B4E019ULL);

BOOST_AUTO_TEST_SUITE(base_hash)

// The values are pinned: kernel admission's sequence keys (and the kernel scheduler's launch
// keys) are made with this function, and the contention simulator's output depends on them.
BOOST_AUTO_TEST_CASE(pinned_values) {
    BOOST_TEST(hash_combine(0, 0) == 0x632be59bd9b4e019ULL);
    BOOST_TEST(hash_combine(1, 2) == 0xfd1c9c22a6fe9c4eULL);
    BOOST_TEST(hash_combine(hash_combine(0xcbf29ce484222325ULL, 7), 9) == 0xd6fa0ae8a5a8edffULL);
}

BOOST_AUTO_TEST_CASE(order_matters) {
    BOOST_TEST(hash_combine(1, 2) != hash_combine(2, 1));
    BOOST_TEST(hash_combine(hash_combine(0, 1), 2) != hash_combine(hash_combine(0, 2), 1));
}

BOOST_AUTO_TEST_CASE(small_inputs_do_not_collide) {
    std::set<std::uint64_t> seen;
    for (std::uint64_t a = 0; a < 64; ++a)
        for (std::uint64_t b = 0; b < 64; ++b) seen.insert(hash_combine(hash_combine(0, a), b));
    BOOST_TEST(seen.size() == 64u * 64u);
}

BOOST_AUTO_TEST_SUITE_END()
