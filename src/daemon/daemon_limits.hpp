// What explschedd grants one client, one user and one job, and for how long it keeps reports:
// one struct with every default and one table of keys (`explschedd --limit KEY=VALUE`,
// `explschedd --list-limits`). Pure: parsing never logs and a failed parse leaves the caller's
// limits untouched.
//
// Who is "one client": explschedd learns the local uid behind a connection from the kernel
// (NETLINK_SOCK_DIAG: the uid owning the peer's socket) whenever the peer is a socket on this
// host, which on a controller that also runs jobs (and on every test host) is the loopback
// address of every user. Limits then apply per (peer address, uid), so one user's flood cannot
// lock out another user who shares the address. A peer on another host is limited per address,
// with limits high enough for a node full of trials; its uid is known only once its munge
// credential is decoded, and the per-uid rate applies from there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"

namespace explsched::daemon {

// All defaults live here. A real sweep reports a few times a second per trial at most, so the
// per-user rate is far above what honest users send and far below what fills the pipeline.
struct DaemonLimits {
    double user_rate = 200.0;               // reports/s per uid (token bucket refill)
    double user_burst = 1000.0;             // reports per uid at once (bucket size)
    double host_rate = 5000.0;              // reports/s per remote address, before munge
    double host_burst = 20000.0;            // reports per remote address at once
    uint64_t max_points_per_job = 100000;   // stored points per job instance
    std::size_t max_connections = 8192;     // all clients
    std::size_t max_conns_per_user = 64;    // per (address, uid) of a peer on this host
    std::size_t max_conns_per_host = 1024;  // per remote address
    uint32_t auth_deadline = 5;             // s for a new connection to get a request authenticated
    uint32_t idle_timeout = 300;            // s an authenticated connection may stay idle
    uint32_t max_credential_ttl = 60;       // s; longer-lived munge credentials are refused
    bool require_uid_restriction = true;  // refuse credentials any uid could decode (but root's/SlurmUser's)
    uint32_t owner_cache_ttl = 60;        // s a job's owner is remembered
    uint32_t unknown_job_ttl = 5;         // s an unknown job id is remembered
    std::size_t owner_cache_entries = 100000;
    uint64_t retention = uint64_t{30} * 86400;  // s after a job's last report; 0: keep forever
    uint32_t retention_batch = 1000;            // rows deleted per transaction when pruning
    uint32_t retention_period = 3600;           // s between pruning passes
};

struct LimitInfo {
    std::string_view key;
    std::string_view help;
};
const std::vector<LimitInfo>& limit_keys();

// Applies one "key=value"; errors name the key and the value.
Result<DaemonLimits> apply_limit(const DaemonLimits& base, std::string_view key_value);
// "key=value" for every key, in table order.
std::vector<std::string> describe_limits(const DaemonLimits& limits);

}  // namespace explsched::daemon
