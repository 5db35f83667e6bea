#include "core/sched/gpu_count.hpp"

#include <algorithm>
#include <vector>

#include "core/base/strings.hpp"

namespace explsched {

namespace {

// One "gpu[:type]:N[(...)]" (node) or "gres:gpu[:type]:N" / "gres/gpu[:type][:=]N" (TRES) item,
// with the leading "gres:" / "gres/" already removed. Returns false if not a GPU item.
bool gpu_item(std::string_view item, GpuCount& out) {
    if (const auto paren = item.find('('); paren != std::string_view::npos) item = item.substr(0, paren);
    if (item.substr(0, 3) != "gpu") return false;
    item.remove_prefix(3);
    if (item.empty()) {  // "gpu" alone means one
        out.count += 1;
        return true;
    }
    if (item.front() != ':' && item.front() != '=') return false;  // e.g. "gpus", "gpu_mem"
    item.remove_prefix(1);
    // [type:]N  or  [type=]N
    std::string_view type;
    std::string_view number = item;
    if (const auto sep = item.find_last_of(":="); sep != std::string_view::npos) {
        type = item.substr(0, sep);
        number = item.substr(sep + 1);
    }
    auto n = parse_uint64(number);
    if (!n) {
        // "gpu:v100" without a count: one GPU of that type
        if (type.empty() && !number.empty()) {
            if (out.type.empty()) out.type = std::string(number);
            out.count += 1;
            return true;
        }
        return false;
    }
    if (!type.empty() && out.type.empty()) out.type = std::string(type);
    out.count += *n;
    return true;
}

}  // namespace

GpuCount node_gpus(std::string_view gres) {
    GpuCount out;
    for (std::string_view item : split(gres, ",")) gpu_item(trim(item), out);
    return out;
}

GpuCount tres_gpus(std::string_view tres) {
    GpuCount out;
    for (std::string_view item : split(tres, ",")) {
        item = trim(item);
        if (item.substr(0, 5) != "gres:" && item.substr(0, 5) != "gres/") continue;
        gpu_item(item.substr(5), out);
    }
    return out;
}

uint64_t job_gpus(uint64_t per_job, uint64_t per_node, uint64_t per_task, uint64_t nodes, uint64_t tasks) {
    return per_job + per_node * std::max<uint64_t>(nodes, 1) + per_task * std::max<uint64_t>(tasks, 1);
}

uint64_t job_gpus(std::string_view per_job, std::string_view per_node, std::string_view per_task,
                  uint64_t nodes, uint64_t tasks) {
    return job_gpus(tres_gpus(per_job).count, tres_gpus(per_node).count, tres_gpus(per_task).count, nodes,
                    tasks);
}

}  // namespace explsched
