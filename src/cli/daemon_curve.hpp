// A job's curve from explschedd, for users who may not read the report database (it is readable
// by SlurmUser and root only): a munge-signed curve request (core/report/curve_wire.hpp) answered
// with the newest instance of the job, if it is the caller's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "core/report/report_store.hpp"

namespace explsched::cli {

struct DaemonCurve {
    std::string address;  // where it came from ("host:port")
    std::vector<StoredReport> rows;
};

// Address: $EXPLSCHED_REPORT_ADDR, else the settings file; munge socket likewise; the credential
// is restricted to $EXPLSCHED_REPORT_UID, else to SlurmUser (from `scontrol show config`).
Result<DaemonCurve> read_curve_from_daemon(uint32_t job_id, double timeout_s = 10.0);

}  // namespace explsched::cli
