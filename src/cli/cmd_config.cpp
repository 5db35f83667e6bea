// explsched config [--file FILE] [--params TEXT] [--args K=V ...] [--list]
// Checks settings the way the plugins and explschedd parse them and prints the effective values,
// so an admin can validate a PriorityParameters line before `scontrol reconfigure`.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/sched/settings.hpp"
#include "explsched_config.h"

namespace explsched::cli {

const char* version() { return PACKAGE_VERSION; }

int cmd_config(int argc, char** argv) {
    Settings settings;
    bool list = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto need_value = [&](const char* opt) -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "explsched config: %s needs a value\n", opt);
                return nullptr;
            }
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h") {
            std::printf(
                "usage: explsched config [--params 'k=v,k=v'] [--file FILE] [k=v ...] [--list]\n"
                "Parses settings as slurm.conf PriorityParameters (--params), an explschedd.conf\n"
                "file (--file) or plugstack.conf arguments (k=v), then prints every effective value.\n"
                "--list prints every key with its meaning.\n");
            return 0;
        } else if (arg == "--list") {
            list = true;
        } else if (arg == "--params") {
            const char* v = need_value("--params");
            if (v == nullptr) return 2;
            auto r = parse_settings(v, ",", settings);
            if (!r) {
                std::fprintf(stderr, "explsched: PriorityParameters: %s\n", r.error().message.c_str());
                return 1;
            }
            settings = std::move(r).value();
        } else if (arg == "--file") {
            const char* v = need_value("--file");
            if (v == nullptr) return 2;
            std::ifstream in(v);
            if (!in) {
                std::fprintf(stderr, "explsched: cannot read %s: %s\n", v, std::strerror(errno));
                return 1;
            }
            std::stringstream text;
            text << in.rdbuf();
            auto r = parse_settings_file_text(text.str(), v, settings);
            if (!r) {
                std::fprintf(stderr, "explsched: %s\n", r.error().message.c_str());
                return 1;
            }
            settings = std::move(r).value();
        } else if (arg.find('=') != std::string::npos) {
            auto r = apply_setting(settings, arg);
            if (!r) {
                std::fprintf(stderr, "explsched: %s\n", r.error().message.c_str());
                return 1;
            }
            settings = std::move(r).value();
        } else {
            std::fprintf(stderr, "explsched config: unknown option '%s'\n", arg.c_str());
            return 2;
        }
    }
    if (list) {
        for (const auto& k : setting_keys())
            std::printf("%-26s %.*s\n", std::string(k.key).c_str(), static_cast<int>(k.help.size()),
                        k.help.data());
        return 0;
    }
    for (const auto& line : describe_settings(settings)) std::printf("%s\n", line.c_str());
    return 0;
}

}  // namespace explsched::cli
