#include "sim/curve_library.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/strings.hpp"
#include "core/curves/curve_csv.hpp"

namespace explsched::sim {

namespace fs = std::filesystem;

namespace {

Result<std::string> slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path + ": cannot open: " + std::strerror(errno));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) return make_error(path + ": read failed");
    return buffer.str();
}

bool numeric_less(const std::string& a, const std::string& b) {
    const auto x = parse_finite_double(a), y = parse_finite_double(b);
    if (x && y && *x != *y) return *x < *y;
    if (x.has_value() != y.has_value()) return x.has_value();
    return a < b;
}

// Compact placement of `gpus` on nodes of `per_node`, digits ascending like Pollux's table.
std::string compact_placement(std::uint32_t gpus, std::uint32_t per_node) {
    std::string out;
    const std::uint32_t full = gpus / per_node, rest = gpus % per_node;
    if (rest != 0) out += std::to_string(rest);
    for (std::uint32_t i = 0; i < full; ++i) out += std::to_string(per_node);
    return out;
}

std::uint32_t placement_gpus(const std::string& placement) {
    std::uint32_t total = 0;
    for (char c : placement) total += static_cast<std::uint32_t>(c - '0');
    return total;
}

Status finish_application(Application& app) {
    if (app.variants.empty()) return make_error("curves: application '" + app.name + "' has no curves");
    std::sort(app.variants.begin(), app.variants.end(),
              [](const CurveVariant& a, const CurveVariant& b) { return numeric_less(a.name, b.name); });
    const double sign = app.direction == Direction::maximize ? 1.0 : -1.0;
    double worst_first = INFINITY, best_any = -INFINITY;
    for (const CurveVariant& v : app.variants) {
        if (v.steps.size() < 2) {
            return make_error("curves: " + v.path + ": needs at least 2 points, has " +
                              std::to_string(v.steps.size()));
        }
        worst_first = std::min(worst_first, sign * v.metrics.front());
        for (double m : v.metrics) best_any = std::max(best_any, sign * m);
    }
    if (!(best_any > worst_first)) {
        return make_error("curves: application '" + app.name + "': no curve improves on its first report");
    }
    app.untrained = sign * worst_first;
    app.best = sign * best_any;
    if (app.job_type.empty()) app.job_type = default_job_type(app.name);
    return {};
}

Result<Application> load_application(const fs::path& dir, const std::string& name) {
    Application app;
    app.name = name;
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (entry.is_regular_file() && entry.path().extension() == ".csv") files.push_back(entry.path());
    }
    if (ec) return make_error("curves: " + dir.string() + ": cannot list: " + ec.message());
    std::sort(files.begin(), files.end());
    double rise = 0.0;  // summed (last - first) over variants: sign gives the direction
    for (const fs::path& file : files) {
        const std::string stem = file.stem().string();
        if (stem == "scalability") continue;
        if (stem == "placements") {
            auto text = slurp(file.string());
            if (!text) return text.error();
            auto table = StepTimeTable::parse(*text, file.string());
            if (!table) return table.error();
            app.step_times = std::move(table.value());
            continue;
        }
        auto csv = read_curve_csv(file.string());
        if (!csv) return make_error("curves: " + csv.error().message);
        auto clean = clean_curve(csv->points);
        if (!clean) return make_error("curves: " + file.string() + ": " + clean.error().message);
        CurveVariant variant;
        variant.name = stem.rfind("validation-", 0) == 0 ? stem.substr(11) : stem;
        variant.path = file.string();
        variant.step_column = csv->step_column;
        variant.steps = std::move(clean->steps);
        variant.metrics = std::move(clean->metrics);
        if (!variant.steps.empty() && variant.steps.front() <= 0.0) {
            // Step 0 is the untrained model: a run has not "reported" before it trains.
            variant.steps.erase(variant.steps.begin());
            variant.metrics.erase(variant.metrics.begin());
        }
        if (variant.metrics.size() >= 2) rise += variant.metrics.back() - variant.metrics.front();
        app.variants.push_back(std::move(variant));
    }
    app.direction = rise < 0.0 ? Direction::minimize : Direction::maximize;
    auto declared = read_direction_file(dir.string());
    if (!declared) return make_error("curves: " + declared.error().message);
    if (*declared) app.direction = **declared;
    const fs::path drops_file = dir / "lr_drops";
    if (fs::exists(drops_file)) {
        auto text = slurp(drops_file.string());
        if (!text) return text.error();
        for (std::string_view item : split(trim(*text), ",")) {
            const auto f = parse_finite_double(trim(item));
            if (!f || !(*f > 0.0 && *f < 1.0) ||
                (!app.lr_drop_fractions.empty() && !(*f > app.lr_drop_fractions.back())))
                return make_error("curves: " + drops_file.string() + ": '" + std::string(trim(item)) +
                                  "' is not a fraction of the run in (0, 1) above the one before (want e.g. "
                                  "0.5,0.75)");
            app.lr_drop_fractions.push_back(*f);
        }
    }
    if (auto ok = finish_application(app); !ok) return ok.error();
    return app;
}

}  // namespace

