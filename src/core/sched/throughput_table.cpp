#include "core/sched/throughput_table.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace explsched {

namespace {

// Gavel writes its keys as Python tuples: "('ResNet-18 (batch size 16)', 1)".
bool parse_job_key(const std::string& key, std::string& job_type, int& scale) {
    if (key.size() < 7 || key.compare(0, 2, "('") != 0 || key.back() != ')') return false;
    const std::size_t quote = key.rfind("', ");
    if (quote == std::string::npos || quote < 2) return false;
    job_type = key.substr(2, quote - 2);
    const std::string digits = key.substr(quote + 3, key.size() - quote - 4);
    if (digits.empty() || digits.size() > 6) return false;
    scale = 0;
    for (char c : digits) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
        scale = scale * 10 + (c - '0');
    }
    return scale > 0;
}

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

}  // namespace

Result<ThroughputTable> ThroughputTable::from_gavel_json(std::string_view json_text) {
    const nlohmann::json doc = nlohmann::json::parse(json_text.begin(), json_text.end(), nullptr,
                                                     /*allow_exceptions=*/false);
    if (doc.is_discarded()) return make_error("throughput table: not valid JSON");
    if (!doc.is_object()) return make_error("throughput table: top level is not an object");
    ThroughputTable table;
    for (auto gpu = doc.begin(); gpu != doc.end(); ++gpu) {
        // the "_unconsolidated" variants describe spread-out placements; we value trials on
        // consolidated ones
        if (gpu.key().find("_unconsolidated") != std::string::npos) continue;
        if (!gpu.value().is_object()) {
            return make_error("throughput table: GPU type '" + gpu.key() + "': not an object");
        }
        const std::string gpu_type = lower(gpu.key());
        for (auto job = gpu.value().begin(); job != gpu.value().end(); ++job) {
            std::string job_type;
            int scale = 0;
            if (!parse_job_key(job.key(), job_type, scale)) {
                return make_error("throughput table: GPU type '" + gpu.key() + "': key '" + job.key() +
                                  "' is not ('<job type>', <scale>)");
            }
            if (!job.value().is_object() || !job.value().contains("null")) {
                return make_error("throughput table: '" + job.key() + "' on '" + gpu.key() +
                                  "': no isolated throughput (\"null\")");
            }
            const auto& isolated = job.value()["null"];
            if (!isolated.is_number() || !std::isfinite(isolated.get<double>()) ||
                isolated.get<double>() < 0.0) {
                return make_error("throughput table: '" + job.key() + "' on '" + gpu.key() +
                                  "': isolated throughput is not a number >= 0");
            }
            table.set(job_type, gpu_type, isolated.get<double>(), scale);
        }
    }
    return table;
}

Result<ThroughputTable> ThroughputTable::load_gavel_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path + ": cannot open: " + std::strerror(errno));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    auto table = from_gavel_json(buffer.str());
    if (!table) return make_error(path + ": " + table.error().message);
    return table;
}

void ThroughputTable::set(const std::string& job_type, const std::string& gpu_type, double steps_per_s,
                          int scale) {
    table_[{job_type, scale}][lower(gpu_type)] = steps_per_s;
}

double ThroughputTable::throughput(const std::string& job_type, const std::string& gpu_type,
                                   int scale) const {
    const auto job = table_.find({job_type, scale});
    if (job == table_.end()) return std::numeric_limits<double>::quiet_NaN();
    const auto gpu = job->second.find(lower(gpu_type));
    if (gpu == job->second.end()) return std::numeric_limits<double>::quiet_NaN();
    return gpu->second;
}

bool ThroughputTable::knows_job_type(const std::string& job_type) const {
    const auto it = table_.lower_bound({job_type, 0});
    return it != table_.end() && it->first.first == job_type;
}

double ThroughputTable::speed_ratio(const std::string& job_type, const std::string& from_gpu,
                                    const std::string& to_gpu, int scale) const {
    if (from_gpu.empty() || to_gpu.empty() || lower(from_gpu) == lower(to_gpu)) return 1.0;
    const double from = throughput(job_type, from_gpu, scale);
    const double to = throughput(job_type, to_gpu, scale);
    // 0 in Gavel's table means "does not fit on that GPU": no speed there.
    if (!(from > 0.0) || !std::isfinite(to)) return 1.0;
    return to / from;
}

}  // namespace explsched
