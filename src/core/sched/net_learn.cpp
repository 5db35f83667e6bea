#include "core/sched/net_learn.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>

#include "core/base/atomic_file.hpp"
#include "core/base/errno_text.hpp"
#include "core/base/fd.hpp"

namespace explsched::net {

namespace {

constexpr const char* kFormat = "explsched-net-learned";
constexpr int kVersion = 1;
constexpr int kMaxDepth = 8;  // the format nests 3 deep; a deeper file is refused before parsing

using json = nlohmann::json;

// The deepest nesting of arrays and objects in `text` (strings skipped), stopping past `limit`:
// nothing deeper reaches the parser.
int nesting(std::string_view text, int limit) {
    int depth = 0, deepest = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
            if (deepest > limit) break;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return deepest;
}

std::string hex64(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
    return buf;
}

// Field readers: an error names the field.
Result<const json*> field(const json& obj, const char* name, json::value_t kind, const std::string& at) {
    const auto it = obj.find(name);
    if (it == obj.end()) return make_error(at + ": no '" + name + "'");
    const bool ok = kind == json::value_t::number_float ? it->is_number() : it->type() == kind;
    if (!ok) return make_error(at + ": '" + name + "' is a " + it->type_name());
    return &*it;
}

Result<std::string> text_field(const json& obj, const char* name, const std::string& at) {
    auto f = field(obj, name, json::value_t::string, at);
    if (!f) return f.error();
    return (*f)->get<std::string>();
}

Result<double> number_field(const json& obj, const char* name, const std::string& at) {
    auto f = field(obj, name, json::value_t::number_float, at);
    if (!f) return f.error();
    return (*f)->get<double>();
}

Result<std::size_t> count_field(const json& obj, const char* name, const std::string& at) {
    auto f = field(obj, name, json::value_t::number_float, at);
    if (!f) return f.error();
    if (!(*f)->is_number_unsigned() || (*f)->get<std::uint64_t>() > NetPairEstimator::max_count)
        return make_error(at + ": '" + name + "' is not a count from 0 to 2^40");
    return static_cast<std::size_t>((*f)->get<std::uint64_t>());
}

Result<const json*> array_field(const json& obj, const char* name, std::size_t most, const std::string& at) {
    auto f = field(obj, name, json::value_t::array, at);
    if (!f) return f.error();
    if ((*f)->size() > most)
        return make_error(at + ": '" + name + "' has " + std::to_string((*f)->size()) +
                          " entries, more than " + std::to_string(most));
    return f;
}

std::string entry(const char* name, std::size_t i) {
    return std::string(name) + "[" + std::to_string(i) + "]";
}

// The estimator's part of the file, checked for shape (NetPairEstimator::restore checks values).
Result<NetPairEstimator::State> read_estimator_state(const json& doc, std::size_t max_types) {
    NetPairEstimator::State s;
    auto types = array_field(doc, "types", max_types, "state");
    if (!types) return types.error();
    for (std::size_t i = 0; i < (*types)->size(); ++i) {
        const json& k = (**types)[i];
        if (!k.is_string()) return make_error(entry("types", i) + ": not a string");
        s.new_types.push_back(k.get<std::string>());
    }
    auto isolated = array_field(doc, "isolated", max_types, "state");
    if (!isolated) return isolated.error();
    for (std::size_t i = 0; i < (*isolated)->size(); ++i) {
        const json& e = (**isolated)[i];
        const std::string at = entry("isolated", i);
        if (!e.is_object()) return make_error(at + ": not an object");
        auto key = text_field(e, "key", at);
        auto speed = number_field(e, "samples_per_s", at);
        auto n = count_field(e, "observations", at);
        if (!key) return key.error();
        if (!speed) return speed.error();
        if (!n) return n.error();
        s.isolated.push_back({*key, *speed, *n});
    }
    auto pairs = array_field(doc, "pairs", max_types * max_types, "state");
    if (!pairs) return pairs.error();
    for (std::size_t i = 0; i < (*pairs)->size(); ++i) {
        const json& e = (**pairs)[i];
        const std::string at = entry("pairs", i);
        if (!e.is_object()) return make_error(at + ": not an object");
        auto row = text_field(e, "row", at);
        auto col = text_field(e, "col", at);
        auto ratio = number_field(e, "ratio", at);
        auto n = count_field(e, "observations", at);
        if (!row) return row.error();
        if (!col) return col.error();
        if (!ratio) return ratio.error();
        if (!n) return n.error();
        s.pairs.push_back({*row, *col, *ratio, *n});
    }
    return s;
}

// The learner's own part: the per-type alone means, all checked.
Result<std::unordered_map<std::string, std::pair<double, std::size_t>>> read_alone(const json& doc,
                                                                                   std::size_t max_types) {
    std::unordered_map<std::string, std::pair<double, std::size_t>> alone;
    auto entries = array_field(doc, "alone", max_types, "state");
    if (!entries) return entries.error();
    for (std::size_t i = 0; i < (*entries)->size(); ++i) {
        const json& e = (**entries)[i];
        std::string at = entry("alone", i);
        if (!e.is_object()) return make_error(at + ": not an object");
        auto key = text_field(e, "key", at);
        auto speed = number_field(e, "steps_per_s", at);
        auto n = count_field(e, "observations", at);
        if (!key) return key.error();
        if (!speed) return speed.error();
        if (!n) return n.error();
        if (key->empty() || key->size() > PairTable::max_key_bytes)
            return make_error(at + ": a key of " + std::to_string(key->size()) + " bytes");
        at += " '" + key->substr(0, 80) + "'";
        if (!std::isfinite(*speed) || !(*speed > 0.0))
            return make_error(at + ": speed " + std::to_string(*speed) + " is not finite and positive");
        if (*n == 0) return make_error(at + ": observations out of range");
        if (!alone.emplace(*key, std::make_pair(*speed, *n)).second) return make_error(at + ": twice");
    }
    return alone;
}

}  // namespace

NetLearner::NetLearner(PairTable prior, LearnSettings settings)
    : settings_(settings), estimator_(std::move(prior), settings.estimator) {}

std::vector<std::string> NetLearner::round(const std::vector<RoundRunning>& running,
                                           const std::function<PointSpan(std::uint32_t)>& curve) {
    std::vector<std::string> lines;
    // who shares a node with whom
    std::unordered_map<int, std::vector<std::size_t>> on_node;
    for (std::size_t i = 0; i < running.size(); ++i)
        if (running[i].nodes.size() >= 2)
            for (int v : running[i].nodes) on_node[v].push_back(i);
    std::unordered_map<std::uint32_t, Tracked> next;
    for (std::size_t i = 0; i < running.size(); ++i) {
        const RoundRunning& r = running[i];
        const int n = static_cast<int>(r.nodes.size());
        if (n < 2 || r.gpus <= 0) continue;
        std::vector<std::uint32_t> company;
        std::vector<std::string> company_keys;
        for (int v : r.nodes)
            for (std::size_t j : on_node[v])
                if (j != i) company.push_back(running[j].id);
        std::sort(company.begin(), company.end());
        company.erase(std::unique(company.begin(), company.end()), company.end());
        for (std::uint32_t id : company)
            for (const RoundRunning& o : running)
                if (o.id == id)
                    company_keys.push_back(shape_key(o.model, o.gpus, static_cast<int>(o.nodes.size())));
        const PointSpan points = curve(r.id);
        const double last_step = points.size > 0 ? points.data[points.size - 1].step : -1.0;
        auto found = jobs_.find(r.id);
        Tracked t = found != jobs_.end() ? found->second : Tracked{};
        if (found == jobs_.end() || t.company != company) {
            // new, or its company changed: what it reported so far was under the old company
            t.company = company;
            t.settled_after = last_step;
            next.emplace(r.id, t);
            continue;
        }
        double sum = 0.0, newest = t.used_through;
        std::size_t count = 0;
        const double after = std::max(t.settled_after, t.used_through);
        for (std::size_t k = 0; k < points.size; ++k) {
            const CurvePoint& p = points.data[k];
            if (!(p.step > after) || !std::isfinite(p.throughput) || !(p.throughput > 0.0)) continue;
            sum += p.throughput;
            newest = std::max(newest, p.step);
            ++count;
        }
        if (count == 0) {
            next.emplace(r.id, t);
            continue;
        }
        t.used_through = newest;
        const double speed = sum / static_cast<double>(count);
        const std::string key = shape_key(r.model, r.gpus, n);
        char buf[160];
        if (company.empty()) {
            ++t.alone_n;
            t.alone += (speed - t.alone) / static_cast<double>(t.alone_n);
            // at most max_types means (keys are users' model names)
            auto it = type_alone_.find(key);
            if (it == type_alone_.end() && type_alone_.size() < settings_.estimator.max_types)
                it = type_alone_.emplace(key, std::make_pair(0.0, std::size_t{0})).first;
            if (it != type_alone_.end()) {
                auto& [mean, m] = it->second;
                ++m;
                mean += (speed - mean) / static_cast<double>(m);
            }
            std::snprintf(buf, sizeof buf, "JobId=%u %s alone: %.4g steps/s", r.id, key.c_str(), speed);
            lines.emplace_back(buf);
            ++observations_;
        } else {
            double alone = t.alone;
            if (!(alone > 0.0))
                if (const auto it = type_alone_.find(key); it != type_alone_.end()) alone = it->second.first;
            if (alone > 0.0) {
                const double ratio = std::max(settings_.floor, speed / alone);
                if (estimator_.observe_ratio(key, company_keys, ratio)) {
                    std::string names;
                    for (const auto& k : company_keys) names += (names.empty() ? "" : " ") + k;
                    std::snprintf(buf, sizeof buf, "JobId=%u %s beside %.80s: %.2f of alone", r.id,
                                  key.c_str(), names.c_str(), speed / alone);
                    lines.emplace_back(buf);
                    ++observations_;
                }
            }
        }
        next.emplace(r.id, t);
    }
    jobs_ = std::move(next);
    return lines;
}

std::string NetLearner::to_json() const {
    const NetPairEstimator::State s = estimator_.state();
    json doc = {
        {"format", kFormat},
        {"version", kVersion},
        {"prior",
         {{"fingerprint", hex64(estimator_.prior_fingerprint())}, {"types", estimator_.prior_types()}}},
        {"types", s.new_types},
        {"isolated", json::array()},
        {"pairs", json::array()},
        {"alone", json::array()},
        {"observations", observations_}};
    for (const auto& e : s.isolated)
        doc["isolated"].push_back(
            {{"key", e.key}, {"samples_per_s", e.samples_per_s}, {"observations", e.observations}});
    for (const auto& p : s.pairs)
        doc["pairs"].push_back(
            {{"row", p.row}, {"col", p.col}, {"ratio", p.ratio}, {"observations", p.observations}});
    std::vector<std::pair<std::string, std::pair<double, std::size_t>>> alone(type_alone_.begin(),
                                                                              type_alone_.end());
    std::sort(alone.begin(), alone.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, mean] : alone)
        if (key.size() <= PairTable::max_key_bytes)
            doc["alone"].push_back(
                {{"key", key}, {"steps_per_s", mean.first}, {"observations", mean.second}});
    // a user's model name may not be UTF-8: replaced, not thrown on (it names another type then)
    return doc.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<NetLearner::Restored> NetLearner::restore(std::string_view text) {
    try {
        if (observations_ != 0 || !type_alone_.empty()) return make_error("the learner has learned already");
        if (text.size() > max_state_bytes)
            return make_error(std::to_string(text.size()) + " bytes, more than " +
                              std::to_string(max_state_bytes >> 20) + " MiB");
        if (nesting(text, kMaxDepth) > kMaxDepth)
            return make_error("nested deeper than " + std::to_string(kMaxDepth) +
                              " levels: not a learned state");
        const json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
        if (doc.is_discarded()) return make_error("not valid JSON (truncated or garbage)");
        if (!doc.is_object()) return make_error("not a JSON object");
        auto format = text_field(doc, "format", "state");
        if (!format) return format.error();
        if (*format != kFormat)
            return make_error("format '" + format->substr(0, 80) + "', not '" + kFormat + "'");
        const auto version = doc.find("version");
        if (version == doc.end() || !version->is_number_integer() || version->get<std::int64_t>() != kVersion)
            return make_error("not version " + std::to_string(kVersion) + " of the format");
        auto prior = field(doc, "prior", json::value_t::object, "state");
        if (!prior) return prior.error();
        auto fingerprint = text_field(**prior, "fingerprint", "prior");
        if (!fingerprint) return fingerprint.error();
        auto prior_types = count_field(**prior, "types", "prior");
        if (!prior_types) return prior_types.error();
        if (*fingerprint != hex64(estimator_.prior_fingerprint()) ||
            *prior_types != estimator_.prior_types()) {
            Restored other;
            other.other_prior = true;
            return other;
        }
        auto state = read_estimator_state(doc, settings_.estimator.max_types);
        if (!state) return state.error();
        auto alone = read_alone(doc, settings_.estimator.max_types);
        if (!alone) return alone.error();
        auto observations = count_field(doc, "observations", "state");
        if (!observations) return observations.error();
        // all of it checked: the estimator checks its part before changing anything
        if (Status st = estimator_.restore(*state); !st) return st.error();
        type_alone_ = std::move(alone).value();
        observations_ = *observations;
        Restored r;
        r.types = state->new_types.size();
        r.pairs = state->pairs.size();
        r.observations = observations_;
        return r;
    } catch (const std::exception& e) {
        return make_error(std::string("unreadable: ") + e.what());
    }
}

Result<std::optional<NetLearner::Restored>> load_state(NetLearner& learner, const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (!fd.valid()) {
        if (errno == ENOENT) return std::optional<NetLearner::Restored>();
        return make_error("cannot open: " + errno_text(errno));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return make_error("fstat: " + errno_text(errno));
    if (!S_ISREG(st.st_mode)) return make_error("not a regular file");
    const std::size_t cap = NetLearner::max_state_bytes;
    if (static_cast<std::uint64_t>(st.st_size) > cap)
        return make_error(std::to_string(st.st_size) + " bytes, more than " + std::to_string(cap >> 20) +
                          " MiB");
    std::string text;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return make_error("reading: " + errno_text(errno));
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > cap) return make_error("more than " + std::to_string(cap >> 20) + " MiB");
    }
    auto r = learner.restore(text);
    if (!r) return r.error();
    return std::optional<NetLearner::Restored>(*r);
}

Status save_state(const NetLearner& learner, const std::string& path) {
    std::string text;
    try {
        text = learner.to_json();
    } catch (const std::exception& e) {
        return make_error(std::string("serialising: ") + e.what());
    }
    if (text.size() > NetLearner::max_state_bytes)
        return make_error("the state is " + std::to_string(text.size()) +
                          " bytes, more than a reader accepts");
    return write_file_atomically(path, text);
}

}  // namespace explsched::net
