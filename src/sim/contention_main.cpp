// explsched-contention: replays Orion-format kernel profiles of a high-priority (HP) job and a
// best-effort (BE) job co-located on one GPU under each sharing policy, and prints the HP
// latency slowdown and the BE throughput against exclusive use of the GPU.
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/strings.hpp"
#include "core/device/orion_profile.hpp"
#include "sim/contention_sim.hpp"

namespace {

using namespace explsched;

struct Options {
    std::string profiles;
    std::vector<std::string> hp;  // profile names without .csv; empty: every *_fwd_* profile
    std::string be = "resnet50_32_fb1_new";
    std::vector<double> loads = {0.3};
    bool hp_closed_loop = false;
    std::vector<SharingPolicy> policies = {SharingPolicy::unmanaged, SharingPolicy::time_slicing,
                                           SharingPolicy::orion, SharingPolicy::explsched};
    SimParams sim;
    bool json = false;
    double target_slowdown = 0.05;
    double target_be = 0.50;
};

const char* kUsage =
    "usage: explsched-contention --profiles DIR [options]\n"
    "Simulates a high-priority (HP) inference job and a best-effort (BE) training job on one GPU.\n"
    "  --profiles DIR          directory of Orion-format kernel profiles (*.csv)\n"
    "  --hp NAME[,NAME...]     HP profiles (default: every *_fwd_* profile)\n"
    "  --be NAME               BE profile (default resnet50_32_fb1_new), closed loop\n"
    "  --hp-closed-loop        run HP back to back as well (training-training)\n"
    "  --load X[,X...]         HP Poisson load as a fraction of its exclusive capacity (default 0.3)\n"
    "  --policies P[,P...]     unmanaged,time_slicing,orion,explsched (default: all)\n"
    "  --sm-count N            SMs of the simulated device (default 80, the profiles' V100)\n"
    "  --bandwidth X           DRAM bandwidth relative to the profiled device (default 1)\n"
    "  --colocation-penalty X  extra slowdown while two jobs co-run (default 0)\n"
    "  --launch-us N           host time per kernel launch (default 4)\n"
    "  --horizon-s X           simulated seconds (default 3); --warmup-s X (default 0.2)\n"
    "  --timeslice-us N        time slicing slice (default 2000); --switch-us N (default 25)\n"
    "  --rtt-us X              admission round trip per BE launch (default 2)\n"
    "  --budget-us N           explsched BE budget (default 100); --idle-us N (default 100)\n"
    "  --orion-dur-us N        Orion DUR_THRESHOLD (default 2.5% of the HP request time)\n"
    "  --seed N                arrival seed (default 1)\n"
    "  --json                  machine-readable output\n";

Result<std::vector<double>> parse_list(std::string_view v, const char* opt) {
    std::vector<double> out;
    for (std::string_view item : split(v, ",")) {
        auto d = parse_finite_double(trim(item));
        if (!d || *d <= 0.0)
            return make_error(std::string("option ") + opt + ": '" + std::string(item) +
                              "' is not a positive number");
        out.push_back(*d);
    }
    return out;
}

Result<Options> parse(int argc, char** argv) {
    Options o;
    o.sim.device.sm_count = 80;
    o.sim.horizon_ns = 3000000000ULL;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--json") {
            o.json = true;
            continue;
        }
        if (arg == "--hp-closed-loop") {
            o.hp_closed_loop = true;
            continue;
        }
        if (i + 1 >= argc) return make_error("option " + arg + " needs a value (or is unknown)");
        const std::string v = argv[++i];
        auto number = [&](double lo) -> Result<double> {
            auto d = parse_finite_double(v);
            if (!d || *d < lo)
                return make_error("option " + arg + ": '" + v + "' is not a number >= " + std::to_string(lo));
            return *d;
        };
        auto ns = [&](double scale, std::uint64_t& field) -> Status {
            auto d = number(0.0);
            if (!d) return d.error();
            field = static_cast<std::uint64_t>(*d * scale);
            return {};
        };
        Status s;
        if (arg == "--profiles")
            o.profiles = v;
        else if (arg == "--hp") {
            o.hp.clear();
            for (auto x : split(v, ",")) o.hp.emplace_back(trim(x));
        } else if (arg == "--be")
            o.be = v;
        else if (arg == "--load") {
            auto l = parse_list(v, "--load");
            if (!l) return l.error();
            o.loads = *l;
        } else if (arg == "--policies") {
            o.policies.clear();
            for (auto x : split(v, ",")) {
                auto p = parse_sharing_policy(trim(x));
                if (!p) return make_error("option --policies: " + p.error().message);
                if (*p != SharingPolicy::exclusive) o.policies.push_back(*p);
            }
        } else if (arg == "--sm-count") {
            auto d = number(1);
            if (!d) return d.error();
            o.sim.device.sm_count = static_cast<std::uint32_t>(*d);
        } else if (arg == "--bandwidth") {
            auto d = number(0.01);
            if (!d) return d.error();
            o.sim.device.bandwidth = *d;
        } else if (arg == "--colocation-penalty") {
            auto d = number(0);
            if (!d) return d.error();
            o.sim.device.colocation_penalty = *d;
        } else if (arg == "--launch-us")
            s = ns(1e3, o.sim.launch_ns);
        else if (arg == "--horizon-s")
            s = ns(1e9, o.sim.horizon_ns);
        else if (arg == "--warmup-s")
            s = ns(1e9, o.sim.warmup_ns);
        else if (arg == "--timeslice-us")
            s = ns(1e3, o.sim.timeslice_ns);
        else if (arg == "--switch-us")
            s = ns(1e3, o.sim.switch_ns);
        else if (arg == "--rtt-us")
            s = ns(1e3, o.sim.admission_rtt_ns);
        else if (arg == "--budget-us")
            s = ns(1e3, o.sim.admission.be_budget_ns);
        else if (arg == "--idle-us")
            s = ns(1e3, o.sim.admission.protected_idle_ns);
        else if (arg == "--orion-dur-us")
            s = ns(1e3, o.sim.orion_dur_threshold_ns);
        else if (arg == "--seed")
            s = ns(1, o.sim.seed);
        else
            return make_error("unknown option " + arg);
        if (!s) return s.error();
    }
    if (o.profiles.empty()) return make_error("option --profiles DIR is required");
    if (auto s = validate(o.sim); !s) return s.error();
    if (o.hp.empty()) {
        DIR* d = opendir(o.profiles.c_str());
        if (d == nullptr) return make_error("cannot list profile directory " + o.profiles);
        while (dirent* e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > 4 && n.substr(n.size() - 4) == ".csv" && n.find("_fwd_") != std::string::npos)
                o.hp.push_back(n.substr(0, n.size() - 4));
        }
        closedir(d);
        std::sort(o.hp.begin(), o.hp.end());
        if (o.hp.empty()) return make_error("no *_fwd_* profile in " + o.profiles);
    }
    return o;
}

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1e3; }

