// Remote context (slurmstepd): runs in every step of a trial. It exports to the tasks what the
// training code needs to report its curve: the sweep and metric, and where explschedd listens.
#include <string>

#include "spank_contexts.hpp"
#include "spank_options.hpp"

namespace explsched::spank {

namespace {

int set_env(spank_t sp, const std::string& name, const std::string& value) {
    const spank_err_t rc = spank_setenv(sp, name.c_str(), value.c_str(), 1);
    if (rc != ESPANK_SUCCESS) {
        slurm_error("explsched: cannot set %s in the step: %s", name.c_str(), spank_strerror(rc));
        return rc;
    }
    return 0;
}

}  // namespace

int remote_user_init(spank_t sp, const Settings& settings) {
    const RawOptions& raw = recorded_options();
    if (!raw.any()) return 0;
    auto spec = validated_spec(raw);
    if (!spec) {
        // Submit-time validation makes this unreachable unless the record was altered.
        slurm_error("explsched: %s", spec.error().message.c_str());
        return ESPANK_BAD_ARG;
    }
    for (const auto& [name, value] : explore_env(*spec))
        if (int rc = set_env(sp, name, value); rc != 0) return rc;
    if (!spec->exploratory()) return 0;
    uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) == ESPANK_SUCCESS)
        if (int rc = set_env(sp, "EXPLSCHED_JOB_ID", std::to_string(job_id)); rc != 0) return rc;
    if (!settings.munge_socket.empty())
        if (int rc = set_env(sp, "EXPLSCHED_MUNGE_SOCKET", settings.munge_socket); rc != 0) return rc;
    return set_env(sp, "EXPLSCHED_REPORT_ADDR", settings.report_host + ":" + std::to_string(settings.report_port));
}

int remote_exit(spank_t /*sp*/, const Settings& /*settings*/) { return 0; }

}  // namespace explsched::spank
