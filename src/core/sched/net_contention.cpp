#include "core/sched/net_contention.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace explsched::net {

Result<Rule> parse_rule(std::string_view text) {
    if (text == "link" || text == "link_additive" || text == "additive") return Rule::link_additive;
    if (text == "min" || text == "min_pairwise" || text == "deepshare") return Rule::min_pairwise;
    return make_error("explsched: contention rule: '" + std::string(text) + "' is not link or min");
}

const char* rule_name(Rule r) { return r == Rule::link_additive ? "link" : "min"; }

Result<std::vector<std::string>> expand_hostlist(std::string_view list) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < list.size()) {
        // one item: prefix[ranges]suffix? up to a top-level comma
        std::size_t j = i;
        int depth = 0;
        while (j < list.size() && (depth > 0 || list[j] != ',')) {
            if (list[j] == '[') ++depth;
            if (list[j] == ']') --depth;
            ++j;
        }
        const std::string_view item = list.substr(i, j - i);
        i = j + 1;
        if (item.empty()) continue;
        const auto open = item.find('[');
        if (open == std::string_view::npos) {
            out.emplace_back(item);
            continue;
        }
        const auto close = item.find(']', open);
        if (close == std::string_view::npos)
            return make_error("explsched: host list: '" + std::string(item) + "': no closing ]");
        const std::string prefix(item.substr(0, open));
        const std::string suffix(item.substr(close + 1));
        std::string_view ranges = item.substr(open + 1, close - open - 1);
        while (!ranges.empty()) {
            const auto comma = ranges.find(',');
            const std::string_view r = ranges.substr(0, comma);
            ranges = comma == std::string_view::npos ? std::string_view{} : ranges.substr(comma + 1);
            const auto dash = r.find('-');
            const std::string lo_s(r.substr(0, dash));
            const std::string hi_s(dash == std::string_view::npos ? r : r.substr(dash + 1));
            char* e1 = nullptr;
            char* e2 = nullptr;
            const long lo = std::strtol(lo_s.c_str(), &e1, 10);
            const long hi = std::strtol(hi_s.c_str(), &e2, 10);
            if (lo_s.empty() || hi_s.empty() || *e1 || *e2 || hi < lo || hi - lo > 100000)
                return make_error("explsched: host list: bad range '" + std::string(r) + "'");
            for (long v = lo; v <= hi; ++v) {
                std::string num = std::to_string(v);
                if (num.size() < lo_s.size()) num.insert(0, lo_s.size() - num.size(), '0');  // n[01-04]
                out.push_back(prefix + num + suffix);
            }
        }
    }
    return out;
}

Result<Topology> Topology::parse(std::string_view text) {
    Topology t;
    std::size_t start = 0;
    int line_no = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string line(text.substr(start, end - start));
        start = end + 1;
        ++line_no;
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        std::string name, nodes;
        bool upper = false;
        std::size_t p = 0;
        while (p < line.size()) {
            while (p < line.size() && std::isspace(static_cast<unsigned char>(line[p]))) ++p;
            std::size_t q = p;
            while (q < line.size() && !std::isspace(static_cast<unsigned char>(line[q]))) ++q;
            const std::string tok = line.substr(p, q - p);
            p = q;
            if (tok.empty()) continue;
            const auto eq = tok.find('=');
            const std::string k = eq == std::string::npos ? tok : tok.substr(0, eq);
            const std::string v = eq == std::string::npos ? "" : tok.substr(eq + 1);
            if (k == "SwitchName")
                name = v;
            else if (k == "Nodes")
                nodes = v;
            else if (k == "Switches")
                upper = true;
            else if (k != "LinkSpeed")
                return make_error("explsched: topology line " + std::to_string(line_no) + ": unknown key '" +
                                  k + "'");
        }
        if (name.empty()) continue;
        if (nodes.empty()) {
            if (!upper)
                return make_error("explsched: topology line " + std::to_string(line_no) + ": switch " + name +
                                  " has neither Nodes= nor Switches=");
            continue;
        }
        auto hosts = expand_hostlist(nodes);
        if (!hosts) return hosts.error();
        const int idx = static_cast<int>(t.switches.size());
        t.switches.push_back(name);
        for (const auto& h : *hosts) t.switch_of[h] = idx;
    }
    return t;
}

