// `explsched-sim net`: entry point of the network-contention scenario (net_main.cpp).
#pragma once

namespace explsched::sim {

// argv[0] is "net"; returns the process exit status.
int net_main(int argc, char** argv);

}  // namespace explsched::sim
