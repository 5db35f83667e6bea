#include "core/device/kernel_profile.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace explsched {

const char* to_string(KernelClass cls) {
    switch (cls) {
        case KernelClass::compute:
            return "compute";
        case KernelClass::memory:
            return "memory";
        case KernelClass::unknown:
            break;
    }
    return "unknown";
}

double bandwidth_demand(KernelClass cls, double sms, std::uint32_t sm_count) {
    if (sm_count == 0 || sms <= 0.0) return 0.0;
    double per_share = kUnknownBwPerSmShare;
    if (cls == KernelClass::memory) per_share = kMemoryBoundBwPerSmShare;
    if (cls == KernelClass::compute) per_share = kComputeBoundBwPerSmShare;
    return std::min(1.0, per_share * sms / static_cast<double>(sm_count));
}

namespace {

bool contains_any(std::string_view haystack, const std::string_view* needles, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        if (haystack.find(needles[i]) != std::string_view::npos) return true;
    }
    return false;
}

}  // namespace

KernelClass classify_kernel_name(std::string_view name) {
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // Checked first: a cuDNN "bn_fw" kernel name may also contain "conv" in a template argument.
    static constexpr std::array<std::string_view, 14> kMemory = {
        "elementwise", "batchnorm", "batch_norm", "bn_fw",  "bn_bw", "layer_norm", "layernorm",
        "softmax",     "reduce",    "copy",       "memset", "pool",  "cat_",       "index"};
    static constexpr std::array<std::string_view, 10> kCompute = {
        "gemm", "conv", "cutlass", "wgrad", "dgrad", "winograd", "xmma", "fft", "mma", "flash"};
    if (contains_any(lower, kMemory.data(), kMemory.size())) return KernelClass::memory;
    if (contains_any(lower, kCompute.data(), kCompute.size())) return KernelClass::compute;
    return KernelClass::unknown;
}

std::uint64_t fnv1a64(std::string_view text, std::uint64_t seed) {
    std::uint64_t h = seed;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

KernelProfileStore::KernelProfileStore(double weight, std::uint64_t default_duration_ns)
    : weight_(std::clamp(weight, 0.01, 1.0)), default_duration_ns_(default_duration_ns) {}

void KernelProfileStore::import(const std::vector<KernelProfile>& profiles) {
    struct Tally {
        std::array<std::size_t, 3> votes{};
        std::vector<std::uint64_t> durations;
    };
    std::unordered_map<std::string, Tally> tally;
    for (const KernelProfile& p : profiles) {
        Tally& t = tally[p.name];
        t.votes[static_cast<std::size_t>(p.cls)] += 1;
        t.durations.push_back(p.demand.duration_ns);
    }
    for (auto& [name, t] : tally) {
        ByName entry;
        // Majority over known classes; "unknown" rows only win when nothing else was measured.
        if (t.votes[1] + t.votes[2] > 0) {
            entry.cls = t.votes[1] >= t.votes[2] ? KernelClass::compute : KernelClass::memory;
        }
        auto mid = t.durations.begin() + static_cast<std::ptrdiff_t>(t.durations.size() / 2);
        std::nth_element(t.durations.begin(), mid, t.durations.end());
        entry.median_ns = *mid;
        by_name_[name] = entry;
    }
}

void KernelProfileStore::observe_duration(std::uint64_t key, std::uint64_t duration_ns) {
    // Keys come from what clients launch: a client naming ever new shapes must not grow the table
    // without bound. Past the cap only known keys learn.
    constexpr std::size_t kMaxLearned = 1 << 16;
    if (learned_.size() >= kMaxLearned && learned_.find(key) == learned_.end()) return;
    Learned& l = learned_[key];
    const auto d = static_cast<double>(duration_ns);
    // The first sample is taken as is: averaging with zero would understate the kernel for a
    // dozen launches.
    l.duration_ns = l.samples == 0 ? d : (1.0 - weight_) * l.duration_ns + weight_ * d;
    l.samples += 1;
}

std::uint64_t KernelProfileStore::expected_duration_ns(std::uint64_t key, std::string_view name) const {
    if (auto it = learned_.find(key); it != learned_.end() && it->second.samples > 0) {
        return static_cast<std::uint64_t>(it->second.duration_ns + 0.5);
    }
    if (auto it = by_name_.find(std::string(name)); it != by_name_.end()) return it->second.median_ns;
    return default_duration_ns_;
}

std::uint64_t KernelProfileStore::expected_duration_ns(std::uint64_t key, std::uint64_t fallback_ns) const {
    if (auto it = learned_.find(key); it != learned_.end() && it->second.samples > 0) {
        return static_cast<std::uint64_t>(it->second.duration_ns + 0.5);
    }
    return fallback_ns;
}

std::uint64_t KernelProfileStore::imported_duration_ns(std::string_view name) const {
    if (auto it = by_name_.find(std::string(name)); it != by_name_.end()) return it->second.median_ns;
    return default_duration_ns_;
}

KernelClass KernelProfileStore::kernel_class(std::string_view name) const {
    if (auto it = by_name_.find(std::string(name)); it != by_name_.end()) {
        if (it->second.cls != KernelClass::unknown) return it->second.cls;
    }
    return classify_kernel_name(name);
}

const KernelProfileStore::Learned* KernelProfileStore::learned(std::uint64_t key) const {
    auto it = learned_.find(key);
    return it == learned_.end() ? nullptr : &it->second;
}

}  // namespace explsched
