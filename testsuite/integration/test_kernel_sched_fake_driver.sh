#!/bin/bash
# The device level on the local cluster, with our FAKE libcuda.so.1 (this machine has no GPU
# driver), set up the way a site without systemd does it: slurm.conf's Prolog is
# contrib/slurm/prolog-kerneld.sh, which starts one explsched-kerneld per GPU of the job as a
# dedicated unprivileged user (made by this test), outside the job. For a job with
# --kernel-sched the SPANK plugin registers each step with that daemon once (uid, priority from
# slurmctld) and preloads the intercept library into every task. Checks: the daemon runs as its
# user and outlives the job; every step's registration reached it with the job's priority; the
# steps' kernel launches are scheduled (explsched kstat); an ordinary user's enforce job is
# served by the same daemon with the priority slurmctld gave it.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
b=$top_builddir
fake=$b/testsuite/kernel_sched/fakecuda
workload=$b/testsuite/kernel_sched/ks_fake_workload
prolog=$b/contrib/explsched-prolog-kerneld.sh
epilog=$b/contrib/explsched-epilog-kerneld.sh
[ -f "$fake/libcuda.so.1" ] && [ -x "$workload" ] || skip "fake driver test programs not built (make check builds them)"
[ -f "$b/src/kernel_sched/.libs/libexplsched_intercept.so" ] || skip "intercept library not built"
[ -x "$b/src/kernel_sched/explsched-kerneld" ] || skip "explsched-kerneld not built"
[ -f "$prolog" ] && [ -f "$epilog" ] || skip "contrib prolog/epilog not built (make -C contrib)"
command -v useradd >/dev/null || skip "useradd is not installed"

# The daemon's user and a job user: real unprivileged users, removed when the test ends.
kuser=esh_kd$$
juser=esh_ju$$
useradd -M -N -s /usr/sbin/nologin $kuser || skip "cannot create the user $kuser"
useradd -M -N -s /usr/sbin/nologin $juser || { userdel $kuser; skip "cannot create the user $juser"; }

# One node: several slurmd on one host would share the per-GPU runtime directory. The runtime
# directory must be root's all the way up (/tmp, root's and sticky, is allowed on the way).
libexec=$(mktemp -d /tmp/explsched-libexec.XXXXXX)
chmod 755 "$libexec"
runtime=$libexec/run/ksched
ln -s "$b/src/kernel_sched/explsched-kerneld" "$libexec/explsched-kerneld"
ln -s "$b/src/kernel_sched/.libs/libexplsched_intercept.so" "$libexec/libexplsched_intercept.so"
# slurmd runs the Prolog/Epilog with Slurm's environment only: the site's settings go in a wrapper.
for kind in prolog epilog; do
    src=$prolog; [ $kind = epilog ] && src=$epilog
    cat >"$libexec/$kind.sh" <<EOF
#!/bin/sh
env | grep -E '^(SLURM_JOB_ID|SLURM_JOB_GPUS|CUDA_VISIBLE_DEVICES)=' | tr '\n' ' ' >>"$libexec/$kind.env"; echo >>"$libexec/$kind.env"
export EXPLSCHED_RUNTIME_DIR=$runtime EXPLSCHED_KERNELD_USER=$kuser
export EXPLSCHED_KERNELD=$b/src/kernel_sched/explsched-kerneld EXPLSCHED_KERNELD_ARGS=--verbose
exec /bin/sh $src
EOF
    chmod 755 "$libexec/$kind.sh"
done
kerneld_pids() { cat "$runtime"/gpu*/kerneld.pid 2>/dev/null; }
on_exit_hook() {
    for p in $(kerneld_pids); do kill -TERM "$p" 2>/dev/null; done
    sleep 0.3
    for p in $(kerneld_pids); do kill -KILL "$p" 2>/dev/null; done
    userdel $kuser 2>/dev/null
    userdel $juser 2>/dev/null
    [ "${KEEP_CLUSTER:-0}" = 1 ] || rm -rf "$libexec"
}
start_cluster --nodes 1 --gpus 2 --conf "Prolog=$libexec/prolog.sh" --conf "Epilog=$libexec/epilog.sh" \
    --spank-args "runtime_dir=$libexec/run libexec_dir=$libexec kerneld_user=$kuser"
