#include "core/sched/net_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_set>

#include "core/base/hash.hpp"

namespace explsched::net {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// One CSV line into fields; double quotes group commas, "" is a literal quote.
std::vector<std::string> split_csv_line(std::string_view line) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c == '"') {
            if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
                fields.back() += '"';
                ++i;
            } else {
                quoted = !quoted;
            }
        } else if (c == ',' && !quoted) {
            fields.emplace_back();
        } else if (c != '\r') {
            fields.back() += c;
        }
    }
    return fields;
}

std::vector<std::string> lines_of(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (!line.empty()) out.emplace_back(line);
        start = end + 1;
    }
    // A UTF-8 byte-order mark on the header is not part of the first key.
    if (!out.empty() && out.front().rfind("\xEF\xBB\xBF", 0) == 0) out.front().erase(0, 3);
    return out;
}

std::optional<double> parse_number(const std::string& text) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
    return v;
}

Result<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error("explsched: net table: cannot open " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::uint64_t bits_of(double v) {
    if (std::isnan(v)) return 0x7ff8000000000001ULL;  // one NaN for all (unmeasured, unknown)
    std::uint64_t b = 0;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

std::uint64_t hash_text(std::uint64_t seed, const std::string& text) {
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
    for (const unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
    return hash_combine(hash_combine(seed, text.size()), h);
}

std::uint64_t pair_id(int row, int col) {
    return static_cast<std::uint64_t>(row) << 32 | static_cast<std::uint32_t>(col);
}

double median_of(std::vector<double> v) {
    if (v.empty()) return 0.0;
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
}

}  // namespace

std::string shape_key(std::string_view model, int gpus, int nodes) {
    std::string k(model);
    k += ',';
    k += std::to_string(gpus);
    k += ',';
    k += std::to_string(nodes);
    return k;
}

int ShapeTypes::find(const PairTable& table, const std::string& model, int gpus, int nodes) {
    auto it = by_model_.find(model);
    if (it == by_model_.end()) {
        if (by_model_.size() >= kMaxModels) by_model_.clear();
        it = by_model_.emplace(model, std::vector<Shape>()).first;
    }
    for (const Shape& s : it->second)
        if (s.gpus == gpus && s.nodes == nodes) return s.type;
    if (it->second.size() >= kMaxShapes) it->second.clear();
    const int type = table.find(shape_key(model, gpus, nodes));
    it->second.push_back({gpus, nodes, type});
    return type;
}

Result<PairTable> PairTable::from_csv(std::string_view isolated_csv, std::string_view ratio_csv) {
    PairTable t;
    const auto iso = lines_of(isolated_csv);
    for (std::size_t i = 1; i < iso.size(); ++i) {
        const auto f = split_csv_line(iso[i]);
        const auto v = f.size() == 2 ? parse_number(f[1]) : std::nullopt;
        if (f[0].empty() || !v || *v <= 0.0)
            return make_error("explsched: isolated throughput table: line " + std::to_string(i + 1) +
                              ": want \"MODEL,GPUS,NODES\",samples_per_s with a positive value");
        t.set_isolated(t.intern(f[0]), *v);
    }
    const auto rat = lines_of(ratio_csv);
    if (rat.empty()) return make_error("explsched: shared throughput ratio table: empty");
    const auto header = split_csv_line(rat[0]);
    std::vector<int> cols;
    for (std::size_t c = 1; c < header.size(); ++c) cols.push_back(t.intern(header[c]));
    for (std::size_t i = 1; i < rat.size(); ++i) {
        const auto f = split_csv_line(rat[i]);
        if (f.size() != header.size() || f[0].empty())
            return make_error("explsched: shared throughput ratio table: line " + std::to_string(i + 1) +
                              ": " + std::to_string(f.size()) + " fields, the header has " +
                              std::to_string(header.size()));
        const int row = t.intern(f[0]);
        for (std::size_t c = 1; c < f.size(); ++c) {
            if (f[c].empty()) continue;
            const auto v = parse_number(f[c]);
            if (!v || *v <= 0.0)
                return make_error("explsched: shared throughput ratio table: line " + std::to_string(i + 1) +
                                  ": bad ratio '" + f[c] + "' for " + header[c]);
            t.set_ratio(row, cols[c - 1], *v);
        }
    }
    t.fit_factors();
    return t;
}

Result<PairTable> PairTable::load_files(const std::string& isolated_path, const std::string& ratio_path) {
    auto iso = read_file(isolated_path);
    if (!iso) return iso.error();
    auto rat = read_file(ratio_path);
    if (!rat) return rat.error();
    return from_csv(*iso, *rat);
}

void PairTable::grow(std::size_t n) {
    const std::size_t old = keys_.size();
    std::vector<double> s(n * n, nan);
    for (std::size_t r = 0; r < old; ++r)
        for (std::size_t c = 0; c < old; ++c) s[r * n + c] = stretch_[r * old + c];
    stretch_ = std::move(s);
    isolated_.resize(n, nan);
    sens_.resize(n, nan);
    press_.resize(n, nan);
}

int PairTable::intern(const std::string& k) {
    const auto it = index_.find(k);
    if (it != index_.end()) return it->second;
    grow(keys_.size() + 1);
    keys_.push_back(k);
    keys_fingerprint_ = hash_text(keys_fingerprint_, k);
    fingerprint_fresh_ = false;
    rebuild_dense();
    const int id = static_cast<int>(keys_.size() - 1);
    index_.emplace(k, id);
    return id;
}

int PairTable::find(const std::string& k) const {
    const auto it = index_.find(k);
    return it == index_.end() ? unknown : it->second;
}

void PairTable::set_isolated(int type, double samples_per_s) {
    fingerprint_fresh_ = false;
    isolated_[static_cast<std::size_t>(type)] = samples_per_s;
}

std::optional<double> PairTable::isolated(int type) const {
    if (type < 0 || static_cast<std::size_t>(type) >= keys_.size()) return std::nullopt;
    const double v = isolated_[static_cast<std::size_t>(type)];
    if (std::isnan(v)) return std::nullopt;
    return v;
}

void PairTable::set_ratio(int row, int col, double ratio) {
    const double r = std::clamp(ratio, 1e-3, 1.0);
    fingerprint_fresh_ = false;
    double& c = cell(row, col);
    if (std::isnan(c)) ++measured_;
    c = 1.0 / r - 1.0;
    dense_[static_cast<std::size_t>(row) * keys_.size() + static_cast<std::size_t>(col)] = c;
}

std::optional<double> PairTable::measured_ratio(int row, int col) const {
    if (row < 0 || col < 0) return std::nullopt;
    const double x = cell(row, col);
    if (std::isnan(x)) return std::nullopt;
    return 1.0 / (1.0 + x);
}

double PairTable::sensitivity(int type) const {
    if (type >= 0 && fitted_) {
        const double v = sens_[static_cast<std::size_t>(type)];
        if (!std::isnan(v)) return v;
    }
    return fitted_ ? median_sens_ : std::sqrt(default_stretch);
}

double PairTable::pressure(int type) const {
    if (type >= 0 && fitted_) {
        const double v = press_[static_cast<std::size_t>(type)];
        if (!std::isnan(v)) return v;
    }
    return fitted_ ? median_press_ : std::sqrt(default_stretch);
}

void PairTable::rebuild_dense() {
    const std::size_t n = keys_.size();
    dense_.assign(n * n, 0.0);
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c) {
            const double x = stretch_[r * n + c];
            dense_[r * n + c] =
                std::isnan(x) ? sensitivity(static_cast<int>(r)) * pressure(static_cast<int>(c)) : x;
        }
    fingerprint_ = compute_fingerprint();
    fingerprint_fresh_ = true;
}

void PairTable::fit_factors() {
    fitted_on_ = fingerprint();
    const std::size_t n = keys_.size();
    std::fill(sens_.begin(), sens_.end(), nan);
    std::fill(press_.begin(), press_.end(), nan);
    fitted_ = false;
    if (measured_ == 0) {
        rebuild_dense();
        return;
    }
    std::vector<double> a(n, 1.0), b(n, 1.0);
    for (int pass = 0; pass < 30; ++pass) {
        for (std::size_t r = 0; r < n; ++r) {
            double num = 0.0, den = 0.0;
            for (std::size_t c = 0; c < n; ++c) {
                const double x = stretch_[r * n + c];
                if (std::isnan(x)) continue;
                num += x * b[c];
                den += b[c] * b[c];
            }
            a[r] = den > 0.0 ? std::max(0.0, num / den) : nan;
        }
        for (std::size_t c = 0; c < n; ++c) {
            double num = 0.0, den = 0.0;
            for (std::size_t r = 0; r < n; ++r) {
                const double x = stretch_[r * n + c];
                if (std::isnan(x) || std::isnan(a[r])) continue;
                num += x * a[r];
                den += a[r] * a[r];
            }
            b[c] = den > 0.0 ? std::max(0.0, num / den) : nan;
        }
    }
    std::vector<double> sa, sb;
    for (std::size_t i = 0; i < n; ++i) {
        sens_[i] = a[i];
        press_[i] = b[i];
        if (!std::isnan(a[i])) sa.push_back(a[i]);
        if (!std::isnan(b[i])) sb.push_back(b[i]);
    }
    median_sens_ = median_of(sa);
    median_press_ = median_of(sb);
    fitted_ = true;
    rebuild_dense();
}

double PairTable::fit_rms_error() const {
    const std::size_t n = keys_.size();
    double sum = 0.0;
    std::size_t count = 0;
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c) {
            const double x = stretch_[r * n + c];
            if (std::isnan(x)) continue;
            const double fit = sensitivity(static_cast<int>(r)) * pressure(static_cast<int>(c));
            const double d = 1.0 / (1.0 + x) - 1.0 / (1.0 + fit);
            sum += d * d;
            ++count;
        }
    return count ? std::sqrt(sum / static_cast<double>(count)) : 0.0;
}

