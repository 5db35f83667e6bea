#include "spank/spank_options.hpp"

#include "spank/spank_api.hpp"

namespace explsched::spank {

RawOptions& recorded_options() {
    static RawOptions options;
    return options;
}

namespace {

enum OptionId { kExplore = 1, kMetric, kMaxSteps, kOnHopeless, kMilestones, kKernelSched, kModel, kLrDrops };

int record(int val, const char* optarg, int /*remote*/) {
    RawOptions& o = recorded_options();
    const std::string text = optarg != nullptr ? optarg : "";
    switch (val) {
        case kExplore:
            o.explore = text;
            break;
        case kMetric:
            o.metric = text;
            break;
        case kMaxSteps:
            o.max_steps = text;
            break;
        case kOnHopeless:
            o.on_hopeless = text;
            break;
        case kMilestones:
            o.milestones = text;
            break;
        case kKernelSched:
            o.kernel_sched = text;
            break;
        case kModel:
            o.model = text;
            break;
        case kLrDrops:
            o.lr_drops = text;
            break;
        default:
            return -1;
    }
    return 0;
}

// Slurm's struct has non-const char*; these strings are never written through.
char* s(const char* text) { return const_cast<char*>(text); }

struct spank_option kOptions[] = {
    {s("explore"), s("GROUP"),
     s("[explsched] run this job as a trial of the exploratory sweep GROUP: it is ranked by the "
       "training utility its reported curve predicts, and may be preempted or stopped"),
     1, kExplore, record},
    {s("explore-metric"), s("NAME[:min|max]"),
     s("[explsched] metric the trial reports and its direction (default loss:min; accuracy-like "
       "names default to max)"),
     1, kMetric, record},
    {s("explore-max-steps"), s("N"), s("[explsched] steps the trial runs to if never stopped"), 1, kMaxSteps,
     record},
    {s("explore-on-hopeless"), s("requeue|cancel|none"),
     s("[explsched] what to do when the trial cannot beat its sweep's best (default: site setting)"), 1,
     kOnHopeless, record},
    {s("explore-milestones"), s("LIST"),
     s("[explsched] ASHA-style rungs in steps, e.g. 100,300,900: used while a sweep has too "
       "little data to predict"),
     1, kMilestones, record},
    {s("explore-lr-drops"), s("LIST"),
     s("[explsched] steps at which the trial's learning rate drops (a step schedule), e.g. "
       "30000,60000: its curve is not judged final before the first one"),
     1, kLrDrops, record},
    {s("explore-model"), s("NAME"),
     s("[explsched] the trial's job type in the site's GPU throughput table, e.g. 'ResNet-50 (batch "
       "size 64)': its speed is scaled to the GPU type it runs or would run on"),
     1, kModel, record},
    {s("kernel-sched"), s("off|observe|enforce"),
     s("[explsched] device-level kernel scheduling for this job's steps on shared GPUs"), 1, kKernelSched,
     record},
};

}  // namespace

int register_options(void* spank_handle) {
    auto sp = static_cast<spank_t>(spank_handle);
    for (auto& opt : kOptions) {
        const spank_err_t rc = spank_option_register(sp, &opt);
        if (rc != ESPANK_SUCCESS) {
            slurm_error("explsched: cannot register option --%s: %s", opt.name, spank_strerror(rc));
            return rc;
        }
    }
    return 0;
}

Result<ExploreSpec> validated_spec(const RawOptions& raw) {
    ExploreSpec spec;
    if (raw.explore) {
        auto g = parse_explore_group(*raw.explore);
        if (!g) return g.error();
        spec.group = *g;
    }
    if (raw.metric) {
        auto m = parse_explore_metric(*raw.metric);
        if (!m) return m.error();
        spec.metric = m->first;
        spec.direction = m->second;
    }
    if (raw.max_steps) {
        auto n = parse_explore_max_steps(*raw.max_steps);
        if (!n) return n.error();
        spec.max_steps = *n;
    }
    if (raw.on_hopeless) {
        auto a = parse_explore_on_hopeless(*raw.on_hopeless);
        if (!a) return a.error();
        spec.on_hopeless = *a;
    }
    if (raw.milestones) {
        auto l = parse_explore_milestones(*raw.milestones);
        if (!l) return l.error();
        spec.milestones = *l;
    }
    if (raw.kernel_sched) {
        auto k = parse_kernel_sched_option(*raw.kernel_sched);
        if (!k) return k.error();
        spec.kernel_sched = *k;
    }
    if (raw.model) {
        auto m = parse_explore_model(*raw.model);
        if (!m) return m.error();
        spec.model = *m;
    }
    if (raw.lr_drops) {
        auto l = parse_explore_lr_drops(*raw.lr_drops);
        if (!l) return l.error();
        spec.lr_drops = *l;
    }
    if (raw.metric && !raw.explore) return make_error("--explore-metric needs --explore=GROUP");
    if (Status st = validate_explore_spec(spec); !st) return st.error();
    return spec;
}

}  // namespace explsched::spank