NetState::NetState(std::size_t node_count, std::vector<int> switch_of_node)
    : node_jobs_(node_count),
      node_version_(node_count, 0),
      appended_over_(node_count, 0),
      switch_of_node_(std::move(switch_of_node)) {
    int max_sw = -1;
    for (int s : switch_of_node_) max_sw = std::max(max_sw, s);
    uplink_jobs_.resize(static_cast<std::size_t>(max_sw + 1));
}

void NetState::uplinks_of(const int* nodes, std::size_t count, Uplinks& sws) const {
    sws.clear();
    if (uplink_jobs_.empty()) return;  // no leaf switch known
    for (std::size_t k = 0; k < count; ++k) {
        const auto i = static_cast<std::size_t>(nodes[k]);
        if (i < switch_of_node_.size() && switch_of_node_[i] >= 0) sws.push_back(switch_of_node_[i]);
    }
    std::sort(sws.begin(), sws.end());
    sws.erase(std::unique(sws.begin(), sws.end()), sws.end());
    if (sws.size() < 2) sws.clear();  // all under one switch: no uplink crossed
}

std::vector<int> NetState::uplinks_of(const std::vector<int>& nodes) const {
    Uplinks sws;
    uplinks_of(nodes.data(), nodes.size(), sws);
    return {sws.begin(), sws.end()};
}

namespace {

// splitmix64's finaliser: a well-mixed 64-bit value per input.
std::uint64_t mix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// What an entry adds to its link's version (XOR in, XOR out).
std::uint64_t entry_hash(const NetState::Entry& e) {
    return mix64((static_cast<std::uint64_t>(e.id) << 32) ^
                 (static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.type)) << 8) ^
                 static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.gpus)));
}

}  // namespace

void NetState::reserve(std::size_t jobs, const std::vector<std::uint32_t>& entries) {
    jobs_.reserve(jobs);
    changes_.reserve(4 * node_jobs_.size() + 1024);  // the log's bound (log_change)
    for (std::size_t v = 0; v < entries.size() && v < node_jobs_.size(); ++v)
        node_jobs_[v].reserve(entries[v]);
}

void NetState::log_change(const int* nodes, std::size_t count) {
    if (changes_.size() + count > 4 * node_jobs_.size() + 1024) {  // bounded: start afresh
        change_base_ += changes_.size();
        changes_.clear();
    }
    changes_.insert(changes_.end(), nodes, nodes + count);
}

bool NetState::changes_since(std::uint64_t seq, const int*& begin, const int*& end) const {
    if (seq < change_base_ || seq > change_seq()) return false;
    begin = changes_.data() + (seq - change_base_);
    end = changes_.data() + changes_.size();
    return true;
}

void NetState::add(std::uint32_t id, int type, int gpus, const std::vector<int>& nodes) {
    remove(id);
    if (nodes.size() < 2) return;  // single-node: no network traffic to share
    for (int n : nodes)            // a node the state does not have: the caller's mistake, not added
        if (n < 0 || static_cast<std::size_t>(n) >= node_jobs_.size()) return;
    Job& j = jobs_[id];
    j.type = type;
    j.gpus = gpus;
    j.nodes.assign(nodes.begin(), nodes.end());
    uplinks_of(nodes.data(), nodes.size(), j.uplinks);
    const Entry e{id, type, gpus};
    const std::uint64_t h = entry_hash(e);
    for (int n : j.nodes) {
        const auto v = static_cast<std::size_t>(n);
        appended_over_[v] = node_version_[v] + 1;
        node_jobs_[v].push_back(e);
        node_version_[v] ^= h;
    }
    for (int s : j.uplinks) {
        uplink_jobs_[static_cast<std::size_t>(s)].push_back(e);
        uplink_version_ ^= mix64(h ^ static_cast<std::uint64_t>(s));
    }
    log_change(nodes.data(), nodes.size());
}

