// Command line of explsched-kerneld: a table of options, each with its parser, so errors name
// the option and the offending value and `--help` lists every option.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "core/base/strings.hpp"
#include "kernel_sched/kerneld.hpp"

namespace explsched::ksched {

namespace {

struct Option {
    const char* name;
    const char* help;
    std::function<Status(KerneldConfig&, std::string_view)> apply;
};

Status bad(std::string_view opt, const char* why) {
    return make_error("option --" + std::string(opt) + ": " + why);
}

template <typename Field>
auto uint_opt(Field field, std::uint64_t scale, std::uint64_t min_value) {
    return [field, scale, min_value](KerneldConfig& c, std::string_view v) -> Status {
        auto n = parse_uint64(v);
        if (!n || *n < min_value)
            return make_error("'" + std::string(v) + "' is not an integer >= " + std::to_string(min_value));
        field(c) = static_cast<std::remove_reference_t<decltype(field(c))>>(*n * scale);
        return {};
    };
}

template <typename Field>
auto double_opt(Field field, double lo, double hi) {
    return [field, lo, hi](KerneldConfig& c, std::string_view v) -> Status {
        auto d = parse_finite_double(v);
        if (!d || *d <= lo || *d > hi)
            return make_error("'" + std::string(v) + "' is not a number in (" + std::to_string(lo) + ", " +
                              std::to_string(hi) + "]");
        field(c) = *d;
        return {};
    };
}

Status add_profiles(KerneldConfig& c, std::string_view v) {
    const std::string path(v);
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return make_error("'" + path + "' does not exist");
    if (!S_ISDIR(st.st_mode)) {
        c.profiles.push_back(path);
        return {};
    }
    DIR* d = opendir(path.c_str());
    if (d == nullptr) return make_error("cannot list directory '" + path + "'");
    std::vector<std::string> found;
    while (dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ".csv") == 0)
            found.push_back(path + "/" + name);
    }
    closedir(d);
    if (found.empty()) return make_error("directory '" + path + "' holds no .csv profile");
    std::sort(found.begin(), found.end());
    c.profiles.insert(c.profiles.end(), found.begin(), found.end());
    return {};
}