kstat() { "$b/src/cli/explsched" kstat --runtime-dir "$runtime" "$@"; }
kstat_field() {  # kstat_field STEP FIELD: the field of STEP in kstat --json (empty if absent)
    kstat --json 2>/dev/null | /usr/bin/python3 -c 'import json,sys
for j in json.load(sys.stdin):
    if j["job"] == sys.argv[1]: print(j[sys.argv[2]])' "$1" "$2" 2>/dev/null
}
launches() {
    kstat --json 2>/dev/null | /usr/bin/python3 -c 'import json,sys
print(sum(j["launches"] for j in json.load(sys.stdin)))' 2>/dev/null || echo 0
}
klog() { cat "$runtime/gpu$1/kerneld.log" 2>/dev/null; }

# A batch job whose two concurrent steps launch kernels on its one GPU.
job=$(submit --gres=gpu:1 --kernel-sched=observe -o job.out --wrap "
    echo \"batch LD_PRELOAD=\$LD_PRELOAD CUDA_VISIBLE_DEVICES=\$CUDA_VISIBLE_DEVICES\"
    export LD_LIBRARY_PATH=$fake
    srun --overlap -n1 $workload --name stepA --count 400 --us 50 --hold-ms 4000 > stepA.out 2>&1 &
    srun --overlap -n1 $workload --name stepB --count 400 --us 50 --hold-ms 4000 > stepB.out 2>&1 &
    wait")
wait_until 30 '[ "$(job_state $job)" = RUNNING ]' "job $job running"
gpu=$(wait_until 15 'grep -q CUDA_VISIBLE_DEVICES= job.out 2>/dev/null' "batch output" && sed -n 's/.*CUDA_VISIBLE_DEVICES=\([0-9]*\).*/\1/p' job.out)
pass "prolog saw: $(cat "$libexec/prolog.env" 2>/dev/null)"
grep -q "libexplsched_intercept.so" job.out || fail "the batch step has no LD_PRELOAD of the intercept (was the step registered?): $(cat job.out)"
pass "batch step: $(cat job.out)"
[ -S "$runtime/gpu$gpu/kerneld.sock" ] || fail "no kerneld socket for GPU $gpu: $(ls -l "$runtime" "$runtime/gpu$gpu" 2>&1)"
kpid=$(cat "$runtime/gpu$gpu/kerneld.pid")
kill -0 "$kpid" 2>/dev/null || fail "kerneld for GPU $gpu (pid $kpid) is not running: $(klog "$gpu")"
[ "$(ps -o user= -p "$kpid" | tr -d ' ')" = "$kuser" ] || fail "kerneld runs as $(ps -o user= -p "$kpid"), not $kuser"
[ "$(stat -c %U "$runtime/gpu$gpu/kerneld.sock")" = "$kuser" ] || fail "the socket is not $kuser's"
[ "$(ps -o sid= -p "$kpid" | tr -d ' ')" = "$kpid" ] || fail "kerneld is not in a session of its own"
pass "the prolog started kerneld (pid $kpid, user $kuser, own session) for GPU $gpu"
[ "$(find "$runtime" -name kerneld.pid | wc -l)" = 1 ] || fail "a kerneld for a GPU the job does not have"

# Registration: slurmstepd registers each step (batch, 0, 1) with the job's priority from
# slurmctld, once; the tasks' clients are given that priority.
prio=$(job_field $job Priority)
[ -n "$prio" ] && [ "$prio" -gt 0 ] || fail "job $job has no positive priority ($prio): cannot tell it from the default"
for s in batch 0 1; do
    wait_until 15 'klog $gpu | grep -q "registered step $job.$s uid 0 priority $prio\.0"' \
        "kerneld to log the registration of step $job.$s with priority $prio"
done
pass "steps $job.batch, $job.0, $job.1 registered with kerneld, uid 0, priority $prio (slurmctld's):"
klog "$gpu" | grep "registered step $job\." | sed 's/^/    /'
for s in 0 1; do
    [ "$(klog "$gpu" | grep -c "registered step $job.$s ")" = 1 ] || fail "step $job.$s registered more than once"
done
wait_until 20 '[ "$(launches)" -ge 400 ]' "kstat to show the steps' kernel launches"
for s in 0 1; do
    p=$(kstat_field "$job.$s" priority)
    [ "${p%.*}" = "$prio" ] || fail "kstat: step $job.$s runs at priority '$p', not $prio: $(kstat)"
done
pass "explsched kstat while running (the steps' clients at priority $prio):"
kstat | sed 's/^/    /'

wait_until 60 '[ -z "$(squeue -h -j $job -o %i)" ]' "job $job to finish"
[ "$(job_field $job JobState)" = COMPLETED ] || fail "job ended $(job_field $job JobState): $(cat stepA.out stepB.out)"
grep -q "^done" stepA.out && grep -q "^done" stepB.out || fail "workloads did not finish: $(cat stepA.out stepB.out)"
for s in 0 1; do
    n=$(kstat_field "$job.$s" launches)
    [ "${n:-0}" -ge 400 ] || fail "step $job.$s: $n launches counted, expected 400"
done
wait_until 15 'klog $gpu | grep -q "unregistered step $job.batch "' "the batch step to unregister"
sleep 1
kill -0 "$kpid" 2>/dev/null || fail "kerneld stopped with the job (it serves every job on its GPU)"
pass "the job's steps unregistered at exit; kerneld (pid $kpid) outlives the job"

# An ordinary user's job, enforce mode: the same daemon serves it at slurmctld's priority.
ujob=$(setpriv --reuid=$juser --regid="$(id -g $juser)" --clear-groups env SLURM_CONF="$SLURM_CONF" \
    sbatch --parsable --gres=gpu:1 --kernel-sched=enforce -o user.out \
    --wrap "echo CUDA_VISIBLE_DEVICES=\$CUDA_VISIBLE_DEVICES; LD_LIBRARY_PATH=$fake exec $workload --name user --count 300 --us 50 --hold-ms 3000")
[ -n "$ujob" ] || fail "the user's job was not submitted"
wait_until 30 '[ "$(job_state $ujob)" = RUNNING ]' "the user's job running"
ugpu=$(wait_until 15 'grep -q CUDA_VISIBLE_DEVICES= user.out 2>/dev/null' "user job output" && sed -n 's/^CUDA_VISIBLE_DEVICES=\([0-9]*\).*/\1/p' user.out)
uprio=$(job_field $ujob Priority)
juid=$(id -u $juser)
wait_until 15 'klog $ugpu | grep -q "registered step $ujob.batch uid $juid priority $uprio\.0"' \
    "GPU $ugpu's kerneld to register $ujob.batch for uid $juid with priority $uprio"
[ "$ugpu" != "$gpu" ] || [ "$(cat "$runtime/gpu$gpu/kerneld.pid")" = "$kpid" ] || fail "the prolog restarted a running kerneld"
wait_until 30 '[ "$(kstat_field $ujob.batch admitted)" -ge 300 ] 2>/dev/null' "the user's launches to be admitted (enforce)"
pass "user $juser's job (uid $juid, priority $uprio) is scheduled in enforce mode by the kerneld user's daemons:"
kstat | sed 's/^/    /'
wait_until 60 '[ -z "$(squeue -h -j $ujob -o %i)" ]' "the user's job to finish"
[ "$(job_field $ujob JobState)" = COMPLETED ] || fail "the user's job ended $(job_field $ujob JobState): $(cat user.out)"
grep -q "^done" user.out || fail "the user's workload did not finish: $(cat user.out)"
pass "the user's job completed: $(cat user.out)"
