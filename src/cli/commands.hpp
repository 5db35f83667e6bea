// Subcommands of `explsched`. Each returns the process exit status: 0 success, 1 failure of the
// operation, 2 bad usage.
#pragma once

namespace explsched::cli {

const char* version();

int cmd_config(int argc, char** argv);
int cmd_kstat(int argc, char** argv);
int cmd_plot(int argc, char** argv);
int cmd_predict(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_show(int argc, char** argv);
int cmd_why(int argc, char** argv);

}  // namespace explsched::cli
