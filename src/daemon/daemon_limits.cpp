#include "daemon/daemon_limits.hpp"

#include <cmath>
#include <functional>

#include "core/base/config_parse.hpp"
#include "core/base/strings.hpp"

namespace explsched::daemon {

namespace {

struct Row {
    std::string_view key;
    std::string_view help;
    std::function<Status(DaemonLimits&, std::string_view)> set;
    std::function<std::string(const DaemonLimits&)> get;
};

template <auto Field>
Status set_rate(DaemonLimits& l, std::string_view v) {
    auto d = parse_finite_double(v);
    if (!d || *d <= 0.0 || *d > 1e9)
        return make_error("'" + std::string(v) + "' is not a number in (0, 1e9]");
    l.*Field = *d;
    return {};
}

template <auto Field, uint64_t Lo, uint64_t Hi>
Status set_count(DaemonLimits& l, std::string_view v) {
    auto n = parse_uint64(v);
    if (!n || *n < Lo || *n > Hi)
        return make_error("'" + std::string(v) + "' is not an integer in [" + std::to_string(Lo) + ", " +
                          std::to_string(Hi) + "]");
    using T = std::remove_reference_t<decltype(l.*Field)>;
    l.*Field = static_cast<T>(*n);
    return {};
}

template <auto Field, uint64_t Lo, uint64_t Hi>
Status set_duration(DaemonLimits& l, std::string_view v) {
    auto n = parse_duration_value(v);
    if (!n) return n.error();
    if (*n < Lo || *n > Hi)
        return make_error("'" + std::string(v) + "' is not a duration in [" + std::to_string(Lo) + "s, " +
                          std::to_string(Hi) + "s]");
    using T = std::remove_reference_t<decltype(l.*Field)>;
    l.*Field = static_cast<T>(*n);
    return {};
}

std::string number(double d) {
    if (d == std::floor(d) && std::fabs(d) < 1e15) return std::to_string(static_cast<int64_t>(d));
    return std::to_string(d);
}

constexpr uint64_t kDay = 86400;

const std::vector<Row>& rows() {
    static const std::vector<Row> table = {
        {"user_rate", "reports/s one uid may send (token bucket refill)", set_rate<&DaemonLimits::user_rate>,
         [](const DaemonLimits& l) { return number(l.user_rate); }},
        {"user_burst", "reports one uid may send at once (bucket size)", set_rate<&DaemonLimits::user_burst>,
         [](const DaemonLimits& l) { return number(l.user_burst); }},
        {"host_rate", "reports/s from one remote address, checked before munge",
         set_rate<&DaemonLimits::host_rate>, [](const DaemonLimits& l) { return number(l.host_rate); }},
        {"host_burst", "reports at once from one remote address", set_rate<&DaemonLimits::host_burst>,
         [](const DaemonLimits& l) { return number(l.host_burst); }},
        {"max_points_per_job", "stored points per job instance; more are refused (too_many_points)",
         set_count<&DaemonLimits::max_points_per_job, 1, uint64_t{1} << 40>,
         [](const DaemonLimits& l) { return std::to_string(l.max_points_per_job); }},
        {"max_connections", "concurrent clients in all",
         set_count<&DaemonLimits::max_connections, 1, 1000000>,
         [](const DaemonLimits& l) { return std::to_string(l.max_connections); }},
        {"max_conns_per_user", "concurrent clients of one uid at one address of this host",
         set_count<&DaemonLimits::max_conns_per_user, 1, 1000000>,
         [](const DaemonLimits& l) { return std::to_string(l.max_conns_per_user); }},
        {"max_conns_per_host", "concurrent clients from one remote address",
         set_count<&DaemonLimits::max_conns_per_host, 1, 1000000>,
         [](const DaemonLimits& l) { return std::to_string(l.max_conns_per_host); }},
        {"auth_deadline", "time a new connection has to get a report authenticated",
         set_duration<&DaemonLimits::auth_deadline, 1, 3600>,
         [](const DaemonLimits& l) { return std::to_string(l.auth_deadline) + "s"; }},
        {"idle_timeout", "time an authenticated connection may stay idle",
         set_duration<&DaemonLimits::idle_timeout, 1, 7 * kDay>,
         [](const DaemonLimits& l) { return std::to_string(l.idle_timeout) + "s"; }},
        {"max_credential_ttl", "longest munge credential TTL accepted",
         set_duration<&DaemonLimits::max_credential_ttl, 1, kDay>,
         [](const DaemonLimits& l) { return std::to_string(l.max_credential_ttl) + "s"; }},
        {"require_uid_restriction",
         "refuse credentials not restricted to explschedd's uid (root's and "
         "SlurmUser's excepted)",
         [](DaemonLimits& l, std::string_view v) -> Status {
             auto b = parse_bool_value(v);
             if (!b) return b.error();
             l.require_uid_restriction = *b;
             return {};
         },
         [](const DaemonLimits& l) { return std::string(l.require_uid_restriction ? "yes" : "no"); }},
        {"owner_cache_ttl", "time a job's owner is remembered",
         set_duration<&DaemonLimits::owner_cache_ttl, 1, kDay>,
         [](const DaemonLimits& l) { return std::to_string(l.owner_cache_ttl) + "s"; }},
        {"unknown_job_ttl", "time a job id slurmctld does not know is remembered",
         set_duration<&DaemonLimits::unknown_job_ttl, 1, 3600>,
         [](const DaemonLimits& l) { return std::to_string(l.unknown_job_ttl) + "s"; }},
        {"owner_cache_entries", "jobs whose owner is remembered, at most",
         set_count<&DaemonLimits::owner_cache_entries, 16, 100000000>,
         [](const DaemonLimits& l) { return std::to_string(l.owner_cache_entries); }},
        {"retention", "prune the reports of a finished job this long after its last report (0: never)",
         set_duration<&DaemonLimits::retention, 0, 100 * 365 * kDay>,
         [](const DaemonLimits& l) { return std::to_string(l.retention) + "s"; }},
        {"retention_batch", "rows deleted per transaction when pruning",
         set_count<&DaemonLimits::retention_batch, 1, 1000000>,
         [](const DaemonLimits& l) { return std::to_string(l.retention_batch); }},
        {"retention_period", "time between pruning passes",
         set_duration<&DaemonLimits::retention_period, 1, 30 * kDay>,
         [](const DaemonLimits& l) { return std::to_string(l.retention_period) + "s"; }},
    };
    return table;
}

}  // namespace

const std::vector<LimitInfo>& limit_keys() {
    static const std::vector<LimitInfo> keys = [] {
        std::vector<LimitInfo> v;
        for (const Row& r : rows()) v.push_back({r.key, r.help});
        return v;
    }();
    return keys;
}

Result<DaemonLimits> apply_limit(const DaemonLimits& base, std::string_view key_value) {
    auto kv = split_key_value(key_value);
    if (!kv) return kv.error();
    for (const Row& r : rows()) {
        if (r.key != kv->key) continue;
        DaemonLimits out = base;
        if (Status s = r.set(out, kv->value); !s)
            return make_error("limit '" + std::string(r.key) + "': " + s.error().message);
        return out;
    }
    std::string known;
    for (const Row& r : rows()) known += (known.empty() ? "" : ", ") + std::string(r.key);
    return make_error("unknown limit '" + std::string(kv->key) + "' (known: " + known + ")");
}

std::vector<std::string> describe_limits(const DaemonLimits& limits) {
    std::vector<std::string> out;
    for (const Row& r : rows()) out.push_back(std::string(r.key) + "=" + r.get(limits));
    return out;
}

}  // namespace explsched::daemon