std::uint64_t PairTable::stretch_fingerprint() const { return hash_combine(fingerprint(), fitted_on_); }

std::uint64_t PairTable::compute_fingerprint() const {
    std::uint64_t h = hash_combine(0x6e65745f7461626cULL, keys_.size());
    for (const std::string& k : keys_) h = hash_text(h, k);
    for (const double v : isolated_) h = hash_combine(h, bits_of(v));
    for (const double x : stretch_) h = hash_combine(h, bits_of(x));
    return h;
}

NetPairEstimator::NetPairEstimator(PairTable prior, EstimatorSettings settings)
    : table_(std::move(prior)),
      settings_(settings),
      prior_types_(table_.size()),
      prior_fingerprint_(table_.fingerprint()) {}

NetPairEstimator::State NetPairEstimator::state() const {
    State s;
    // a type whose key restore() would refuse is left out, with what names it
    const auto kept = [this](int t) {
        return static_cast<std::size_t>(t) < prior_types_ || table_.key(t).size() <= PairTable::max_key_bytes;
    };
    for (std::size_t t = prior_types_; t < table_.size(); ++t)
        if (kept(static_cast<int>(t))) s.new_types.push_back(table_.key(static_cast<int>(t)));
    std::vector<std::pair<int, std::size_t>> alone(alone_count_.begin(), alone_count_.end());
    std::sort(alone.begin(), alone.end());
    for (const auto& [t, n] : alone)
        if (const auto iso = table_.isolated(t); iso && kept(t))
            s.isolated.push_back({table_.key(t), *iso, n});
    std::vector<std::pair<std::uint64_t, std::size_t>> pairs(pair_count_.begin(), pair_count_.end());
    std::sort(pairs.begin(), pairs.end());
    for (const auto& [id, n] : pairs) {
        const int row = static_cast<int>(id >> 32), col = static_cast<int>(id & 0xffffffffU);
        if (const auto r = table_.measured_ratio(row, col); r && kept(row) && kept(col))
            s.pairs.push_back({table_.key(row), table_.key(col), *r, n});
    }
    return s;
}