const std::vector<Option>& options() {
    static const std::vector<Option> table = {
        {"socket", "PATH  Unix socket to listen on, e.g. /run/explsched/ksched/gpu0/kerneld.sock (required)",
         [](KerneldConfig& c, std::string_view v) -> Status {
             if (v.empty() || v[0] != '/')
                 return make_error("'" + std::string(v) + "' is not an absolute path");
             c.socket_path = std::string(v);
             return {};
         }},
        {"status-file", "PATH  published statistics (default: kerneld.status beside the socket)",
         [](KerneldConfig& c, std::string_view v) -> Status {
             c.status_file = std::string(v);
             return {};
         }},
        {"user", "NAME  started as root: serve as this user (default explsched)",
         [](KerneldConfig& c, std::string_view v) -> Status {
             if (v.empty()) return make_error("'' is empty");
             c.user = std::string(v);
             return {};
         }},
        {"registrar-uid", "N  uid allowed to register steps besides root (e.g. SlurmdUser; repeatable)",
         [](KerneldConfig& c, std::string_view v) -> Status {
             auto n = parse_uint64(v);
             if (!n || *n > 0xFFFFFFFEu) return make_error("'" + std::string(v) + "' is not a uid");
             c.registrar_uids.push_back(static_cast<std::uint32_t>(*n));
             return {};
         }},
        {"max-clients-per-uid", "N  connections one user may hold (default 16)",
         uint_opt([](KerneldConfig& c) -> std::uint32_t& { return c.max_clients_per_uid; }, 1, 1)},
        {"gpu", "N  GPU index (for logs and statistics)",
         uint_opt([](KerneldConfig& c) -> std::uint32_t& { return c.gpu_index; }, 1, 0)},
        {"sm-count", "N  SMs of the device when clients cannot report it (default 132)",
         uint_opt([](KerneldConfig& c) -> std::uint32_t& { return c.limits.sm_count; }, 1, 1)},
        {"sm-cap-fraction", "X  admission cap on summed SM demand, as a fraction of the SMs (default 1)",
         double_opt([](KerneldConfig& c) -> double& { return c.sm_cap_fraction; }, 0.0, 4.0)},
        {"bw-cap", "X  admission cap on summed bandwidth demand, fraction of the device's (default 1)",
         double_opt([](KerneldConfig& c) -> double& { return c.admission.bw_cap; }, 0.0, 4.0)},
        {"budget-us",
         "N  best-effort work outstanding while the protected job is unpredictable (default 100)",
         uint_opt([](KerneldConfig& c) -> std::uint64_t& { return c.admission.be_budget_ns; }, 1000, 1)},
        {"idle-us", "N  a protected job is idle after this long without kernels (default 100)",
         uint_opt([](KerneldConfig& c) -> std::uint64_t& { return c.admission.protected_idle_ns; }, 1000, 1)},
        {"profiles", "PATH  Orion-format profile CSV, or a directory of them (repeatable)", add_profiles},
        {"profile-sm-count", "N  SMs of the device the profiles were taken on (default 80, V100)",
         uint_opt([](KerneldConfig& c) -> std::uint32_t& { return c.profile_sm_count; }, 1, 1)},
        {"default-kernel-us", "N  expected duration of a kernel nobody has seen (default 20)",
         uint_opt([](KerneldConfig& c) -> std::uint64_t& { return c.default_kernel_ns; }, 1000, 1)},
        {"spin-us", "N  keep polling this long after the last record (default 200)",
         uint_opt([](KerneldConfig& c) -> std::uint64_t& { return c.spin_ns; }, 1000, 0)},
        {"sleep-us", "N  longest sleep between scans when idle (default 1000)",
         uint_opt([](KerneldConfig& c) -> std::uint64_t& { return c.sleep_ns; }, 1000, 1)},
        {"stats-file", "PATH  write JSON statistics here at exit",
         [](KerneldConfig& c, std::string_view v) -> Status {
             c.stats_file = std::string(v);
             return {};
         }},
        {"trace-file", "PATH  append one line per admission grant (debugging, tests)",
         [](KerneldConfig& c, std::string_view v) -> Status {
             c.trace_file = std::string(v);
             return {};
         }},
        {"pid-file", "PATH  write the daemon's pid here once it serves",
         [](KerneldConfig& c, std::string_view v) -> Status {
             c.pid_file = std::string(v);
             return {};
         }},
    };
    return table;
}

}  // namespace

const char* kerneld_usage() {
    static const std::string text = [] {
        std::string t =
            "usage: explsched-kerneld --socket PATH [options]\n"
            "Kernel scheduler for one GPU: serves libexplsched_intercept.so clients.\n\noptions:\n";
        for (const Option& o : options()) t += "  --" + std::string(o.name) + " " + o.help + "\n";
        t += "  --verbose  log client arrivals and departures\n  --help     this text\n";
        return t;
    }();
    return text.c_str();
}

Result<KerneldConfig> parse_kerneld_args(int argc, char** argv) {
    KerneldConfig c;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg.substr(0, 2) != "--") return make_error("unexpected argument '" + std::string(arg) + "'");
        arg.remove_prefix(2);
        std::string_view value;
        bool has_value = false;
        if (auto eq = arg.find('='); eq != std::string_view::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            has_value = true;
        }
        const auto& table = options();
        auto it = std::find_if(table.begin(), table.end(), [&](const Option& o) { return arg == o.name; });
        if (it == table.end()) return make_error("unknown option --" + std::string(arg));
        if (!has_value) {
            if (i + 1 >= argc) return make_error("option --" + std::string(arg) + " needs a value");
            value = argv[++i];
        }
        if (auto s = it->apply(c, value); !s) return bad(arg, s.error().message.c_str()).error();
    }
    if (c.socket_path.empty()) return make_error("option --socket is required");
    if (c.max_clients_per_uid > kMaxClients) c.max_clients_per_uid = kMaxClients;
    return c;
}

}  // namespace explsched::ksched