int run(const Options& o) {
    auto be_profile = load_orion_profile(o.profiles + "/" + o.be + ".csv", 80);
    if (!be_profile) {
        std::fprintf(stderr, "explsched-contention: %s\n", be_profile.error().message.c_str());
        return 1;
    }
    nlohmann::json out = nlohmann::json::array();
    if (!o.json) {
        std::printf(
            "# device: %u SMs, bandwidth x%.2f; launch %.1f us; BE admission round trip %.1f us; time slice "
            "%.0f us (+%.0f us switch);\n"
            "# co-location penalty %.2f; explsched budget %.0f us; horizon %.1f s; seed %llu\n",
            o.sim.device.sm_count, o.sim.device.bandwidth, us(o.sim.launch_ns), us(o.sim.admission_rtt_ns),
            us(o.sim.timeslice_ns), us(o.sim.switch_ns), o.sim.device.colocation_penalty,
            us(o.sim.admission.be_budget_ns), us(o.sim.horizon_ns) / 1e6,
            static_cast<unsigned long long>(o.sim.seed));
        std::printf(
            "# HP slowdown: mean (p99) request latency vs the HP job alone; BE: throughput vs BE alone;\n"
            "# STP: HP speed (exclusive/co-located latency) + BE share. Targets: HP <= %.0f%%, BE >= "
            "%.0f%%.\n",
            o.target_slowdown * 100, o.target_be * 100);
        std::printf("%-22s %5s %-13s %10s %10s %8s %6s %s\n", "HP job", "load", "policy", "HP mean", "HP p99",
                    "BE", "STP", "targets");
    }
    int failures = 0;
    for (const std::string& hp_name : o.hp) {
        auto hp_profile = load_orion_profile(o.profiles + "/" + hp_name + ".csv", 80);
        if (!hp_profile) {
            std::fprintf(stderr, "explsched-contention: %s\n", hp_profile.error().message.c_str());
            return 1;
        }
        for (double load : o.hp_closed_loop ? std::vector<double>{1.0} : o.loads) {
            SimJobSpec hp{hp_name, *hp_profile, 10.0, !o.hp_closed_loop, load, 0};
            SimJobSpec be{o.be, *be_profile, 1.0, false, 0.0, 0};
            const std::vector<SimJobSpec> jobs{hp, be};
            auto ex = simulate(jobs, SharingPolicy::exclusive, o.sim);
            if (!ex) {
                std::fprintf(stderr, "explsched-contention: %s\n", ex.error().message.c_str());
                return 1;
            }
            std::map<SharingPolicy, double> stp;
            for (SharingPolicy p : o.policies) {
                auto r = simulate(jobs, p, o.sim);
                if (!r) {
                    std::fprintf(stderr, "explsched-contention: %s\n", r.error().message.c_str());
                    return 1;
                }
                const SimJobResult& h = r->jobs[0];
                const SimJobResult& b = r->jobs[1];
                const double slow_mean = h.mean_latency_ns / ex->jobs[0].mean_latency_ns - 1.0;
                const double slow_p99 = h.p99_latency_ns / ex->jobs[0].p99_latency_ns - 1.0;
                const double be_share = b.work_rate / ex->jobs[1].work_rate;
                stp[p] = ex->jobs[0].mean_latency_ns / h.mean_latency_ns + be_share;
                const bool met = slow_mean <= o.target_slowdown && be_share >= o.target_be;
                if (p == SharingPolicy::explsched && !met) ++failures;
                if (o.json) {
                    out.push_back({{"hp", hp_name},
                                   {"be", o.be},
                                   {"load", load},
                                   {"policy", to_string(p)},
                                   {"hp_mean_slowdown", slow_mean},
                                   {"hp_p99_slowdown", slow_p99},
                                   {"hp_requests", h.requests},
                                   {"be_throughput_share", be_share},
                                   {"stp", stp[p]},
                                   {"targets_met", met}});
                } else {
                    std::printf("%-22s %5.2f %-13s %+9.1f%% %+9.1f%% %7.1f%% %6.3f %s\n", hp_name.c_str(),
                                load, to_string(p), slow_mean * 100, slow_p99 * 100, be_share * 100, stp[p],
                                met ? "met" : "-");
                }
            }
            if (!o.json && stp.count(SharingPolicy::explsched)) {
                const double ours = stp[SharingPolicy::explsched];
                std::printf(
                    "%-22s %5s explsched STP vs unmanaged %+.3f, vs time slicing %+.3f\n", "", "",
                    stp.count(SharingPolicy::unmanaged) ? ours - stp[SharingPolicy::unmanaged] : 0.0,
                    stp.count(SharingPolicy::time_slicing) ? ours - stp[SharingPolicy::time_slicing] : 0.0);
            }
        }
    }
    if (o.json)
        std::printf("%s\n", out.dump(2).c_str());
    else
        std::printf("# explsched missed a target in %d of the runs above\n", failures);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        for (int i = 1; i < argc; ++i) {
            if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
                std::fputs(kUsage, stdout);
                return 0;
            }
        }
        auto o = parse(argc, argv);
        if (!o) {
            std::fprintf(stderr, "explsched-contention: %s\n", o.error().message.c_str());
            return 2;
        }
        return run(*o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "explsched-contention: internal error: %s\n", e.what());
        return 70;
    }
}
