#include "cli/why_placement.hpp"

#include <cstdio>
#include <memory>
#include <sstream>

#include "cli/trial_source.hpp"
#include "core/base/strings.hpp"

namespace explsched::cli {

std::optional<LivePlacement> live_placement(const std::string& job) {
    if (!is_job_name(job)) return std::nullopt;  // a job id, nothing for the shell
    const std::string command = "scontrol show job " + job + " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
    if (!pipe) return std::nullopt;
    std::string text;
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, pipe.get()) != nullptr) text += buffer;
    if (::pclose(pipe.release()) != 0) return std::nullopt;
    LivePlacement out;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        const std::string_view l = trim(line);
        if (l.rfind("SystemComment=placement: ", 0) == 0) out.text = std::string(l.substr(14));
        // a trial's ranking line carries it at its end: "...; placement: nodes ..."
        if (l.rfind("SystemComment=explsched: ", 0) == 0)
            if (const auto at = l.find("; placement: "); at != std::string_view::npos)
                out.text = std::string(l.substr(at + 2));
        for (auto field : split(l, " "))
            if (field.rfind("JobState=", 0) == 0) out.state = std::string(field.substr(9));
    }
    if (out.text.empty()) return std::nullopt;
    return out;
}

}  // namespace explsched::cli