Status NetPairEstimator::restore(const State& s) {
    if (!pair_count_.empty() || !alone_count_.empty() || table_.size() != prior_types_)
        return make_error("the estimator has learned already");
    if (!s.new_types.empty() && prior_types_ + s.new_types.size() > settings_.max_types)
        return make_error(std::to_string(s.new_types.size()) + " types beyond the table's " +
                          std::to_string(prior_types_) + ": more than max_types " +
                          std::to_string(settings_.max_types));
    PairTable t = table_;
    for (std::size_t i = 0; i < s.new_types.size(); ++i) {
        const std::string& k = s.new_types[i];
        const std::string at = "types[" + std::to_string(i) + "]";
        if (k.empty() || k.size() > PairTable::max_key_bytes)
            return make_error(at + ": a key of " + std::to_string(k.size()) + " bytes (1 to " +
                              std::to_string(PairTable::max_key_bytes) + ")");
        if (t.find(k) != PairTable::unknown) return make_error(at + ": '" + k + "' twice");
        t.intern(k);
    }
    const auto count_ok = [](std::size_t n) { return n >= 1 && n <= max_count; };
    std::unordered_map<int, std::size_t> alone;
    for (std::size_t i = 0; i < s.isolated.size(); ++i) {
        const State::Isolated& e = s.isolated[i];
        const std::string at = "isolated[" + std::to_string(i) + "] '" + e.key.substr(0, 80) + "'";
        const int type = t.find(e.key);
        if (type == PairTable::unknown) return make_error(at + ": not a type of the table");
        if (!std::isfinite(e.samples_per_s) || !(e.samples_per_s > 0.0))
            return make_error(at + ": speed " + std::to_string(e.samples_per_s) +
                              " is not finite and positive");
        if (!count_ok(e.observations)) return make_error(at + ": observations out of range");
        if (!alone.emplace(type, e.observations).second) return make_error(at + ": twice");
        t.set_isolated(type, e.samples_per_s);
    }
    std::unordered_map<std::uint64_t, std::size_t> pairs;
    for (std::size_t i = 0; i < s.pairs.size(); ++i) {
        const State::Pair& p = s.pairs[i];
        const std::string at = "pairs[" + std::to_string(i) + "] '" + p.row.substr(0, 80) + "' beside '" +
                               p.col.substr(0, 80) + "'";
        const int row = t.find(p.row), col = t.find(p.col);
        if (row == PairTable::unknown || col == PairTable::unknown)
            return make_error(at + ": not a type of the table");
        if (!std::isfinite(p.ratio) || !(p.ratio > 0.0) || p.ratio > 1.0)
            return make_error(at + ": ratio " + std::to_string(p.ratio) + " is not in (0, 1]");
        if (!count_ok(p.observations)) return make_error(at + ": observations out of range");
        if (!pairs.emplace(pair_id(row, col), p.observations).second) return make_error(at + ": twice");
        t.set_ratio(row, col, p.ratio);
    }
    t.fit_factors();
    table_ = std::move(t);
    pair_count_ = std::move(pairs);
    alone_count_ = std::move(alone);
    return {};
}

