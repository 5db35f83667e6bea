// A map from 32-bit ids (Slurm job ids) to values: the values in one dense vector, and a hash
// table of indexes into it (open addressing, linear probing, backward-shift deletion: no
// tombstones; at most half full). One allocation per growth, none per entry: slurmctld's placement
// round keeps a thousand running jobs in a few of these, where a node-based std::unordered_map
// cost a malloc per job (doc/placement.md, "Decision cost"). Unlike std::unordered_map, values
// move: a pointer or reference into the map holds only until the next insertion or erase.
// The hash is not keyed: its ids must not be chosen by users (a job id is slurmctld's: only
// SlurmUser or root may ask for one), else they could make long probe runs on purpose.
// Header-only; the standard library only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace explsched {

template <class V>
class IdMap {
public:
    using value_type = std::pair<std::uint32_t, V>;

    std::size_t size() const { return values_.size(); }
    bool empty() const { return values_.empty(); }
    // Empties the map; its room is kept.
    void clear() {
        values_.clear();
        std::fill(slots_.begin(), slots_.end(), kEmpty);
    }
    // Room for `n` ids: no growth (so no value moves on insertion) until there are more.
    void reserve(std::size_t n) {
        values_.reserve(n);
        std::size_t cap = 16;
        while (cap < 2 * n) cap *= 2;
        if (cap > slots_.size()) rehash(cap);
    }

    V* find(std::uint32_t id) {
        const std::size_t i = slot_of(id);
        return i == npos ? nullptr : &values_[slots_[i]].second;
    }
    const V* find(std::uint32_t id) const {
        const std::size_t i = slot_of(id);
        return i == npos ? nullptr : &values_[slots_[i]].second;
    }
    bool contains(std::uint32_t id) const { return slot_of(id) != npos; }

    // The value of `id`, made with V{} when absent (`*inserted` says which).
    V& get(std::uint32_t id, bool* inserted = nullptr) {
        if (2 * (values_.size() + 1) > slots_.size()) rehash(slots_.empty() ? 16 : 2 * slots_.size());
        std::size_t i = home(id);
        for (; slots_[i] != kEmpty; i = (i + 1) & mask_)
            if (values_[slots_[i]].first == id) {
                if (inserted) *inserted = false;
                return values_[slots_[i]].second;
            }
        slots_[i] = static_cast<std::uint32_t>(values_.size());
        values_.emplace_back(id, V{});
        if (inserted) *inserted = true;
        return values_.back().second;
    }
    V& operator[](std::uint32_t id) { return get(id); }

    // Removes `id`; false when it was not there. The last value moves into its place.
    bool erase(std::uint32_t id) {
        std::size_t hole = slot_of(id);
        if (hole == npos) return false;
        const std::uint32_t at = slots_[hole];
        // Backward shift: each later slot of the probe run that may live in the hole moves there.
        for (std::size_t j = (hole + 1) & mask_; slots_[j] != kEmpty; j = (j + 1) & mask_) {
            const std::size_t h = home(values_[slots_[j]].first);
            // the slot at j stays when its home lies cyclically in (hole, j]
            const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
            if (stays) continue;
            slots_[hole] = slots_[j];
            hole = j;
        }
        slots_[hole] = kEmpty;
        const auto last = static_cast<std::uint32_t>(values_.size() - 1);
        if (at != last) {
            slots_[slot_of(values_[last].first)] = at;
            values_[at] = std::move(values_[last]);
        }
        values_.pop_back();
        return true;
    }
    // Removes every entry for which pred(id, value) holds.
    template <class Pred>
    void erase_if(Pred pred) {
        std::vector<std::uint32_t> gone;
        for (const value_type& e : values_)
            if (pred(e.first, e.second)) gone.push_back(e.first);
        for (std::uint32_t id : gone) erase(id);
    }

    // (id, value) pairs, in the order they came less the erased ones (the last moved into each
    // erased one's place).
    using iterator = typename std::vector<value_type>::iterator;
    using const_iterator = typename std::vector<value_type>::const_iterator;
    iterator begin() { return values_.begin(); }
    iterator end() { return values_.end(); }
    const_iterator begin() const { return values_.begin(); }
    const_iterator end() const { return values_.end(); }

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    static constexpr std::uint32_t kEmpty = 0xffffffffu;
    std::vector<value_type> values_;    // dense: iteration and growth touch only the entries
    std::vector<std::uint32_t> slots_;  // the hash table: an index into values_, or kEmpty
    std::size_t mask_ = 0;
    unsigned shift_ = 63;  // 64 - log2(the slot count)

    // Fibonacci hashing (the product's top bits): consecutive ids (Slurm's) spread over the table.
    std::size_t home(std::uint32_t id) const {
        return static_cast<std::size_t>((std::uint64_t{id} * 0x9E3779B97F4A7C15ull) >> shift_);
    }
    std::size_t slot_of(std::uint32_t id) const {
        if (values_.empty()) return npos;
        for (std::size_t i = home(id); slots_[i] != kEmpty; i = (i + 1) & mask_)
            if (values_[slots_[i]].first == id) return i;
        return npos;
    }
    void rehash(std::size_t cap) {
        slots_.assign(cap, kEmpty);
        mask_ = cap - 1;
        shift_ = 64;
        for (std::size_t c = cap; c > 1; c /= 2) --shift_;
        for (std::size_t k = 0; k < values_.size(); ++k) {
            std::size_t j = home(values_[k].first);
            while (slots_[j] != kEmpty) j = (j + 1) & mask_;
            slots_[j] = static_cast<std::uint32_t>(k);
        }
    }
};

}  // namespace explsched
