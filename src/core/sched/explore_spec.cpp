#include "core/sched/explore_spec.hpp"

#include <iterator>

#include "core/base/strings.hpp"

namespace explsched {

std::string_view to_string(MetricDirection direction) {
    return direction == MetricDirection::min ? "min" : "max";
}

namespace {

bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
}

bool valid_name(std::string_view text, size_t max_len) {
    if (text.empty() || text.size() > max_len) return false;
    if (text.front() == '-' || text.front() == '.') return false;
    for (char c : text)
        if (!name_char(c)) return false;
    return true;
}

Error option_error(std::string_view option, std::string_view value, std::string_view why) {
    return make_error("--" + std::string(option) + ": '" + printable_excerpt(value) + "' " +
                      std::string(why));
}

constexpr uint64_t kMaxSteps = 1000000000000ULL;  // 1e12: beyond any real training run

}  // namespace

Result<std::string> parse_explore_group(std::string_view text) {
    if (!valid_name(text, 64))
        return option_error("explore", text,
                            "is not a valid group name (1-64 characters of A-Z a-z 0-9 _ - ., "
                            "not starting with - or .)");
    return std::string(text);
}

Result<std::pair<std::string, MetricDirection>> parse_explore_metric(std::string_view text) {
    std::string_view name = text;
    MetricDirection direction = MetricDirection::min;
    if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
        name = text.substr(0, colon);
        const std::string_view dir = text.substr(colon + 1);
        if (dir == "min")
            direction = MetricDirection::min;
        else if (dir == "max")
            direction = MetricDirection::max;
        else
            return option_error("explore-metric", text, "has a direction that is not min or max");
    } else if (name == "accuracy" || name == "acc" || name == "top1" || name == "top5" ||
               name == "hit_rate" || name == "f1" || name == "bleu") {
        // Common names of metrics where higher is better; everything else defaults to min.
        direction = MetricDirection::max;
    }
    if (!valid_name(name, 64))
        return option_error("explore-metric", text,
                            "is not NAME[:min|max] (NAME: 1-64 characters of A-Z a-z 0-9 _ - .)");
    return std::make_pair(std::string(name), direction);
}

Result<uint64_t> parse_explore_max_steps(std::string_view text) {
    auto n = parse_uint64(text);
    if (!n || *n == 0 || *n > kMaxSteps)
        return option_error("explore-max-steps", text, "is not a step count in [1, 1e12]");
    return *n;
}

Result<HopelessAction> parse_explore_on_hopeless(std::string_view text) {
    auto a = parse_on_hopeless(text);
    if (!a) return option_error("explore-on-hopeless", text, "is not one of requeue, cancel, none");
    return *a;
}

namespace {

// A strictly increasing list of at most 32 step counts in [1, 1e12]; errors name `option`.
Result<std::vector<uint64_t>> parse_step_list(std::string_view option, std::string_view text,
                                              std::string_view example, std::string_view items) {
    std::vector<uint64_t> out;
    for (std::string_view item : split(text, ",")) {
        auto n = parse_uint64(trim(item));
        if (!n || *n == 0 || *n > kMaxSteps)
            return option_error(
                option, text,
                "is not a comma-separated list of step counts (e.g. " + std::string(example) + ")");
        if (!out.empty() && *n <= out.back()) return option_error(option, text, "is not strictly increasing");
        out.push_back(*n);
        if (out.size() > 32) return option_error(option, text, "has more than 32 " + std::string(items));
    }
    return out;
}

}  // namespace

Result<std::vector<uint64_t>> parse_explore_milestones(std::string_view text) {
    return parse_step_list("explore-milestones", text, "100,300,900", "rungs");
}

Result<std::vector<uint64_t>> parse_explore_lr_drops(std::string_view text) {
    return parse_step_list("explore-lr-drops", text, "30000,60000", "drops");
}

Result<KernelSchedMode> parse_kernel_sched_option(std::string_view text) {
    auto m = parse_kernel_sched_mode(text);
    if (!m) return option_error("kernel-sched", text, "is not one of off, observe, enforce");
    return *m;
}

Result<std::string> parse_explore_model(std::string_view text) {
    const auto alnum = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    };
    bool ok = !text.empty() && text.size() <= 96 && alnum(text.front()) && text.back() != ' ';
    for (char c : text) {
        if (!ok) break;
        ok = alnum(c) || c == ' ' || c == '_' || c == '-' || c == '.' || c == '(' || c == ')' || c == '+' ||
             c == '/' || c == ',';
    }
    if (!ok)
        return option_error("explore-model", text,
                            "is not a model name (1-96 characters of A-Z a-z 0-9 space _ - . ( ) + / ,"
                            " starting with a letter or digit, e.g. 'ResNet-50 (batch size 64)')");
    return std::string(text);
}

std::string model_word(std::string_view model) {
    std::string out(model);
    for (char& c : out)
        if (c == ' ') c = '~';
    return out;
}

std::string model_from_word(std::string_view word) {
    std::string out(word);
    for (char& c : out)
        if (c == '~') c = ' ';
    return out;
}