void NetPairEstimator::observe_alone(const std::string& k, double samples_per_s) {
    if (!(samples_per_s > 0.0) || !std::isfinite(samples_per_s)) return;
    if (table_.find(k) == PairTable::unknown && table_.size() >= settings_.max_types) return;
    const int t = table_.intern(k);
    std::size_t& n = alone_count_[t];
    ++n;
    const auto prior = table_.isolated(t);
    const double w = std::max(1.0 / static_cast<double>(n + (prior ? 1 : 0)), settings_.min_weight);
    table_.set_isolated(t, prior ? (1.0 - w) * *prior + w * samples_per_s : samples_per_s);
}

std::size_t NetPairEstimator::observations(const std::string& row, const std::string& col) const {
    const int r = table_.find(row), c = table_.find(col);
    if (r == PairTable::unknown || c == PairTable::unknown) return 0;
    const auto it = pair_count_.find(pair_id(r, c));
    return it == pair_count_.end() ? 0 : it->second;
}

bool NetPairEstimator::observe_shared(const std::string& k, const std::vector<std::string>& sharer_keys,
                                      double samples_per_s) {
    const auto iso = table_.isolated(table_.find(k));
    if (!iso || sharer_keys.empty() || !(samples_per_s > 0.0)) return false;
    return observe_ratio(k, sharer_keys, samples_per_s / *iso);
}

bool NetPairEstimator::observe_ratio(const std::string& k, const std::vector<std::string>& sharer_keys,
                                     double ratio) {
    if (sharer_keys.empty() || !(ratio > 0.0) || ratio > settings_.max_ratio) return false;
    std::size_t fresh = table_.find(k) == PairTable::unknown ? 1 : 0;
    for (const auto& s : sharer_keys) fresh += table_.find(s) == PairTable::unknown ? 1 : 0;
    if (fresh > 0 && table_.size() + fresh > settings_.max_types) return false;
    const int t = table_.intern(k);
    const double observed = 1.0 / std::min(ratio, 1.0) - 1.0;  // total stretch
    std::vector<int> cols;
    std::vector<double> current;
    double predicted = 0.0;
    for (const auto& s : sharer_keys) {
        cols.push_back(table_.intern(s));
        current.push_back(table_.stretch(t, cols.back()));
        predicted += current.back();
    }
    for (std::size_t i = 0; i < cols.size(); ++i) {
        // One sharer: the observation is the pair's stretch. Several: the share of it this pair
        // is currently believed to cause (equal shares when all are believed harmless).
        const double target = cols.size() == 1  ? observed
                              : predicted > 0.0 ? observed * current[i] / predicted
                                                : observed / static_cast<double>(cols.size());
        std::size_t& n = pair_count_[pair_id(t, cols[i])];
        ++n;
        const bool had = table_.measured_ratio(t, cols[i]).has_value();
        double w = std::max(1.0 / static_cast<double>(n + (had ? 1 : 0)), settings_.min_weight);
        if (cols.size() > 1) w /= static_cast<double>(cols.size());
        const double x = (1.0 - w) * current[i] + w * target;
        table_.set_ratio(t, cols[i], 1.0 / (1.0 + x));
    }
    table_.fit_factors();
    return true;
}

}  // namespace explsched::net
