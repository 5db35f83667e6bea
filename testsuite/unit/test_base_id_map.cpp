#define BOOST_TEST_MODULE test_base_id_map
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/base/id_map.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(base_id_map)

// The map's content, in id order (its own order is the hash's).
template <class V>
std::map<std::uint32_t, V> contents(const IdMap<V>& m) {
    std::map<std::uint32_t, V> out;
    for (const auto& [id, v] : m) BOOST_TEST(out.emplace(id, v).second);  // each id once
    return out;
}

BOOST_AUTO_TEST_CASE(get_find_erase) {
    IdMap<std::string> m;
    BOOST_TEST(m.empty());
    BOOST_TEST(m.find(7) == nullptr);
    BOOST_TEST(!m.erase(7));
    bool inserted = false;
    m.get(7, &inserted) = "seven";
    BOOST_TEST(inserted);
    BOOST_TEST(m.get(7, &inserted) == "seven");
    BOOST_TEST(!inserted);
    m[0] = "zero";
    m[0xffffffffu] = "max";  // every id is a key, the largest and 0 included
    BOOST_TEST(m.size() == 3u);
    BOOST_TEST(*m.find(0xffffffffu) == "max");
    BOOST_TEST(*m.find(0) == "zero");
    BOOST_TEST(m.erase(7));
    BOOST_TEST(!m.contains(7));
    BOOST_TEST(m.size() == 2u);
    m[7];  // made afresh: the erased value is gone
    BOOST_TEST(m.find(7)->empty());
    m.clear();
    BOOST_TEST(m.empty());
    BOOST_TEST(m.find(0) == nullptr);
    BOOST_TEST(contents(m).empty());
}

// Random inserts, erases and lookups against std::map, with ids drawn from a small range (long
// probe runs, erases in the middle of them, wrap-around at the table's end) and from Slurm's
// consecutive ids; the table grows from empty and from reserve().
BOOST_AUTO_TEST_CASE(same_as_a_std_map_under_random_operations) {
    for (const std::uint32_t range : {40u, 1000u, 1u << 20}) {
        for (const bool reserved : {false, true}) {
            std::mt19937 rng(range + reserved);
            IdMap<std::uint64_t> m;
            if (reserved) m.reserve(500);
            std::map<std::uint32_t, std::uint64_t> ref;
            for (int step = 0; step < 20000; ++step) {
                const std::uint32_t id = range == (1u << 20) ? 1000000u + rng() % 1200 : rng() % range;
                switch (rng() % 4) {
                    case 0:
                    case 1: {
                        const std::uint64_t v = rng();
                        m[id] = v;
                        ref[id] = v;
                        break;
                    }
                    case 2:
                        BOOST_TEST(m.erase(id) == (ref.erase(id) == 1));
                        break;
                    default: {
                        const std::uint64_t* got = m.find(id);
                        const auto want = ref.find(id);
                        BOOST_TEST((got != nullptr) == (want != ref.end()));
                        if (got && want != ref.end()) BOOST_TEST(*got == want->second);
                    }
                }
                BOOST_TEST_REQUIRE(m.size() == ref.size());
                if (step % 997 == 0) BOOST_TEST_REQUIRE((contents(m) == ref));
            }
            BOOST_TEST((contents(m) == ref));
            for (const auto& [id, v] : ref) BOOST_TEST(*m.find(id) == v);  // every one still found
        }
    }
}

BOOST_AUTO_TEST_CASE(erase_if_removes_exactly_the_matching_ones) {
    IdMap<int> m;
    std::map<std::uint32_t, int> ref;
    for (std::uint32_t id = 100; id < 1100; ++id) {
        m[id] = static_cast<int>(id % 7);
        ref[id] = static_cast<int>(id % 7);
    }
    m.erase_if([](std::uint32_t id, int v) { return v == 3 || id % 2 == 0; });
    for (auto it = ref.begin(); it != ref.end();)
        it = it->second == 3 || it->first % 2 == 0 ? ref.erase(it) : std::next(it);
    BOOST_TEST(m.size() == ref.size());
    BOOST_TEST((contents(m) == ref));
}

// A reserved map moves no value while it stays within its reservation.
BOOST_AUTO_TEST_CASE(reserve_keeps_values_in_place) {
    IdMap<int> m;
    m.reserve(1000);
    m[1] = 1;
    const int* first = m.find(1);
    for (std::uint32_t id = 2; id <= 1000; ++id) m[id] = static_cast<int>(id);
    BOOST_TEST(m.find(1) == first);
    BOOST_TEST(*first == 1);
}

BOOST_AUTO_TEST_SUITE_END()