Status validate_explore_spec(const ExploreSpec& spec) {
    if (spec.exploratory()) {
        if (spec.max_steps && !spec.milestones.empty() && spec.milestones.back() > *spec.max_steps)
            return make_error("--explore-milestones: last rung " + std::to_string(spec.milestones.back()) +
                              " is beyond --explore-max-steps=" + std::to_string(*spec.max_steps));
        if (spec.max_steps && !spec.lr_drops.empty() && spec.lr_drops.back() > *spec.max_steps)
            return make_error("--explore-lr-drops: last drop " + std::to_string(spec.lr_drops.back()) +
                              " is beyond --explore-max-steps=" + std::to_string(*spec.max_steps));
        return {};
    }
    // Options that only make sense for a trial.
    if (spec.max_steps) return make_error("--explore-max-steps needs --explore=GROUP");
    if (spec.on_hopeless) return make_error("--explore-on-hopeless needs --explore=GROUP");
    if (!spec.milestones.empty()) return make_error("--explore-milestones needs --explore=GROUP");
    if (!spec.model.empty()) return make_error("--explore-model needs --explore=GROUP");
    if (!spec.lr_drops.empty()) return make_error("--explore-lr-drops needs --explore=GROUP");
    return {};
}

std::vector<std::pair<std::string, std::string>> explore_env(const ExploreSpec& spec) {
    std::vector<std::pair<std::string, std::string>> env;
    if (spec.exploratory()) {
        env.emplace_back(kEnvGroup, spec.group);
        env.emplace_back(kEnvMetric, spec.metric + ":" + std::string(to_string(spec.direction)));
        if (spec.max_steps) env.emplace_back(kEnvMaxSteps, std::to_string(*spec.max_steps));
        if (spec.on_hopeless)
            env.emplace_back(kEnvOnHopeless, std::string(hopeless_option_text(*spec.on_hopeless)));
        if (!spec.milestones.empty()) {
            std::string list;
            for (uint64_t m : spec.milestones) list += (list.empty() ? "" : ",") + std::to_string(m);
            env.emplace_back(kEnvMilestones, list);
        }
        if (!spec.model.empty()) env.emplace_back(kEnvModel, spec.model);
        if (!spec.lr_drops.empty()) {
            std::string list;
            for (uint64_t d : spec.lr_drops) list += (list.empty() ? "" : ",") + std::to_string(d);
            env.emplace_back(kEnvLrDrops, list);
        }
    }
    if (spec.kernel_sched) env.emplace_back(kEnvKernelSched, std::string(to_string(*spec.kernel_sched)));
    return env;
}

Result<ExploreSpec> parse_explore_env(const std::vector<std::string_view>& env) {
    ExploreSpec spec;
    // The SPANK plugin writes each of our names once; a record with one twice was made by hand
    // (libslurm, no plugin): which one counts would be a guess, so the record is refused.
    static constexpr std::string_view kOurs[] = {kEnvGroup,      kEnvMetric,     kEnvMaxSteps,
                                                 kEnvOnHopeless, kEnvMilestones, kEnvKernelSched,
                                                 kEnvModel,      kEnvLrDrops};
    bool seen[std::size(kOurs)] = {};
    for (std::string_view item : env) {
        const auto eq = item.find('=');
        if (eq == std::string_view::npos) continue;
        const std::string_view name = item.substr(0, eq);
        const std::string_view value = item.substr(eq + 1);
        for (std::size_t k = 0; k < std::size(kOurs); ++k) {
            if (name != kOurs[k]) continue;
            if (seen[k])
                return make_error("job record variable " + std::string(name) + " appears more than once");
            seen[k] = true;
        }
        auto bad = [&](const Error& e) {
            return make_error("job record variable " + std::string(name) + ": " + e.message);
        };
        if (name == kEnvGroup) {
            auto g = parse_explore_group(value);
            if (!g) return bad(g.error());
            spec.group = *g;
        } else if (name == kEnvMetric) {
            auto m = parse_explore_metric(value);
            if (!m) return bad(m.error());
            spec.metric = m->first;
            spec.direction = m->second;
        } else if (name == kEnvMaxSteps) {
            auto n = parse_explore_max_steps(value);
            if (!n) return bad(n.error());
            spec.max_steps = *n;
        } else if (name == kEnvOnHopeless) {
            auto a = parse_explore_on_hopeless(value);
            if (!a) return bad(a.error());
            spec.on_hopeless = *a;
        } else if (name == kEnvMilestones) {
            auto l = parse_explore_milestones(value);
            if (!l) return bad(l.error());
            spec.milestones = *l;
        } else if (name == kEnvKernelSched) {
            auto m = parse_kernel_sched_option(value);
            if (!m) return bad(m.error());
            spec.kernel_sched = *m;
        } else if (name == kEnvModel) {
            auto m = parse_explore_model(value);
            if (!m) return bad(m.error());
            spec.model = *m;
        } else if (name == kEnvLrDrops) {
            auto l = parse_explore_lr_drops(value);
            if (!l) return bad(l.error());
            spec.lr_drops = *l;
        }
    }
    return spec;
}

}  // namespace explsched

namespace explsched {
std::string explore_trial_text(const ExploreSpec& spec) {
    std::string out =
        "group=" + spec.group + " metric=" + spec.metric + ":" + std::string(to_string(spec.direction));
    if (spec.max_steps) out += " max_steps=" + std::to_string(*spec.max_steps);
    if (!spec.model.empty()) out += " model=" + model_word(spec.model);
    if (!spec.lr_drops.empty()) {
        out += " lr_drops=";
        for (std::size_t i = 0; i < spec.lr_drops.size(); ++i)
            out += (i ? "," : "") + std::to_string(spec.lr_drops[i]);
    }
    return out;
}
}  // namespace explsched