void NetState::remove(std::uint32_t id) {
    const Job* j = jobs_.find(id);
    if (j == nullptr) return;
    auto drop = [id](std::vector<Entry>& v) {
        v.erase(std::remove_if(v.begin(), v.end(), [id](const Entry& e) { return e.id == id; }), v.end());
    };
    const std::uint64_t h = entry_hash({id, j->type, j->gpus});
    for (int n : j->nodes) {
        drop(node_jobs_[static_cast<std::size_t>(n)]);
        node_version_[static_cast<std::size_t>(n)] ^= h;
        appended_over_[static_cast<std::size_t>(n)] = 0;
    }
    for (int s : j->uplinks) {
        drop(uplink_jobs_[static_cast<std::size_t>(s)]);
        uplink_version_ ^= mix64(h ^ static_cast<std::uint64_t>(s));
    }
    log_change(j->nodes.data(), j->nodes.size());
    jobs_.erase(id);
}

void NetState::clear() {
    change_base_ += changes_.size() + 1;  // every node changed: no log reaches back past this
    changes_.clear();
    for (auto& v : node_jobs_) v.clear();
    for (auto& v : node_version_) v = 0;  // empty, as at the start (a version names a content)
    for (auto& v : appended_over_) v = 0;
    uplink_version_ = 0;
    for (auto& v : uplink_jobs_) v.clear();
    jobs_.clear();
}

double ContentionModel::link_load(int type, const std::vector<NetState::Entry>& jobs, std::uint32_t self,
                                  bool extra, int extra_type) const {
    const bool additive = settings_.rule == Rule::link_additive;
    double load = 0.0;
    auto take = [&](double x) { load = additive ? load + x : std::max(load, x); };
    for (const NetState::Entry& e : jobs)
        if (e.id != self) take(table_.stretch(type, e.type));
    if (extra) take(table_.stretch(type, extra_type));
    return load;
}

double ContentionModel::to_ratio(double worst) const {
    return std::max(settings_.floor, 1.0 / (1.0 + worst));
}

double ContentionModel::ratio(const NetState& state, std::uint32_t id) const {
    const NetState::Job* j = state.job(id);
    if (!j) return 1.0;
    double worst = 0.0;
    for (int n : j->nodes) worst = std::max(worst, link_load(j->type, state.on_node(n), id, false, 0));
    for (int s : j->uplinks)
        worst = std::max(worst, link_load(j->type, state.on_uplink(s), id, false, 0) / state.uplink_capacity);
    return to_ratio(worst);
}

double ContentionModel::ratio_if_placed(const NetState& state, int type,
                                        const std::vector<int>& nodes) const {
    if (nodes.size() < 2) return 1.0;
    constexpr std::uint32_t none = 0xffffffffu;
    double worst = 0.0;
    for (int n : nodes) worst = std::max(worst, link_load(type, state.on_node(n), none, false, 0));
    for (int s : state.uplinks_of(nodes))
        worst = std::max(worst, link_load(type, state.on_uplink(s), none, false, 0) / state.uplink_capacity);
    return to_ratio(worst);
}

double ContentionModel::ratio_with_newcomer(const NetState& state, std::uint32_t id, int type,
                                            const std::vector<int>& nodes) const {
    const NetState::Job* j = state.job(id);
    if (!j) return 1.0;
    if (nodes.size() < 2) return ratio(state, id);
    const std::vector<int> new_uplinks = state.uplinks_of(nodes);
    auto contains = [](const std::vector<int>& v, int x) {
        return std::find(v.begin(), v.end(), x) != v.end();
    };
    double worst = 0.0;
    for (int n : j->nodes)
        worst = std::max(worst, link_load(j->type, state.on_node(n), id, contains(nodes, n), type));
    for (int s : j->uplinks)
        worst = std::max(worst, link_load(j->type, state.on_uplink(s), id, contains(new_uplinks, s), type) /
                                    state.uplink_capacity);
    return to_ratio(worst);
}

}  // namespace explsched::net
