// Over 400 lines: one admission state machine (submit, admit, complete, expire) over one client table.
#include "core/device/kernel_admission.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/base/hash.hpp"

namespace explsched {

namespace {

constexpr double kEps = 1e-9;
// A tracked kernel is declared lost after this many expected durations plus the configured
// grace: completions are host callbacks and may lag the GPU by a few milliseconds.
constexpr std::uint64_t kLostFactor = 4;
// Successor tables are bounded: a job that never repeats its kernels must not grow memory.
constexpr std::size_t kMaxSuccessors = 1 << 16;
// So is the in-flight list of a client whose completions never come (untracked launches far
// faster than their estimated durations): the oldest entries are dropped as expired.
constexpr std::size_t kMaxInflight = 4096;
// Requests queued per client, and streams remembered per client: a client chooses how many it
// posts and which stream handles it names, so both are bounded.
constexpr std::size_t kMaxQueued = 4096;
constexpr std::size_t kMaxStreams = 1024;

std::uint64_t context_key(std::uint64_t prev, std::uint64_t last) { return hash_combine(prev, last); }

}  // namespace

Status validate(const AdmissionConfig& c) {
    if (!(c.sm_cap > 0.0) || !std::isfinite(c.sm_cap))
        return make_error("admission sm_cap: " + std::to_string(c.sm_cap) + " is not a positive SM count");
    if (!(c.bw_cap > 0.0) || !std::isfinite(c.bw_cap))
        return make_error("admission bw_cap: " + std::to_string(c.bw_cap) +
                          " is not a positive bandwidth fraction");
    if (c.be_budget_ns == 0) return make_error("admission be_budget_ns: must be positive");
    if (c.lookahead_kernels == 0) return make_error("admission lookahead_kernels: must be positive");
    return {};
}

KernelAdmission::KernelAdmission(AdmissionConfig config) : config_(config) {}

void KernelAdmission::set_client(std::uint32_t client, double priority) {
    clients_[client].priority = priority;
}

void KernelAdmission::remove_client(std::uint32_t client) { clients_.erase(client); }

double KernelAdmission::top_priority() const {
    double top = -std::numeric_limits<double>::infinity();
    for (const auto& [id, c] : clients_) top = std::max(top, c.priority);
    return top;
}

bool KernelAdmission::protected_client(const Client& c) const { return c.priority >= top_priority() - kEps; }

bool KernelAdmission::is_protected(std::uint32_t client) const {
    auto it = clients_.find(client);
    return it != clients_.end() && protected_client(it->second);
}

void KernelAdmission::learn_sequence(Client& c, const AdmissionRequest& r) {
    if (c.has_last) {
        if (c.successors.size() >= kMaxSuccessors) c.successors.clear();
        c.successors[context_key(c.prev_key, c.last_key)] = Successor{r.key, r.demand};
    }
    c.prev_key = c.last_key;
    c.last_key = r.key;
    c.has_last = true;
}

void KernelAdmission::start(Client& c, const AdmissionRequest& r, std::uint64_t now_ns) {
    Inflight k;
    k.seq = r.seq;
    k.stream = r.stream;
    k.key = r.key;
    k.demand = r.demand;
    k.admitted_ns = now_ns;
    k.tracked = r.tracked;
    if (c.inflight.size() >= kMaxInflight) {
        c.inflight.pop_front();
        c.stats.expired += 1;
    }
    c.inflight.push_back(k);
    c.stats.admitted += 1;
    c.last_activity_ns = std::max(c.last_activity_ns, now_ns);
}

void KernelAdmission::submit(const AdmissionRequest& r) {
    auto it = clients_.find(r.client);
    if (it == clients_.end()) return;
    Client& c = it->second;
    c.stats.submitted += 1;
    c.last_activity_ns = std::max(c.last_activity_ns, r.submitted_ns);
    if (c.queue.size() >= kMaxQueued) {
        c.stats.expired += 1;  // never granted: the client's own wait times out and fails open
        return;
    }
    learn_sequence(c, r);
    c.queue.push_back(Queued{r, false});
}

void KernelAdmission::note_running(const AdmissionRequest& r, std::uint64_t now_ns) {
    auto it = clients_.find(r.client);
    if (it == clients_.end()) return;
    Client& c = it->second;
    c.stats.submitted += 1;
    learn_sequence(c, r);
    start(c, r, now_ns);
}

KernelAdmission::WindowDemand KernelAdmission::inflight_demand(const Client& c, std::uint64_t now_ns,
                                                               std::uint64_t window_ns) {
    const std::uint64_t window_end = now_ns + window_ns;
    struct StreamWalk {
        std::uint64_t stream;
        std::uint64_t t;
        double sms;
        double bw;
    };
    std::vector<StreamWalk> walks;
    for (const Inflight& k : c.inflight) {
        auto w = std::find_if(walks.begin(), walks.end(),
                              [&](const StreamWalk& s) { return s.stream == k.stream; });
        if (w == walks.end()) {
            std::uint64_t t0 = k.admitted_ns;
            if (auto d = c.stream_done_ns.find(k.stream); d != c.stream_done_ns.end())
                t0 = std::max(t0, d->second);
            walks.push_back(StreamWalk{k.stream, t0, 0.0, 0.0});
            w = walks.end() - 1;
        }
        const std::uint64_t begin = std::max(w->t, k.admitted_ns);
        if (begin < window_end) {
            w->sms = std::max(w->sms, k.demand.sms);
            w->bw = std::max(w->bw, k.demand.bw);
        }
        // A kernel past its expected end is still running: it ends "now" at the earliest.
        w->t = std::max(begin + k.demand.duration_ns, now_ns);
    }
    // Streams run concurrently; within a stream only one kernel runs at a time.
    WindowDemand d;
    d.until_ns = now_ns;
    for (const StreamWalk& w : walks) {
        d.sms += w.sms;
        d.bw += w.bw;
        d.until_ns = std::max(d.until_ns, w.t);
    }
    return d;
}

void KernelAdmission::predict_client(const Client& c, std::uint64_t now_ns, std::uint64_t window_ns,
                                     ProtectedForecast& f) const {
    const std::uint64_t window_end = now_ns + window_ns;
    const WindowDemand queued = inflight_demand(c, now_ns, window_ns);
    if (!c.inflight.empty()) f.busy = true;
    double sms = queued.sms;
    double bw = queued.bw;
    const std::uint64_t known_until = queued.until_ns;

    const bool active =
        !c.inflight.empty() || (c.has_last && now_ns < c.last_activity_ns + config_.protected_idle_ns);
    std::uint64_t covered = window_ns;
    if (!active) {
        // Idle: its next request may come at any moment and nothing says what it needs.
        covered = 0;
    } else if (known_until < window_end) {
        // Continue with the kernels this client launched after the same two kernels last time.
        // They follow the known ones on its stream, so they add to the per-stream maximum.
        std::uint64_t t = known_until;
        std::uint64_t prev = c.prev_key;
        std::uint64_t last = c.last_key;
        double seq_sms = 0.0;
        double seq_bw = 0.0;
        bool known = c.has_last;
        for (std::size_t i = 0; known && i < config_.lookahead_kernels && t < window_end; ++i) {
            auto s = c.successors.find(context_key(prev, last));
            if (s == c.successors.end()) {
                known = false;
                break;
            }
            seq_sms = std::max(seq_sms, s->second.demand.sms);
            seq_bw = std::max(seq_bw, s->second.demand.bw);
            t += std::max<std::uint64_t>(s->second.demand.duration_ns, 1);
            prev = last;
            last = s->second.key;
        }
        if (t < window_end) covered = t - now_ns;
        sms = std::max(sms, seq_sms);
        bw = std::max(bw, seq_bw);
    }
    f.sms += sms;
    f.bw += bw;
    f.covered_ns = std::min(f.covered_ns, covered);
}

ProtectedForecast KernelAdmission::forecast(std::uint64_t now_ns, std::uint64_t window_ns) const {
    ProtectedForecast f;
    f.covered_ns = window_ns;
    const double top = top_priority();
    for (const auto& [id, c] : clients_) {
        if (c.priority >= top - kEps) predict_client(c, now_ns, window_ns, f);
    }
    return f;
}

bool KernelAdmission::fits(const AdmissionRequest& r, std::uint64_t now_ns) const {
    const std::uint64_t window = std::max<std::uint64_t>(r.demand.duration_ns, 1);
    const ProtectedForecast f = forecast(now_ns, window);
    double be_sms = 0.0;
    double be_bw = 0.0;
    std::uint64_t be_outstanding = 0;
    const double top = top_priority();
    for (const auto& [id, c] : clients_) {
        if (c.priority >= top - kEps || c.inflight.empty()) continue;
        const WindowDemand d = inflight_demand(c, now_ns, window);
        be_sms += d.sms;
        be_bw += d.bw;
        for (const Inflight& k : c.inflight) be_outstanding += k.demand.duration_ns;
    }
    if (be_sms + f.sms + r.demand.sms > config_.sm_cap + kEps) return false;
    if (be_bw + f.bw + r.demand.bw > config_.bw_cap + kEps) return false;
    if (f.covered_ns < window) {
        // Part of the window is unpredictable: bound the BE work a protected kernel could meet.
        if (be_outstanding == 0) {
            if (r.demand.duration_ns > config_.be_budget_ns && f.busy) return false;
        } else if (be_outstanding + r.demand.duration_ns > config_.be_budget_ns) {
            return false;
        }
    }
    return true;
}

void KernelAdmission::admit(std::uint64_t now_ns, std::vector<Grant>& out) {
    auto grant = [&](Client& c, std::uint32_t id) {
        const AdmissionRequest r = c.queue.front().request;
        c.queue.pop_front();
        start(c, r, now_ns);
        const std::uint64_t waited = now_ns > r.submitted_ns ? now_ns - r.submitted_ns : 0;
        c.stats.wait_ns_total += waited;
        c.stats.wait_ns_max = std::max(c.stats.wait_ns_max, waited);
        out.push_back(Grant{id, r.seq, waited});
    };

    const double top = top_priority();
    std::vector<std::pair<std::uint32_t, Client*>> be;
    for (auto& [id, c] : clients_) {
        if (c.queue.empty()) continue;
        if (c.priority >= top - kEps) {
            while (!c.queue.empty()) grant(c, id);
        } else {
            be.emplace_back(id, &c);
        }
    }
    // Higher priority first; among equals the longest-waiting head first.
    std::sort(be.begin(), be.end(), [](const auto& a, const auto& b) {
        if (a.second->priority != b.second->priority) return a.second->priority > b.second->priority;
        const auto ta = a.second->queue.front().request.submitted_ns;
        const auto tb = b.second->queue.front().request.submitted_ns;
        return ta != tb ? ta < tb : a.first < b.first;
    });
    bool blocked = false;
    double blocked_priority = 0.0;
    for (auto& [id, c] : be) {
        // No lower-priority kernel may take the room a blocked higher-priority one waits for;
        // peers of equal priority may (they do not outrank each other).
        if (blocked && c->priority < blocked_priority - kEps) break;
        while (!c->queue.empty()) {
            if (!fits(c->queue.front().request, now_ns)) {
                Queued& q = c->queue.front();
                if (!q.counted_held) {
                    q.counted_held = true;
                    c->stats.held += 1;
                }
                if (!blocked) blocked_priority = c->priority;
                blocked = true;
                break;
            }
            grant(*c, id);
        }
    }
}

std::optional<Completion> KernelAdmission::complete(std::uint32_t client, std::uint64_t seq,
                                                    std::uint64_t now_ns) {
    auto it = clients_.find(client);
    if (it == clients_.end()) return std::nullopt;
    Client& c = it->second;
    auto k =
        std::find_if(c.inflight.begin(), c.inflight.end(), [&](const Inflight& f) { return f.seq == seq; });
    if (k == c.inflight.end()) return std::nullopt;
    std::uint64_t begin = k->admitted_ns;
    if (auto d = c.stream_done_ns.find(k->stream); d != c.stream_done_ns.end())
        begin = std::max(begin, d->second);
    if (c.stream_done_ns.size() >= kMaxStreams) c.stream_done_ns.clear();
    c.stream_done_ns[k->stream] = std::max(now_ns, begin);
    const Completion done{now_ns > begin ? now_ns - begin : 0, k->key};
    const std::uint64_t stream = k->stream;
    c.inflight.erase(k);
    c.stats.completed += 1;
    // A stream runs its kernels in order: everything launched on it before this one is done too
    // (launches whose completion was not tracked, or whose report was lost).
    for (auto e = c.inflight.begin(); e != c.inflight.end();) {
        if (e->stream == stream && e->seq < seq) {
            e = c.inflight.erase(e);
            c.stats.completed += 1;
        } else {
            ++e;
        }
    }
    c.last_activity_ns = std::max(c.last_activity_ns, now_ns);
    return done;
}

// Expected end of each in-flight kernel: kernels of one stream run one after another, so a
// kernel starts when it was admitted or when the one before it on its stream is expected to end.
std::vector<std::uint64_t> KernelAdmission::expected_ends(const Client& c) {
    std::vector<std::uint64_t> ends;
    ends.reserve(c.inflight.size());
    std::vector<std::pair<std::uint64_t, std::uint64_t>> stream_t;  // stream -> time it frees
    for (const Inflight& k : c.inflight) {
        auto it = std::find_if(stream_t.begin(), stream_t.end(),
                               [&](const auto& p) { return p.first == k.stream; });
        if (it == stream_t.end()) {
            std::uint64_t t0 = 0;
            if (auto d = c.stream_done_ns.find(k.stream); d != c.stream_done_ns.end()) t0 = d->second;
            stream_t.emplace_back(k.stream, t0);
            it = stream_t.end() - 1;
        }
        const std::uint64_t end = std::max(it->second, k.admitted_ns) + k.demand.duration_ns;
        it->second = end;
        ends.push_back(end);
    }
    return ends;
}

std::size_t KernelAdmission::expire(std::uint64_t now_ns) {
    std::size_t released = 0;
    for (auto& [id, c] : clients_) {
        if (c.inflight.empty()) continue;
        const std::vector<std::uint64_t> ends = expected_ends(c);
        std::size_t i = 0;
        for (auto k = c.inflight.begin(); k != c.inflight.end(); ++i) {
            const bool untracked_done = !k->tracked && now_ns >= ends[i];
            const bool lost = k->tracked && now_ns >= k->admitted_ns + kLostFactor * k->demand.duration_ns +
                                                          config_.lost_completion_ns;
            if (untracked_done || lost) {
                if (lost)
                    c.stats.expired += 1;
                else
                    c.stats.completed += 1;
                // The stream has reached this kernel's end: later kernels start from here.
                if (untracked_done) {
                    if (c.stream_done_ns.size() >= kMaxStreams) c.stream_done_ns.clear();
                    c.stream_done_ns[k->stream] = std::max(c.stream_done_ns[k->stream], ends[i]);
                }
                k = c.inflight.erase(k);
                ++released;
            } else {
                ++k;
            }
        }
    }
    return released;
}

std::optional<std::uint64_t> KernelAdmission::next_timer_ns(std::uint64_t now_ns) const {
    std::optional<std::uint64_t> next;
    auto consider = [&](std::uint64_t t) {
        if (t > now_ns && (!next || t < *next)) next = t;
    };
    const double top = top_priority();
    for (const auto& [id, c] : clients_) {
        if (c.priority >= top - kEps && c.inflight.empty() && c.has_last)
            consider(c.last_activity_ns + config_.protected_idle_ns);
        const std::vector<std::uint64_t> ends = expected_ends(c);
        std::size_t i = 0;
        for (const Inflight& k : c.inflight) {
            if (!k.tracked)
                consider(ends[i]);
            else
                consider(k.admitted_ns + kLostFactor * k.demand.duration_ns + config_.lost_completion_ns);
            ++i;
        }
    }
    return next;
}

AdmissionStats KernelAdmission::stats(std::uint32_t client) const {
    auto it = clients_.find(client);
    return it == clients_.end() ? AdmissionStats{} : it->second.stats;
}

std::size_t KernelAdmission::waiting() const {
    std::size_t n = 0;
    for (const auto& [id, c] : clients_) n += c.queue.size();
    return n;
}

std::size_t KernelAdmission::in_flight() const {
    std::size_t n = 0;
    for (const auto& [id, c] : clients_) n += c.inflight.size();
    return n;
}

double KernelAdmission::in_flight_sms() const {
    double s = 0.0;
    for (const auto& [id, c] : clients_)
        for (const Inflight& k : c.inflight) s += k.demand.sms;
    return s;
}

}  // namespace explsched
