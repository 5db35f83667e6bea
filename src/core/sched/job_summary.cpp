#include "core/sched/job_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/base/strings.hpp"
#include "core/sched/explore_spec.hpp"
#include "core/sched/priority.hpp"

namespace explsched {

namespace {

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

template <typename Enum, std::size_t N>
bool enum_from(std::string_view text, const Enum (&values)[N], Enum& out) {
    for (Enum v : values)
        if (text == to_string(v)) {
            out = v;
            return true;
        }
    return false;
}

constexpr TrialState kStates[] = {TrialState::unknown, TrialState::promising, TrialState::hopeless};
constexpr Decision kDecisions[] = {Decision::run,         Decision::wait,      Decision::keep,
                                   Decision::preemptable, Decision::terminate, Decision::requeue_hold,
                                   Decision::pause};

}  // namespace

std::string summary_line(const Assessment& a, double load, std::string_view trial) {
    std::string out = "explsched: ";
    if (!trial.empty()) {
        out += trial;
        out += ' ';
    }
    out += "state=";
    out += to_string(a.state);
    out += " decision=";
    out += to_string(a.decision);
    out += " utility=" + num(a.utility) + " price=" + num(a.price) + " load=" + num(load);
    const Prediction& p = a.prediction;
    if (std::isfinite(p.value) && std::isfinite(p.lower) && std::isfinite(p.upper) &&
        std::isfinite(p.horizon)) {
        out += " pred=" + num(p.value) + " [" + num(p.lower) + "," + num(p.upper) + "]@" + num(p.horizon);
    } else {
        out += " pred=none";
    }
    out += " points=" + std::to_string(p.observed);
    out += p.extrapolated ? " extrapolated=yes" : " extrapolated=no";
    if (p.widened > 1.0 && std::isfinite(p.widened)) out += " widened=" + num(p.widened);
    if (p.jump_allowance > 0.0 && std::isfinite(p.jump_allowance)) out += " jump=" + num(p.jump_allowance);
    if (p.track_lead > 0.0 && std::isfinite(p.track_lead) && std::isfinite(p.track_chance))
        out += " track=" + num(p.track_lead) + ":" + num(p.track_chance);
    out += " gpu=" + (a.gpu_type.empty() ? std::string("unknown") : a.gpu_type);
    out += " gpu_value=";
    out += to_string(a.gpu_value.how);
    if (!a.measured_gpu_type.empty()) out += ":" + num(a.gpu_value.ratio) + ":" + a.measured_gpu_type;
    out += " code=";
    out += to_string(a.reason.code);
    out += " reason=" + explain(a);
    return out;
}

Result<JobSummary> parse_summary_line(std::string_view line) {
    constexpr std::string_view kPrefix = "explsched: ";
    if (line.substr(0, kPrefix.size()) != kPrefix) return make_error("summary line: no 'explsched: ' prefix");
    std::string_view rest = line.substr(kPrefix.size());
    JobSummary s;
    // The reason runs to the end of the line; everything before it is space-separated key=value.
    const auto reason_at = rest.find(" reason=");
    if (reason_at == std::string_view::npos) return make_error("summary line: no reason=");
    s.reason = std::string(rest.substr(reason_at + 8));
    rest = rest.substr(0, reason_at);
    bool seen_state = false, seen_decision = false, seen_utility = false, seen_price = false;
    std::vector<std::string_view> items = split(rest, " ");
    for (std::size_t i = 0; i < items.size(); ++i) {
        std::string_view item = items[i];
        const auto eq = item.find('=');
        if (eq == std::string_view::npos) continue;  // the interval after pred= (handled there)
        const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
        auto bad = [&] {
            return make_error("summary line: bad " + std::string(key) + "='" + std::string(value) + "'");
        };
        if (key == "state") {
            if (!enum_from(value, kStates, s.state)) return bad();
            seen_state = true;
        } else if (key == "decision") {
            if (!enum_from(value, kDecisions, s.decision)) return bad();
            seen_decision = true;
        } else if (key == "utility" || key == "price" || key == "load") {
            auto d = parse_finite_double(value);
            if (!d) return bad();
            (key == "utility" ? s.utility : key == "price" ? s.price : s.load) = *d;
            (key == "utility" ? seen_utility : key == "price" ? seen_price : seen_price) = true;
        } else if (key == "pred" && value != "none") {
            auto v = parse_finite_double(value);
            if (!v || i + 1 >= items.size()) return bad();
            // "[lower,upper]@horizon"
            std::string_view iv = items[++i];
            const auto comma = iv.find(','), close = iv.find("]@");
            if (iv.empty() || iv.front() != '[' || comma == std::string_view::npos ||
                close == std::string_view::npos)
                return bad();
            auto lo = parse_finite_double(iv.substr(1, comma - 1));
            auto hi = parse_finite_double(iv.substr(comma + 1, close - comma - 1));
            auto h = parse_finite_double(iv.substr(close + 2));
            if (!lo || !hi || !h) return bad();
            s.prediction.value = *v;
            s.prediction.lower = *lo;
            s.prediction.upper = *hi;
            s.prediction.horizon = *h;
        } else if (key == "extrapolated") {
            if (value != "yes" && value != "no") return bad();
            s.prediction.extrapolated = value == "yes";
        } else if (key == "widened") {
            auto w = parse_finite_double(value);
            if (!w || *w < 1.0) return bad();
            s.prediction.widened = *w;
        } else if (key == "jump") {
            auto w = parse_finite_double(value);
            if (!w || *w < 0.0) return bad();
            s.prediction.jump_allowance = *w;
        } else if (key == "track") {
            // LEAD:CHANCE
            const auto colon = value.find(':');
            if (colon == std::string_view::npos) return bad();
            auto lead = parse_finite_double(value.substr(0, colon));
            auto chance = parse_finite_double(value.substr(colon + 1));
            if (!lead || !chance || !(*lead > 0.0) || *chance < 0.0 || *chance > 1.0) return bad();
            s.prediction.track_lead = *lead;
            s.prediction.track_chance = *chance;
        } else if (key == "gpu") {
            s.gpu_known = true;
            s.gpu_type = value == "unknown" ? std::string() : std::string(value);
        } else if (key == "gpu_value") {
            // CODE[:RATIO:MEASURED_ON]
            const std::vector<std::string_view> parts = split(value, ":");
            if ((parts.size() != 1 && parts.size() != 3) || !gpu_valuation_from(parts[0], s.gpu_value.how))
                return bad();
            if (parts.size() == 3) {
                auto r = parse_finite_double(parts[1]);
                if (!r || *r < 0.0 || parts[2].empty()) return bad();
                s.gpu_value.ratio = *r;
                s.measured_gpu_type = std::string(parts[2]);
            }
        } else if (key == "code") {
            ReasonCode code{};
            if (!reason_code_from(value, code)) return bad();
            s.reason_code = code;
        } else if (key == "model") {
            s.model = model_from_word(value);
        } else if (key == "points") {
            auto n = parse_uint64(value);
            if (!n) return bad();
            s.prediction.observed = static_cast<std::size_t>(*n);
        }
    }
    if (!seen_state) return make_error("summary line: no state=");
    if (!seen_decision) return make_error("summary line: no decision=");
    if (!seen_utility) return make_error("summary line: no utility=");
    if (!seen_price) return make_error("summary line: no price=");
    return s;
}

Assessment assessment_for_preemption(const TrialKey& key, uint32_t priority, const JobSummary* summary) {
    Assessment a;
    a.key = key;
    a.priority = priority;
    if (summary == nullptr) {
        a.exploratory = false;
        a.decision = Decision::keep;
        a.reason.code = ReasonCode::nonexploratory;
        return a;
    }
    a.exploratory = true;
    a.state = summary->state;
    a.decision = summary->decision;
    a.utility = summary->utility;
    a.price = summary->price;
    a.prediction = summary->prediction;
    if (summary->reason_code) a.reason.code = *summary->reason_code;
    a.explanation = summary->reason;  // the figures behind it are not in the line
    return a;
}

PriorityTerms priority_terms(const JobView& view, const Assessment& assessment, double now,
                             const EngineSettings& settings) {
    PriorityTerms t;
    t.age = settings.weight_age * age_factor(now - view.submit_time, settings.max_age_s);
    t.partition = settings.weight_partition * std::clamp(view.partition_factor, 0.0, 1.0);
    t.value = static_cast<double>(assessment.priority) - 1.0 + view.nice - t.age - t.partition;
    if (t.value < 0.0) t.value = 0.0;  // clamping at priority 1 can leave nothing for the value
    return t;
}

Assessment provisional_assessment(const JobView& view, double value, const EngineSettings& settings) {
    Assessment a;
    a.key = view.key;
    a.group = view.group;
    a.exploratory = !view.group.empty();
    a.priority = compose_priority(value, 0.0, view.partition_factor, view.nice, settings);
    a.state = TrialState::unknown;
    a.decision = view.state == JobState::running ? Decision::keep : Decision::wait;
    if (a.exploratory) {
        a.reason.code = ReasonCode::too_few_points;
        a.reason.a = static_cast<double>(view.points.size);
        a.reason.b = static_cast<double>(settings.min_points_to_fit);
    } else {
        a.reason.code = ReasonCode::nonexploratory;
    }
    return a;
}

}  // namespace explsched
