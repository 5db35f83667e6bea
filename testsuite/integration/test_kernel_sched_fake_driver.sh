#!/bin/bash
# The device level on the local cluster, with our FAKE libcuda.so.1 (this machine has no GPU
# driver): for a job with --kernel-sched, the SPANK plugin starts one explsched-kerneld for the
# step's GPU, preloads the intercept library into every task, reuses the daemon for a second
# concurrent step on the same GPU, and stops it when the last step on that GPU ends. The
# daemon's statistics (explsched kstat) show the job's kernel launches.
set -u
. "$(dirname "$0")/lib.sh"
require_cluster
b=$top_builddir
fake=$b/testsuite/kernel_sched/fakecuda
workload=$b/testsuite/kernel_sched/ks_fake_workload
[ -f "$fake/libcuda.so.1" ] && [ -x "$workload" ] || skip "fake driver test programs not built (make check builds them)"
[ -f "$b/src/kernel_sched/.libs/libexplsched_intercept.so" ] || skip "intercept library not built"

# One node: several slurmd on one host would share the per-GPU runtime directory.
libexec=$(mktemp -d /tmp/explsched-libexec.XXXXXX)
chmod 755 "$libexec"
ln -s "$b/src/kernel_sched/explsched-kerneld" "$libexec/explsched-kerneld"
ln -s "$b/src/kernel_sched/.libs/libexplsched_intercept.so" "$libexec/libexplsched_intercept.so"
start_cluster --nodes 1 --gpus 2 --spank-args "runtime_dir=$libexec/run libexec_dir=$libexec"
runtime=$libexec/run/ksched
kstat() { "$b/src/cli/explsched" kstat --runtime-dir "$runtime" "$@"; }

# A batch job whose two concurrent steps launch kernels on its one GPU.
job=$(submit --gres=gpu:1 --kernel-sched=observe -o job.out --wrap "
    echo \"batch LD_PRELOAD=\$LD_PRELOAD CUDA_VISIBLE_DEVICES=\$CUDA_VISIBLE_DEVICES\"
    export LD_LIBRARY_PATH=$fake
    srun --overlap -n1 $workload --name stepA --count 400 --us 50 --hold-ms 4000 > stepA.out 2>&1 &
    srun --overlap -n1 $workload --name stepB --count 400 --us 50 --hold-ms 4000 > stepB.out 2>&1 &
    wait")
wait_until 30 '[ "$(job_state $job)" = RUNNING ]' "job $job running"
gpu=$(wait_until 15 'grep -q CUDA_VISIBLE_DEVICES= job.out' "batch output" && sed -n 's/.*CUDA_VISIBLE_DEVICES=\([0-9]*\).*/\1/p' job.out)
grep -q "libexplsched_intercept.so" job.out || fail "the batch step has no LD_PRELOAD of the intercept: $(cat job.out)"
pass "batch step: $(cat job.out)"
wait_until 15 '[ -f "$runtime/gpu$gpu/kerneld.pid" ] && kill -0 $(cat "$runtime/gpu$gpu/kerneld.pid") 2>/dev/null' \
    "explsched-kerneld for GPU $gpu"
kpid=$(cat "$runtime/gpu$gpu/kerneld.pid")
wait_until 15 '[ "$(ls "$runtime/gpu$gpu/steps" 2>/dev/null | wc -l)" -ge 3 ]' "3 live steps on GPU $gpu (batch + 2 sruns)"
pass "one kerneld (pid $kpid) serves GPU $gpu for steps: $(ls "$runtime/gpu$gpu/steps" | tr '\n' ' ')"
[ "$(find "$runtime" -name kerneld.pid | wc -l)" = 1 ] || fail "more than one kerneld started"
launches() {
    kstat --json 2>/dev/null | /usr/bin/python3 -c 'import json,sys
print(sum(j["launches"] for j in json.load(sys.stdin)))' 2>/dev/null || echo 0
}
wait_until 20 '[ "$(launches)" -ge 400 ]' "kstat to show the steps' kernel launches"
pass "explsched kstat while running:"
kstat | sed 's/^/    /'

wait_until 60 '[ -z "$(squeue -h -j $job -o %i)" ]' "job $job to finish"
[ "$(job_field $job JobState)" = COMPLETED ] || fail "job ended $(job_field $job JobState): $(cat stepA.out stepB.out)"
grep -q "^done" stepA.out && grep -q "^done" stepB.out || fail "workloads did not finish: $(cat stepA.out stepB.out)"
wait_until 15 '! kill -0 $kpid 2>/dev/null' "kerneld to stop after the last step"
pass "kerneld stopped when the job's last step on GPU $gpu ended"
# An ordinary user's job: the daemon (root's) serves it too.
TEST_USER=explsched-test
id -u $TEST_USER >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/sh $TEST_USER \
    || skip "cannot create the user $TEST_USER"
ujob=$(runuser -u $TEST_USER -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable --gres=gpu:1 --kernel-sched=enforce \
    -o user.out --wrap "LD_LIBRARY_PATH=$fake exec $workload --name user --count 300 --us 50 --hold-ms 3000")
wait_until 30 '[ "$(launches)" -ge 300 ]' "kstat to show the ordinary user's launches"
pass "a job of user $TEST_USER is scheduled by the same root daemon (enforce):"
kstat | sed 's/^/    /'
wait_until 60 '[ -z "$(squeue -h -j $ujob -o %i)" ]' "the user's job to finish"
[ "$(job_field $ujob JobState)" = COMPLETED ] || fail "the user's job ended $(job_field $ujob JobState): $(cat user.out)"
grep -q "^done" user.out || fail "the user's workload did not finish: $(cat user.out)"
pass "the user's job completed: $(cat user.out)"
rm -rf "$libexec"
