#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/sched/explore_spec.hpp"
#include "core/sched/gpu_count.hpp"
#include "core/sched/net_learn.hpp"
#include "core/sched/net_round.hpp"
#include "plugins/slurm_compat.hpp"
#include "plugins/slurmctld_shim.hpp"

// after slurmctld.h (the shim's)
#include "plugins/rerank/net_place.hpp"
#include "plugins/rerank/site_lift.hpp"

extern list_t* job_list __attribute__((weak));
extern time_t last_job_update __attribute__((weak));

namespace explsched::rerank {

namespace {

struct PlaceState {
    std::string table_path;
    std::shared_ptr<net::PairTable> table = std::make_shared<net::PairTable>();
    std::unordered_map<uint32_t, std::string> pins;  // job id -> the node list we required
    std::string topology_path;
    net::Topology topology;
    std::unordered_map<uint32_t, time_t> migrated;    // job id -> when we requeued it to move it
    std::unordered_map<uint32_t, std::string> notes;  // trial -> its placement reason
    // placement_learn=yes: the table learned from reports, its prior the loaded table; kept in
    // <StateSaveLocation>/explsched_net_learned.json across restarts
    std::unique_ptr<net::NetLearner> learner;
    bool learned_unsaved = false;  // observations since the last save
    time_t learned_saved = 0;      // when it was last saved (or tried)
    // the running jobs' state and node costs carried from round to round (a node whose jobs did not
    // change is not costed again; net::RoundCache)
    net::RoundCache costs;
    // the planner (placement_window > 1): when each pending job was first passed by a cheaper one
    // (it is overdue placement_pass_limit seconds later), and, in priority mode, the priorities
    // this round raised a placed job to (just above the highest job it passes), which the
    // ranking's next write-back keeps (placement_lift)
    std::unordered_map<uint32_t, time_t> passed_since;
    std::unordered_map<uint32_t, uint32_t> lifts;
};

constexpr std::string_view kNoteSep = "; placement: ";
PlaceState g_place;  // the re-ranking thread's alone

// site_factor mode: a job the planner places before a higher one, and what it adds to the job's
// site factor for that (site_lift.hpp).
struct SiteLift {
    int64_t submit = 0;   // the job instance
    uint32_t amount = 0;  // added to its site factor (accumulated while it keeps passing someone)
    uint32_t passes = 0;  // the job it passes (for the log)
};
// By job id, pending jobs only (each round replaces it). Written by the placement round (the
// re-ranking thread) and read by the site factor callbacks (multifactor's thread, submits), all
// under slurmctld's job write lock, which is what guards it.
std::unordered_map<uint32_t, SiteLift> g_site_lifts;

constexpr time_t kSaveEvery = 60;  // seconds between saves of the learned table

// The learned table's file under StateSaveLocation; empty when slurmctld has none.
std::string learned_path() {
    const char* dir = slurm_conf.state_save_location;
    if (dir == nullptr || *dir == '\0') return {};
    return std::string(dir) + "/explsched_net_learned.json";
}

// Saves what the learner learned since the last save: at most once per kSaveEvery unless `now`.
// Called without slurmctld's locks (a write and an fsync of a file of at most 4 MiB); a failure is
// logged, and learning and placement go on.
void save_learned(bool now) {
    if (!g_place.learner || !g_place.learned_unsaved) return;
    const time_t t = time(nullptr);
    if (!now && t - g_place.learned_saved < kSaveEvery) return;
    g_place.learned_saved = t;
    const std::string path = learned_path();
    if (path.empty()) return;
    if (Status st = net::save_state(*g_place.learner, path); !st) {
        error("%s: placement: saving the learned table: %s (learning goes on)", plugin_type,
              st.error().message.c_str());
        return;
    }
    g_place.learned_unsaved = false;
}

// A learner on the loaded table, with what an earlier slurmctld learned on the same table. A bad
// state file is set aside (renamed .bad) and learning starts from the loaded table.
void start_learner() {
    g_place.learner = std::make_unique<net::NetLearner>(*g_place.table);
    g_place.learned_unsaved = false;
    const std::string path = learned_path();
    if (path.empty()) return;
    auto r = net::load_state(*g_place.learner, path);
    if (!r) {
        error("%s: placement: %s: %s (starting from the loaded table)", plugin_type, path.c_str(),
              r.error().message.c_str());
        const std::string bad = path + ".bad";
        if (std::rename(path.c_str(), bad.c_str()) != 0)
            error("%s: placement: cannot rename %s to %s: %m", plugin_type, path.c_str(), bad.c_str());
        return;
    }
    if (!r->has_value()) return;
    const net::NetLearner::Restored& got = **r;
    if (got.other_prior) {
        info("%s: placement: %s: saved against another net_table; starting from the loaded table",
             plugin_type, path.c_str());
        return;
    }
    verbose(
        "%s: placement: %s: loaded the learned table: %zu types beyond net_table, %zu pairs learned, %zu "
        "observations",
        plugin_type, path.c_str(), got.types, got.pairs, got.observations);
}

// The learner goes (placement_learn=no, or a new prior): what it learned is saved first.
void stop_learner() {
    save_learned(true);
    g_place.learner.reset();
}

// The table named by the settings, loaded when the path changes; a bad file keeps the last one.
void sync_table(const Settings& s) {
    if (s.net_table == g_place.table_path) return;
    g_place.table_path = s.net_table;
    if (s.net_table.empty()) {
        g_place.table = std::make_shared<net::PairTable>();
        return;
    }
    auto t =
        net::PairTable::load_files(s.net_table + "/isolated_thp.csv", s.net_table + "/shared_thp_ratio.csv");
    if (!t) {
        error("%s: placement: %s (keeping the previous table)", plugin_type, t.error().message.c_str());
        return;
    }
    verbose("%s: placement: %s: %zu job types, %zu measured pairs", plugin_type, s.net_table.c_str(),
            t->size(), t->measured_pairs());
    g_place.table = std::make_shared<net::PairTable>(std::move(t).value());
    stop_learner();  // a new prior: learning starts over from it
}

// The leaf switches named by topology_file, read when the path changes; a bad file keeps the last.
void sync_topology(const Settings& s) {
    if (s.topology_file == g_place.topology_path) return;
    g_place.topology_path = s.topology_file;
    if (s.topology_file.empty()) {
        g_place.topology = net::Topology{};
        return;
    }
    std::ifstream in(s.topology_file);
    std::ostringstream text;
    text << in.rdbuf();
    auto t =
        in ? net::Topology::parse(text.str()) : Result<net::Topology>(make_error("cannot read the file"));
    if (!t) {
        error("%s: placement: topology_file %s: %s (keeping the previous one)", plugin_type,
              s.topology_file.c_str(), t.error().message.c_str());
        return;
    }
    verbose("%s: placement: %s: %zu leaf switches", plugin_type, s.topology_file.c_str(), t->switches.size());
    g_place.topology = std::move(t).value();
}

std::string model_of(const job_record_t* job) {
    auto spec = shim::job_explore_spec(job);
    if (spec && !spec->model.empty()) return spec->model;
    return job->name != nullptr ? job->name : "";
}

bool is_trial(const job_record_t* job) {
    auto spec = shim::job_explore_spec(job);
    return spec && spec->exploratory();
}

int gpus_of(const job_record_t* job, uint64_t nodes) {
    const uint64_t tasks = job->details != nullptr ? job->details->num_tasks : 1;
    const uint64_t g =
        job_gpus(job->tres_per_job ? job->tres_per_job : "", job->tres_per_node ? job->tres_per_node : "",
                 job->tres_per_task ? job->tres_per_task : "", nodes, tasks);
    return static_cast<int>(std::min<uint64_t>(g, 1u << 20));
}

// Ours: the required nodes are the ones we wrote (or, after a restart, the ones our
// SystemComment names).
bool pinned_by_us(const job_record_t* job) {
    const char* req = job->details->req_nodes;
    if (req == nullptr) return false;
    const auto it = g_place.pins.find(job->job_id);
    if (it != g_place.pins.end()) return it->second == req;
    const std::string mark = std::string("placement: nodes ") + req + ",";
    if (job->system_comment == nullptr) return false;
    // a job's own SystemComment, or a trial's ranking line with the note appended
    return std::strncmp(job->system_comment, mark.c_str(), mark.size()) == 0 ||
           std::strstr(job->system_comment, ("; " + mark).c_str()) != nullptr;
}

// A trial's ranking line with `note` appended in place of the one it carries (the ranking writes
// the line; until it has, the note waits for it: placement_note()).
void note_on_trial(job_record_t* job, const std::string& note) {
    auto& known = g_place.notes[job->job_id];
    if (known == note) return;
    known = note;
    if (job->system_comment == nullptr || std::strncmp(job->system_comment, "explsched: ", 11) != 0) return;
    std::string line = job->system_comment;
    if (const auto at = line.find(kNoteSep); at != std::string::npos) line.erase(at);
    shim::set_system_comment(job, line + "; " + note);
}

void require_nodes(job_record_t* job, const std::string& nodes) {
    xfree(job->details->req_nodes);
    FREE_NULL_BITMAP(job->details->req_node_bitmap);
    if (nodes.empty()) return;
    job->details->req_nodes = xstrdup(nodes.c_str());
    std::string copy = nodes;
    if (compat::node_names_bitmap(copy.data(), &job->details->req_node_bitmap) != 0) {
        xfree(job->details->req_nodes);
        FREE_NULL_BITMAP(job->details->req_node_bitmap);
    }
}

// The locked part: copy in, decide, write back. Answers whether a job changed.
// The nodes as the core sees them (node read lock held).
std::vector<net::RoundNode> collect_nodes() {
    std::vector<net::RoundNode> nodes;
    node_record_t* node = nullptr;
    for (int i = 0; (node = next_node(&i)); ++i) {
        const auto at = static_cast<std::size_t>(node->index);
        if (at >= nodes.size()) nodes.resize(at + 1, net::RoundNode{"", 0, false, -1});
        // GPUs only: slurmctld keeps a partly used node ALLOCATED (MIXED is made when reporting).
        nodes[at] = net::RoundNode{
            node->name, node->gres ? static_cast<int>(node_gpus(node->gres).count) : 0,
            !(IS_NODE_DOWN(node) || IS_NODE_DRAIN(node) || IS_NODE_FAIL(node) || IS_NODE_NO_RESPOND(node)),
            -1};
        nodes[at].free_cpus = static_cast<int>(node->cpus_efctv);
        if (slurm_conf.select_type_param & CR_MEMORY) {  // memory is a consumable: count it too
            const uint64_t mem =
                node->real_memory > node->mem_spec_limit ? node->real_memory - node->mem_spec_limit : 0;
            nodes[at].mem_mb = static_cast<int64_t>(std::min<uint64_t>(mem, INT64_MAX));
            nodes[at].free_mem_mb = nodes[at].mem_mb;
        }
        if (const auto sw = g_place.topology.switch_of.find(node->name);
            sw != g_place.topology.switch_of.end())
            nodes[at].leaf = sw->second;
    }
    return nodes;
}

// The running multi-node jobs (job read lock held). Every job holding nodes (running, suspended,
// completing) is also counted in `nodes`: its CPUs per node from its job_resources, and the GPUs
// of the jobs the round does not model (single-node ones) as busy_gpus; so a pin never names
// nodes whose GPUs or CPUs are taken.
std::vector<net::RoundRunning> collect_running(std::vector<net::RoundNode>& nodes) {
    const std::size_t node_count = nodes.size();
    std::vector<net::RoundRunning> running;
    list_itr_t* it = list_iterator_create(job_list);
    while (auto* job = static_cast<job_record_t*>(list_next(it))) {
        if (!(IS_JOB_RUNNING(job) || IS_JOB_SUSPENDED(job) || IS_JOB_COMPLETING(job)) ||
            job->node_bitmap == nullptr)
            continue;
        const bool modelled = IS_JOB_RUNNING(job) && job->node_cnt >= 2;
        net::RoundRunning r{
            job->job_id, model_of(job), gpus_of(job, std::max<uint32_t>(job->node_cnt, 1)), {}, 0};
        for (std::size_t v = 0; v < node_count; ++v)
            if (bit_test(job->node_bitmap, static_cast<bitoff_t>(v))) r.nodes.push_back(static_cast<int>(v));
        if (!modelled && !r.nodes.empty() && r.gpus > 0) {
            const int per = std::max(1, r.gpus / static_cast<int>(r.nodes.size()));
            for (int v : r.nodes) nodes[static_cast<std::size_t>(v)].busy_gpus += per;
        }
        // CPUs: job_resources lists the job's nodes in node order, cpus[i] for the i-th of them
        const job_resources_t* res = job->job_resrcs;
        if (res != nullptr && res->node_bitmap != nullptr && res->cpus != nullptr) {
            uint32_t i = 0;
            for (std::size_t v = 0; v < node_count && i < res->nhosts; ++v) {
                if (!bit_test(res->node_bitmap, static_cast<bitoff_t>(v))) continue;
                const int c = res->cpus[i];
                if (nodes[v].free_cpus >= 0) nodes[v].free_cpus = std::max(0, nodes[v].free_cpus - c);
                r.cpus_per_node = std::max(r.cpus_per_node, c);
                if (res->memory_allocated != nullptr && nodes[v].free_mem_mb >= 0) {
                    const auto m =
                        static_cast<int64_t>(std::min<uint64_t>(res->memory_allocated[i], INT64_MAX));
                    nodes[v].free_mem_mb = std::max<int64_t>(0, nodes[v].free_mem_mb - m);
                    r.mem_per_node_mb = std::max(r.mem_per_node_mb, m);
                }
                ++i;
            }
        }
        if (modelled) running.push_back(std::move(r));
    }
    list_iterator_destroy(it);
    return running;
}

// CPUs a pending job needs on each of its nodes.
int cpus_per_node(const job_record_t* job, uint32_t n) {
    const auto* d = job->details;
    const uint64_t spread = n > 0 ? (static_cast<uint64_t>(d->min_cpus) + n - 1) / n : d->min_cpus;
    return static_cast<int>(std::min<uint64_t>(std::max<uint64_t>(spread, d->pn_min_cpus), 1u << 20));
}

// Memory (MB) a pending job needs on each node when memory is a consumable (0 otherwise): per
// node, or per CPU x its CPUs per node; none asked (and no default): the whole node's, as Slurm
// gives it (-1).
int64_t mem_per_node(const job_record_t* job, int cpus) {
    if (!(slurm_conf.select_type_param & CR_MEMORY)) return 0;
    const uint64_t m = job->details->pn_min_memory;
    if (m == 0) return -1;
    const auto per = static_cast<uint64_t>(std::max(cpus, 1));
    const uint64_t base = m & ~MEM_PER_CPU;
    const uint64_t mb = !(m & MEM_PER_CPU) ? m : base > UINT64_MAX / per ? UINT64_MAX : base * per;
    return static_cast<int64_t>(std::min<uint64_t>(mb, INT64_MAX));
}

// One learning round (placement_learn=yes) on the running multi-node jobs the placement round
// just copied (without slurmctld's locks: the curves are the ranking's). Logs what it used. What
// it learns places from the next round on.
void learn(const std::vector<net::RoundRunning>& running, const std::function<PointSpan(uint32_t)>& curve) {
    const std::vector<std::string> lines = g_place.learner->round(running, curve);
    for (std::size_t i = 0; i < lines.size() && i < 8; ++i)
        verbose("%s: placement: learned %s", plugin_type, lines[i].c_str());
    if (lines.size() > 8)
        verbose("%s: placement: learned %zu more this round", plugin_type, lines.size() - 8);
    g_place.learned_unsaved = g_place.learned_unsaved || !lines.empty();
    save_learned(false);
}

// site_factor mode: the lift the job carries now (its priority has it in: multifactor computed it
// with the lifted site factor), 0 for another instance of the job id.
uint32_t site_lift_of(const job_record_t* job) {
    const auto it = g_site_lifts.find(job->job_id);
    return it != g_site_lifts.end() && it->second.submit == submit_of(job) ? it->second.amount : 0;
}

// How the round raises a placed job above the one it passes (job write lock held).
struct Lifting {
    Mode mode = Mode::priority;
    const RankFacts* facts = nullptr;
    std::unordered_map<uint32_t, uint32_t> priorities;  // priority mode: placement_lift's
    std::unordered_map<uint32_t, SiteLift> site;        // site_factor mode: the round's lifts
};

// priority mode: raised just above the job it passes, at once; the ranking's next write-back
// keeps it (placement_lift). Answers whether the priority changed.
bool lift_priority(job_record_t* job, const job_record_t* over, Lifting& lifting) {
    const uint32_t target = just_above(over->priority);
    bool changed = false;
    if (job->priority < target) {
        verbose("%s: JobId=%u placed before JobId=%u (less predicted loss per GPU): priority %u -> %u",
                plugin_type, job->job_id, over->job_id, job->priority, target);
        job->priority = target;
        changed = true;
    }
    lifting.priorities[job->job_id] = std::max(job->priority, target);
    return changed;
}

// site_factor mode: the amount that raises it just above the job it passes, on top of what it
// carries (site_lift.hpp); stored by apply_site_lifts once the round is done. An operator's site
// factor is not lifted.
void lift_site(const job_record_t* job, const job_record_t* over, Lifting& lifting) {
    if (lifting.facts->site_factor_kept(job)) return;
    const uint32_t amount = next_site_lift(site_lift_of(job), job->priority, over->priority);
    if (amount != 0) lifting.site[job->job_id] = SiteLift{submit_of(job), amount, over->job_id};
}

// site_factor mode: the round's lifts replace the last round's; each pending job whose lift
// changed (new, grown or dropped) has its priority recomputed by multifactor now (set_job_prio:
// priority_p_set calls site_factor_at_submit, which adds the lift), so that Slurm's scheduler
// sees it before multifactor's next cycle. Bounded: the jobs lifted this round or the last (each
// at most the round's pending jobs). Answers whether a priority was recomputed.
bool apply_site_lifts(std::unordered_map<uint32_t, SiteLift> next) {
    std::vector<uint32_t> changed;
    for (const auto& [id, l] : next)
        if (const auto o = g_site_lifts.find(id);
            o == g_site_lifts.end() || o->second.amount != l.amount || o->second.submit != l.submit)
            changed.push_back(id);
    for (const auto& [id, l] : g_site_lifts)
        if (next.count(id) == 0) changed.push_back(id);
    const std::unordered_map<uint32_t, SiteLift> last = std::exchange(g_site_lifts, std::move(next));
    bool recomputed = false;
    for (uint32_t id : changed) {
        job_record_t* job = find_job_record(id);
        if (job == nullptr || !IS_JOB_PENDING(job) || job->priority == 0 || job->direct_set_prio) continue;
        const uint32_t before = job->priority;
        set_job_prio(job);
        recomputed = true;
        const uint32_t lift = site_lift_of(job);
        if (lift != 0)
            verbose(
                "%s: JobId=%u placed before JobId=%u (less predicted loss per GPU): priority %u -> %u (site "
                "factor lifted by %u)",
                plugin_type, id, g_site_lifts.at(id).passes, before, job->priority, lift);
        else if (const auto o = last.find(id); o != last.end() && o->second.submit == submit_of(job))
            verbose("%s: JobId=%u passes nobody now: its site factor lift of %u dropped, priority %u -> %u",
                    plugin_type, id, o->second.amount, before, job->priority);
    }
    return recomputed;
}

// The priority a pending job is planned at: without our raise. A job the last round raised above
// the one it passes is still planned below it, else it would pass nobody now, lose the raise,
// and pass again the round after. site_factor mode: less its site lift; priority mode: while its
// priority is still the raise, the ranking's answer (the write-back keeps the larger of the two).
uint32_t planned_priority(const job_record_t* job, const Lifting& lifting) {
    if (lifting.mode == Mode::site_factor) return unlifted(job->priority, site_lift_of(job), 1);
    const auto raised = g_place.lifts.find(job->job_id);
    if (raised == g_place.lifts.end() || raised->second != job->priority) return job->priority;
    const uint32_t ranked = lifting.facts->ranked_priority(job);
    return ranked != 0 && ranked < job->priority ? ranked : job->priority;
}

// A pending multi-node job the round may place: not held, and its required nodes none or ours.
bool placeable(const job_record_t* job) {
    return IS_JOB_PENDING(job) && job->priority != 0 && job->details != nullptr &&
           job->details->min_nodes >= 2 && (job->details->req_nodes == nullptr || pinned_by_us(job));
}

// A job array's meta record with two or more tasks pending in it. Slurm copies its required nodes
// to every task it splits off when one starts (job_array_split), so it is never pinned itself: the
// round splits tasks off it and places each (split_tasks).
bool is_array_meta(const job_record_t* job) {
    return job->array_recs != nullptr && job->array_recs->task_id_bitmap != nullptr &&
           job->array_task_id == NO_VAL && job->array_recs->task_cnt >= 2;
}

// The pending job as the planner sees it.
net::RoundPending pending_of(const job_record_t* job, const std::vector<net::RoundNode>& nodes,
                             const Settings& settings, time_t now, const Lifting& lifting) {
    const uint32_t n = job->details->min_nodes;
    const int cpus = cpus_per_node(job, n);
    net::RoundPending p{job->job_id,
                        model_of(job),
                        gpus_of(job, n),
                        static_cast<int>(n),
                        static_cast<double>(planned_priority(job, lifting)),
                        std::vector<bool>(nodes.size(), true),
                        cpus,
                        mem_per_node(job, cpus)};
    // placement_pass_limit=0: nobody is passed (every job placed in priority order)
    p.overdue = settings.placement_pass_limit == 0;
    if (const auto since = g_place.passed_since.find(job->job_id); since != g_place.passed_since.end())
        p.overdue = p.overdue || now - since->second >= static_cast<time_t>(settings.placement_pass_limit);
    for (std::size_t v = 0; v < nodes.size(); ++v) {
        const auto b = static_cast<bitoff_t>(v);
        const bool in_part = job->part_ptr == nullptr || job->part_ptr->node_bitmap == nullptr ||
                             bit_test(job->part_ptr->node_bitmap, b);
        const bool excluded =
            job->details->exc_node_bitmap != nullptr && bit_test(job->details->exc_node_bitmap, b);
        p.allowed[v] = in_part && !excluded;
    }
    return p;
}

// Whether the round may split tasks off this meta record. Not where Slurm's own update path
// would refuse or where a split takes more than copying the record: a job whose accounting
// record is being made (db_index NO_VAL64), one with a burst buffer or of a federation.
bool splittable(const job_record_t* meta) {
    return meta->db_index != NO_VAL64 && meta->burst_buffer == nullptr && meta->fed_details == nullptr &&
           meta->het_job_id == 0;
}

constexpr std::size_t kSplitsPerRound = 64;  // records split off per round, all arrays together

// Splits pending tasks off the job arrays' meta records (the lowest task ids first), so that each
// is placed as a job of its own: per array, as many as the free GPUs would hold now (at least one,
// so that the array has a place in the plan), less its tasks split off before and still pending,
// within the array's limit of running tasks (%N), the window and kSplitsPerRound. Each split task
// and, where one task is left, the meta record turned into that task, goes into `pending` and
// `jobs`. Job write lock and the configuration, partition and federation read locks held.
void split_tasks(std::vector<job_record_t*> metas,
                 const std::unordered_map<uint32_t, std::size_t>& split_before,
                 const std::vector<net::RoundNode>& nodes, const std::vector<net::RoundRunning>& running,
                 const Settings& settings, time_t now, const Lifting& lifting, std::size_t window,
                 std::vector<net::RoundPending>& pending, std::vector<job_record_t*>& jobs) {
    if (metas.empty()) return;
    // the highest first: they take the round's budget
    std::stable_sort(metas.begin(), metas.end(),
                     [](const job_record_t* a, const job_record_t* b) { return a->priority > b->priority; });
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t splits = 0;
    const std::vector<int> free = net::free_gpus(nodes, running);
    std::size_t budget = std::min(std::max<std::size_t>(window, 1), kSplitsPerRound);
    for (job_record_t* meta : metas) {
        if (budget == 0) break;
        const net::RoundPending shape = pending_of(meta, nodes, settings, now, lifting);
        const auto before = split_before.find(meta->array_job_id);
        const std::size_t waiting = before == split_before.end() ? 0 : before->second;
        std::size_t want = std::max<std::size_t>(net::jobs_that_fit(shape, nodes, free), 1);
        const job_array_struct_t* a = meta->array_recs;
        if (a->max_run_tasks != 0)
            want = std::min<std::size_t>(
                want, a->max_run_tasks > a->tot_run_tasks ? a->max_run_tasks - a->tot_run_tasks : 0);
        want = want > waiting ? std::min(want - waiting, budget) : 0;
        const uint32_t array_id = meta->array_job_id;
        for (std::size_t k = 0; k < want && is_array_meta(meta); ++k) {
            const bitoff_t task = bit_ffs(meta->array_recs->task_id_bitmap);
            if (task < 0) break;
            job_record_t* rest = compat::split_array_task(meta, static_cast<uint32_t>(task));
            if (rest == nullptr) {
                error("%s: placement: could not split task %ld off JobId=%u", plugin_type,
                      static_cast<long>(task), array_id);
                break;
            }
            --budget;
            ++splits;
            verbose("%s: placement: JobId=%u_%ld split off its array as JobId=%u, to be placed on its own",
                    plugin_type, array_id, static_cast<long>(task), meta->job_id);
            pending.push_back(pending_of(meta, nodes, settings, now, lifting));
            jobs.push_back(meta);
            meta = rest;
        }
        // one task left: the meta record is that task now, placed as any job
        if (!is_array_meta(meta) && meta->array_task_id != NO_VAL && placeable(meta)) {
            pending.push_back(pending_of(meta, nodes, settings, now, lifting));
            jobs.push_back(meta);
        }
    }
    if (splits > 0)
        verbose("%s: placement: split %zu array tasks off their meta records in %.3f ms", plugin_type, splits,
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
}

// `running` receives the running multi-node jobs (for learning, after the locks). `window`: the
// planner's (1: priority order); with more, a placed job that passes a higher one is raised just
// above it (`lifting`), so Slurm's scheduler (which tries pending jobs by priority) starts it
// first. A job array's meta record is not placed: its tasks are split off and placed
// (split_tasks).
bool place_locked(const net::ContentionModel& model, const Settings& settings, std::size_t window,
                  Lifting& lifting, std::vector<net::RoundRunning>& running) {
    const time_t now = time(nullptr);
    std::vector<net::RoundNode> nodes = collect_nodes();
    running = collect_running(nodes);
    std::vector<net::RoundPending> pending;
    std::vector<job_record_t*> by_id_jobs;
    std::vector<job_record_t*> metas;
    std::unordered_map<uint32_t, std::size_t> split_before;  // array job id -> its split tasks pending
    bool changed = false;
    list_itr_t* it = list_iterator_create(job_list);
    while (auto* job = static_cast<job_record_t*>(list_next(it))) {
        if (!placeable(job)) continue;
        if (is_array_meta(job)) {
            if (pinned_by_us(job)) {  // pinned whole by an earlier version: the pin is dropped
                require_nodes(job, "");
                g_place.pins.erase(job->job_id);
                changed = true;
            }
            if (splittable(job)) metas.push_back(job);
            continue;
        }
        if (job->array_recs == nullptr && job->array_task_id != NO_VAL) ++split_before[job->array_job_id];
        pending.push_back(pending_of(job, nodes, settings, now, lifting));
        by_id_jobs.push_back(job);
    }
    list_iterator_destroy(it);
    // after the iteration: a split adds a record to job_list
    split_tasks(std::move(metas), split_before, nodes, running, settings, now, lifting, window, pending,
                by_id_jobs);
    if (pending.empty()) {
        g_place.lifts.clear();
        g_place.passed_since.clear();
        return (!g_site_lifts.empty() && apply_site_lifts({})) || changed;
    }
    std::unordered_map<uint32_t, job_record_t*> by_id;
    for (job_record_t* j : by_id_jobs) by_id[j->job_id] = j;
    const std::vector<net::RoundAnswer> answers = net::placement_round(
        model, nodes, running, std::move(pending), settings.uplink_capacity, &g_place.costs, window);
    for (const net::RoundAnswer& a : answers) {
        job_record_t* job = by_id.at(a.id);
        if (a.passed) g_place.passed_since.emplace(a.id, now);
        if (a.pin && a.passes != 0 && !job->direct_set_prio) {
            // raised just above the job it passes (an operator's priority is never changed)
            if (lifting.mode == Mode::site_factor)
                lift_site(job, by_id.at(a.passes), lifting);
            else
                changed = lift_priority(job, by_id.at(a.passes), lifting) || changed;
        }
        const bool ours = pinned_by_us(job);
        if (a.pin) {
            if (!ours || a.nodes_text != job->details->req_nodes) {
                require_nodes(job, a.nodes_text);
                changed = true;
                verbose("%s: JobId=%u %s", plugin_type, job->job_id, a.reason.c_str());
            }
            g_place.pins[a.id] = a.nodes_text;
        } else if (ours) {
            require_nodes(job, "");
            g_place.pins.erase(a.id);
            changed = true;
        }
        if (a.reason.empty()) continue;
        if (is_trial(job))
            note_on_trial(job, a.reason);
        else
            shim::set_system_comment(job, a.reason);
    }
    g_place.lifts = std::move(lifting.priorities);
    if (lifting.mode == Mode::site_factor) changed = apply_site_lifts(std::move(lifting.site)) || changed;
    // forget pins and passes of jobs no longer pending, and notes of trials neither pending nor
    // running here
    for (auto p = g_place.pins.begin(); p != g_place.pins.end();)
        p = by_id.count(p->first) ? std::next(p) : g_place.pins.erase(p);
    for (auto p = g_place.passed_since.begin(); p != g_place.passed_since.end();)
        p = by_id.count(p->first) ? std::next(p) : g_place.passed_since.erase(p);
    std::unordered_set<uint32_t> live;
    for (const auto& r : running) live.insert(r.id);
    for (auto n = g_place.notes.begin(); n != g_place.notes.end();)
        n = by_id.count(n->first) || live.count(n->first) ? std::next(n) : g_place.notes.erase(n);
    return changed;
}

// placement=no after a reconfigure: the pins of ours still on pending jobs are dropped once.
void drop_pins() {
    shim::SlurmctldLocks locks(slurmctld_lock_t{NO_LOCK, WRITE_LOCK, NO_LOCK, NO_LOCK, NO_LOCK});
    for (const auto& [id, nodes] : g_place.pins) {
        job_record_t* job = find_job_record(id);
        if (job != nullptr && IS_JOB_PENDING(job) && job->details != nullptr && pinned_by_us(job))
            require_nodes(job, "");
    }
    g_place.pins.clear();
    last_job_update = time(nullptr);
}

// Migration (migrate_below > 0): requeue the worst-placed running job when a clearly better node
// set is free; Slurm sends it SIGTERM (its checkpoint signal) and KillWait later SIGKILL, and the
// next round places it again. A job is moved at most once per 10 minutes.
void migrate(const Settings& settings, const net::ContentionModel& model) {
    const time_t now = time(nullptr);
    std::vector<uint32_t> skip;
    for (auto p = g_place.migrated.begin(); p != g_place.migrated.end();) {
        if (now - p->second > 600) {
            p = g_place.migrated.erase(p);
        } else {
            skip.push_back(p->first);
            ++p;
        }
    }
    shim::SlurmctldLocks locks(slurmctld_lock_t{READ_LOCK, WRITE_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK});
    std::vector<net::RoundNode> nodes = collect_nodes();
    const std::vector<net::RoundRunning> running = collect_running(nodes);
    const auto m = net::choose_migration(model, nodes, running, settings.migrate_below, 0.2, skip,
                                         settings.uplink_capacity);
    if (!m) return;
    job_record_t* job = find_job_record(m->id);
    if (job == nullptr || !IS_JOB_RUNNING(job)) return;
    info("%s: JobId=%u %s: requeueing it", plugin_type, m->id, m->reason.c_str());
    if (is_trial(job))
        note_on_trial(job, "placement: " + m->reason);
    else
        shim::set_system_comment(job, m->reason);
    const int rc = job_requeue(0, m->id, nullptr, false, 0);
    if (rc != SLURM_SUCCESS)
        error("%s: requeue of JobId=%u failed: %s", plugin_type, m->id, slurm_strerror(rc));
    g_place.migrated[m->id] = now;
    last_job_update = now;
}

}  // namespace

void recover_placement() {
    static bool done = false;
    if (done || job_list == nullptr) return;
    done = true;
    try {
        shim::SlurmctldLocks locks(slurmctld_lock_t{NO_LOCK, READ_LOCK, NO_LOCK, NO_LOCK, NO_LOCK});
        list_itr_t* it = list_iterator_create(job_list);
        std::size_t pins = 0;
        while (auto* job = static_cast<job_record_t*>(list_next(it))) {
            if (!IS_JOB_PENDING(job) || job->details == nullptr || job->system_comment == nullptr ||
                !pinned_by_us(job))
                continue;
            g_place.pins[job->job_id] = job->details->req_nodes;
            ++pins;
            const char* note = std::strstr(job->system_comment, kNoteSep.data());
            if (note != nullptr) g_place.notes[job->job_id] = note + 2;
        }
        list_iterator_destroy(it);
        if (pins > 0) verbose("%s: placement: %zu pins of ours found after a restart", plugin_type, pins);
    } catch (...) {
        error("%s: placement: recovering pins failed", plugin_type);
    }
}

void save_learned_placement() {
    try {
        save_learned(true);
    } catch (const std::exception& e) {
        error("%s: placement: saving the learned table: %s", plugin_type, e.what());
    } catch (...) {
        error("%s: placement: saving the learned table: unknown exception", plugin_type);
    }
}

uint32_t placement_lift(uint32_t job_id) {
    const auto it = g_place.lifts.find(job_id);
    return it == g_place.lifts.end() ? 0 : it->second;
}

uint32_t placement_site_lift(const job_record_t* job) {
    if (!IS_JOB_PENDING(job) || job->priority == 0 || job->direct_set_prio) return 0;
    return site_lift_of(job);
}

std::string placement_note(uint32_t job_id) {
    const auto it = g_place.notes.find(job_id);
    return it == g_place.notes.end() ? std::string() : it->second;
}

void place_multinode_jobs(const Settings& settings, Mode mode, const RankFacts& facts,
                          const std::function<PointSpan(uint32_t)>& curve) {
    try {
        if (job_list == nullptr) return;
        if (!settings.placement) {
            if (!g_place.pins.empty()) drop_pins();
            g_place.lifts.clear();
            g_place.passed_since.clear();
            if (!g_site_lifts.empty()) {  // only this thread changes it (under the lock)
                shim::SlurmctldLocks locks(
                    slurmctld_lock_t{READ_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK, NO_LOCK});
                if (apply_site_lifts({})) last_job_update = time(nullptr);
            }
            return;
        }
        sync_table(settings);
        sync_topology(settings);
        if (!settings.placement_learn) {
            if (g_place.learner) stop_learner();
        } else if (!g_place.learner) {
            start_learner();
        }
        const auto table = g_place.table;  // kept alive for the round
        const net::ModelSettings ms{
            settings.placement_rule == "min" ? net::Rule::min_pairwise : net::Rule::link_additive, 0.35};
        const net::ContentionModel model(g_place.learner ? g_place.learner->table() : *table, ms);
        std::vector<net::RoundRunning> running;
        {
            // the federation's read lock too: splitting an array task gives it a job id
            // (get_next_job_id reads the federation)
            shim::SlurmctldLocks locks(
                slurmctld_lock_t{READ_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK, READ_LOCK});
            Lifting lifting;
            lifting.mode = mode;
            lifting.facts = &facts;
            if (place_locked(model, settings, settings.placement_window, lifting, running))
                last_job_update = time(nullptr);
        }
        if (g_place.learner) learn(running, curve);
        if (settings.migrate_below > 0.0) migrate(settings, model);
    } catch (const std::exception& e) {
        error("%s: placement: %s", plugin_type, e.what());
    } catch (...) {
        error("%s: placement: unknown exception", plugin_type);
    }
}

}  // namespace explsched::rerank
