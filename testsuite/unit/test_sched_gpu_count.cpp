#define BOOST_TEST_MODULE test_sched_gpu_count
#include <boost/test/unit_test.hpp>

#include "core/sched/gpu_count.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(sched_gpu_count)

BOOST_AUTO_TEST_CASE(node_gres) {
    BOOST_TEST(node_gpus("gpu:4").count == 4u);
    BOOST_TEST(node_gpus("gpu:4(S:0-1)").count == 4u);
    const GpuCount typed = node_gpus("gpu:v100:2,gpu:a100:2,mps:200");
    BOOST_TEST(typed.count == 4u);
    BOOST_TEST(typed.type == "v100");
    BOOST_TEST(node_gpus("").count == 0u);
    BOOST_TEST(node_gpus("gpus:8,gpu_mem:4").count == 0u);  // not GPUs
}

BOOST_AUTO_TEST_CASE(job_tres) {
    BOOST_TEST(tres_gpus("gres:gpu:1").count == 1u);
    BOOST_TEST(tres_gpus("gres/gpu:a100=2").count == 2u);
    BOOST_TEST(tres_gpus("gres/gpu=3").count == 3u);
    BOOST_TEST(tres_gpus("gres:gpu:v100:2,license/x:1").type == "v100");
    BOOST_TEST(tres_gpus("cpu=4,mem=1G").count == 0u);
    BOOST_TEST(tres_gpus("gres:gpu:abc").count == 1u);       // a type without a count means one
    BOOST_TEST(job_gpus("", "gres:gpu:2", "", 3, 1) == 6u);  // per node x nodes
    BOOST_TEST(job_gpus("gres:gpu:4", "", "", 2, 1) == 4u);  // per job
    BOOST_TEST(job_gpus("", "", "gres:gpu:1", 1, 8) == 8u);  // per task x tasks
    BOOST_TEST(job_gpus("", "", "", 1, 1) == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
