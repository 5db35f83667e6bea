// A map from 32-bit ids (Slurm job ids) to values, in one flat table: open addressing, linear
// probing, backward-shift deletion (no tombstones), at most half full. One allocation per growth,
// none per entry: slurmctld's placement round keeps a thousand running jobs in a few of these, and
// a node-based std::unordered_map cost a malloc per job (doc/placement.md, "Decision cost").
// Unlike std::unordered_map, an insertion that grows the table moves every value: pointers and
// references into the map hold only until the next insertion. Iteration is in slot order (by
// hash: no order to rely on). Header-only; the standard library only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace explsched {

template <class V>
class IdMap {
public:
    using value_type = std::pair<std::uint32_t, V>;

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    // Empties the map; its room is kept.
    void clear() {
        for (std::size_t i = 0; i < used_.size(); ++i)
            if (used_[i]) {
                slots_[i].second = V{};
                used_[i] = 0;
            }
        size_ = 0;
    }
    // Room for `n` ids: no growth (so no value moves) until there are more.
    void reserve(std::size_t n) {
        std::size_t cap = 16;
        while (cap < 2 * n) cap *= 2;
        if (cap > slots_.size()) rehash(cap);
    }

    V* find(std::uint32_t id) {
        const std::size_t i = index_of(id);
        return i == npos ? nullptr : &slots_[i].second;
    }
    const V* find(std::uint32_t id) const {
        const std::size_t i = index_of(id);
        return i == npos ? nullptr : &slots_[i].second;
    }
    bool contains(std::uint32_t id) const { return index_of(id) != npos; }

    // The value of `id`, made with V{} when absent (`*inserted` says which).
    V& get(std::uint32_t id, bool* inserted = nullptr) {
        if (2 * (size_ + 1) > slots_.size()) rehash(slots_.empty() ? 16 : 2 * slots_.size());
        std::size_t i = home(id);
        while (used_[i]) {
            if (slots_[i].first == id) {
                if (inserted) *inserted = false;
                return slots_[i].second;
            }
            i = (i + 1) & mask_;
        }
        used_[i] = 1;
        slots_[i].first = id;
        slots_[i].second = V{};
        ++size_;
        if (inserted) *inserted = true;
        return slots_[i].second;
    }
    V& operator[](std::uint32_t id) { return get(id); }

    // Removes `id`; false when it was not there.
    bool erase(std::uint32_t id) {
        std::size_t hole = index_of(id);
        if (hole == npos) return false;
        // Backward shift: each later entry of the probe run that may live in the hole moves there.
        for (std::size_t j = (hole + 1) & mask_; used_[j]; j = (j + 1) & mask_) {
            const std::size_t h = home(slots_[j].first);
            // the entry at j stays when its home lies cyclically in (hole, j]
            const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
            if (stays) continue;
            slots_[hole] = std::move(slots_[j]);
            hole = j;
        }
        slots_[hole].second = V{};
        used_[hole] = 0;
        --size_;
        return true;
    }
    // Removes every entry for which pred(id, value) holds.
    template <class Pred>
    void erase_if(Pred pred) {
        std::vector<std::uint32_t> gone;
        for (std::size_t i = 0; i < used_.size(); ++i)
            if (used_[i] && pred(slots_[i].first, slots_[i].second)) gone.push_back(slots_[i].first);
        for (std::uint32_t id : gone) erase(id);
    }

    template <class Slot>
    class Iter {
    public:
        Iter(Slot* slots, const unsigned char* used, std::size_t i, std::size_t n)
            : slots_(slots), used_(used), i_(i), n_(n) {
            skip();
        }
        Slot& operator*() const { return slots_[i_]; }
        Slot* operator->() const { return &slots_[i_]; }
        Iter& operator++() {
            ++i_;
            skip();
            return *this;
        }
        bool operator==(const Iter& o) const { return i_ == o.i_; }
        bool operator!=(const Iter& o) const { return i_ != o.i_; }

    private:
        void skip() {
            while (i_ < n_ && !used_[i_]) ++i_;
        }
        Slot* slots_;
        const unsigned char* used_;
        std::size_t i_, n_;
    };
    using iterator = Iter<value_type>;
    using const_iterator = Iter<const value_type>;
    iterator begin() { return {slots_.data(), used_.data(), 0, used_.size()}; }
    iterator end() { return {slots_.data(), used_.data(), used_.size(), used_.size()}; }
    const_iterator begin() const { return {slots_.data(), used_.data(), 0, used_.size()}; }
    const_iterator end() const { return {slots_.data(), used_.data(), used_.size(), used_.size()}; }

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    std::vector<value_type> slots_;
    std::vector<unsigned char> used_;
    std::size_t size_ = 0;
    std::size_t mask_ = 0;
    unsigned shift_ = 63;  // 64 - log2(the slot count)

    // Fibonacci hashing (the product's top bits): consecutive ids (Slurm's) spread over the table.
    std::size_t home(std::uint32_t id) const {
        return static_cast<std::size_t>((std::uint64_t{id} * 0x9E3779B97F4A7C15ull) >> shift_);
    }
    std::size_t index_of(std::uint32_t id) const {
        if (size_ == 0) return npos;
        for (std::size_t i = home(id); used_[i]; i = (i + 1) & mask_)
            if (slots_[i].first == id) return i;
        return npos;
    }
    void rehash(std::size_t cap) {
        std::vector<value_type> old_slots(cap);
        std::vector<unsigned char> old_used(cap, 0);
        old_slots.swap(slots_);
        old_used.swap(used_);
        mask_ = cap - 1;
        shift_ = 64;
        for (std::size_t c = cap; c > 1; c /= 2) --shift_;
        for (std::size_t i = 0; i < old_used.size(); ++i) {
            if (!old_used[i]) continue;
            std::size_t j = home(old_slots[i].first);
            while (used_[j]) j = (j + 1) & mask_;
            slots_[j] = std::move(old_slots[i]);
            used_[j] = 1;
        }
    }
};

}  // namespace explsched