Result<StepTimeTable> StepTimeTable::parse(std::string_view text, const std::string& source) {
    StepTimeTable table;
    std::size_t line_no = 0;
    int placement_col = -1, batch_col = -1, time_col = -1;
    for (auto line : split(text, "\n")) {
        ++line_no;
        line = trim(line);
        if (line.empty()) continue;
        const auto cells = split(line, ",");
        if (placement_col < 0) {
            for (std::size_t i = 0; i < cells.size(); ++i) {
                const auto c = trim(cells[i]);
                if (c == "placement") placement_col = static_cast<int>(i);
                if (c == "local_bsz") batch_col = static_cast<int>(i);
                if (c == "step_time") time_col = static_cast<int>(i);
            }
            if (placement_col < 0 || batch_col < 0 || time_col < 0) {
                return make_error(source + ":" + std::to_string(line_no) +
                                  ": header needs placement, local_bsz and step_time");
            }
            continue;
        }
        const auto need = static_cast<std::size_t>(std::max({placement_col, batch_col, time_col}));
        if (cells.size() <= need) {
            return make_error(source + ":" + std::to_string(line_no) + ": too few cells");
        }
        const std::string placement(trim(cells[static_cast<std::size_t>(placement_col)]));
        if (placement.empty() || placement.find_first_not_of("123456789") != std::string::npos) {
            return make_error(source + ":" + std::to_string(line_no) + ": placement: '" + placement +
                              "' is not GPU counts per node");
        }
        const auto batch = parse_finite_double(trim(cells[static_cast<std::size_t>(batch_col)]));
        const auto time = parse_finite_double(trim(cells[static_cast<std::size_t>(time_col)]));
        if (!batch || *batch <= 0) {
            return make_error(source + ":" + std::to_string(line_no) + ": local_bsz: '" +
                              std::string(cells[static_cast<std::size_t>(batch_col)]) +
                              "' is not a positive number");
        }
        if (!time || *time <= 0) {
            return make_error(source + ":" + std::to_string(line_no) + ": step_time: '" +
                              std::string(cells[static_cast<std::size_t>(time_col)]) +
                              "' is not a positive number");
        }
        table.table_[placement].emplace_back(*batch, *time);
    }
    for (auto& [placement, rows] : table.table_) std::sort(rows.begin(), rows.end());
    return table;
}

double StepTimeTable::step_time(std::uint32_t gpus, double local_batch, std::uint32_t gpus_per_node) const {
    if (table_.empty() || gpus == 0 || !(local_batch > 0)) return NAN;
    auto it = table_.find(compact_placement(gpus, std::max<std::uint32_t>(1, gpus_per_node)));
    if (it == table_.end()) {
        // Widest measured placement with no more GPUs; else the narrowest.
        std::uint32_t best_gpus = 0;
        for (auto p = table_.begin(); p != table_.end(); ++p) {
            const std::uint32_t g = placement_gpus(p->first);
            if (g <= gpus && g > best_gpus) {
                best_gpus = g;
                it = p;
            }
        }
        if (it == table_.end()) it = table_.begin();
    }
    const auto& rows = it->second;
    if (local_batch <= rows.front().first) return rows.front().second;
    if (local_batch >= rows.back().first) return rows.back().second * local_batch / rows.back().first;
    const auto hi = std::lower_bound(rows.begin(), rows.end(), std::make_pair(local_batch, 0.0));
    const auto lo = hi - 1;
    const double t =
        (std::log(local_batch) - std::log(lo->first)) / (std::log(hi->first) - std::log(lo->first));
    return std::exp(std::log(lo->second) + t * (std::log(hi->second) - std::log(lo->second)));
}

double Application::quality(double metric) const {
    if (!std::isfinite(metric)) return 0.0;
    const double q = (metric - untrained) / (best - untrained);
    return std::clamp(q, 0.0, 1.0);
}

double Application::metric_at_quality(double q) const { return untrained + q * (best - untrained); }

const CurveVariant* Application::find_variant(std::string_view variant_name) const {
    for (const CurveVariant& v : variants) {
        if (v.name == variant_name) return &v;
    }
    return nullptr;
}

Result<CurveLibrary> CurveLibrary::load(const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return make_error("curves: " + dir + ": not a directory");
    std::vector<fs::path> subdirs;
    bool has_csv = false;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (entry.is_directory()) subdirs.push_back(entry.path());
        if (entry.is_regular_file() && entry.path().extension() == ".csv") has_csv = true;
    }
    if (ec) return make_error("curves: " + dir + ": cannot list: " + ec.message());
    std::sort(subdirs.begin(), subdirs.end());
    std::vector<Application> apps;
    if (has_csv) {
        auto app = load_application(dir, fs::path(dir).lexically_normal().filename().string());
        if (!app) return app.error();
        apps.push_back(std::move(app.value()));
    }
    for (const fs::path& sub : subdirs) {
        auto app = load_application(sub, sub.filename().string());
        if (!app) return app.error();
        apps.push_back(std::move(app.value()));
    }
    if (apps.empty()) return make_error("curves: " + dir + ": no curve CSVs found");
    CurveLibrary library;
    library.apps_ = std::move(apps);
    return library;
}

Result<CurveLibrary> CurveLibrary::from_applications(std::vector<Application> apps) {
    if (apps.empty()) return make_error("curves: no applications");
    for (Application& app : apps) {
        if (auto ok = finish_application(app); !ok) return ok.error();
    }
    CurveLibrary library;
    library.apps_ = std::move(apps);
    return library;
}

int CurveLibrary::find(std::string_view name) const {
    for (std::size_t i = 0; i < apps_.size(); ++i) {
        if (apps_[i].name == name) return static_cast<int>(i);
    }
    return -1;
}

std::string default_job_type(std::string_view application) {
    // Closest model family in Gavel's table (doc/results.md lists the mapping).
    if (application == "cifar10") return "ResNet-18 (batch size 64)";
    if (application == "imagenet") return "ResNet-50 (batch size 64)";
    if (application == "deepspeech2") return "LM (batch size 20)";
    if (application == "ncf") return "Recommendation (batch size 2048)";
    return {};
}

}  // namespace explsched::sim
