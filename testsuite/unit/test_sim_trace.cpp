#define BOOST_TEST_MODULE sim_trace
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>

#include "sim/trace.hpp"

using namespace explsched;
using namespace explsched::sim;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sim_trace)

BOOST_AUTO_TEST_CASE(philly_rows_sorted_relative_to_first_arrival) {
    const std::string text =
        "timestamp,duration,num_gpus,gpu_time,cluster\n"
        "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
        "2017-10-09 06:13:03,2951.0,4,11804.0,6214e9\n"
        "\n"
        "2017-10-10 06:13:03,10,2,20,6214e9\n";
    auto trace = parse_trace(text, "philly.csv");
    BOOST_REQUIRE_MESSAGE(trace.ok(), (trace.ok() ? std::string() : trace.error().message));
    BOOST_TEST(static_cast<int>(trace->format) == static_cast<int>(TraceFormat::philly));
    BOOST_REQUIRE_EQUAL(trace->jobs.size(), 3u);
    BOOST_TEST(trace->jobs[0].arrival == 0.0);
    BOOST_TEST(trace->jobs[0].gpus == 4u);
    BOOST_TEST(trace->jobs[0].line == 3u);
    BOOST_TEST(trace->jobs[1].arrival == 48 * 60 + 52.0);  // 07:01:55 - 06:13:03
    BOOST_TEST(trace->jobs[2].arrival == 86400.0);
    BOOST_TEST(trace->jobs[2].duration == 10.0);
}

BOOST_AUTO_TEST_CASE(bad_philly_row_names_line_and_column) {
    const std::string text =
        "timestamp,duration,num_gpus,gpu_time,cluster\n"
        "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
        "2017-10-09 07:01:56,66.0,two,66.0,11cb48\n";
    auto trace = parse_trace(text, "philly.csv");
    BOOST_REQUIRE(!trace.ok());
    const std::string& m = trace.error().message;
    BOOST_TEST(contains(m, "philly.csv:3:"), m);
    BOOST_TEST(contains(m, "num_gpus"), m);
    BOOST_TEST(contains(m, "'two'"), m);

    auto bad_time = parse_trace("timestamp,duration,num_gpus\n2017-13-09 07:01:55,5,1\n", "t.csv");
    BOOST_REQUIRE(!bad_time.ok());
    BOOST_TEST(contains(bad_time.error().message, "t.csv:2: timestamp"), bad_time.error().message);

    auto negative = parse_trace("timestamp,duration,num_gpus\n2017-01-09 07:01:55,-5,1\n", "t.csv");
    BOOST_REQUIRE(!negative.ok());
    BOOST_TEST(contains(negative.error().message, "t.csv:2: duration: '-5'"), negative.error().message);

    auto short_row = parse_trace("timestamp,duration,num_gpus\n\n\n2017-01-09 07:01:55,5\n", "t.csv");
    BOOST_REQUIRE(!short_row.ok());
    BOOST_TEST(contains(short_row.error().message, "t.csv:4: 2 cells, header has 3"),
               short_row.error().message);
}

BOOST_AUTO_TEST_CASE(pollux_rows_name_application_and_variant) {
    const std::string text =
        "name,time,application,num_replicas,batch_size\n"
        "cifar10-0,107,cifar10,6,2048\n"
        "ncf-2,135,ncf,1,32768\n";
    auto trace = parse_trace(text, "w.csv");
    BOOST_REQUIRE(trace.ok());
    BOOST_TEST(static_cast<int>(trace->format) == static_cast<int>(TraceFormat::pollux));
    BOOST_TEST(trace->jobs[0].application == "cifar10");
    BOOST_TEST(trace->jobs[0].variant == "2048");
    BOOST_TEST(trace->jobs[0].gpus == 6u);
    BOOST_TEST(std::isnan(trace->jobs[0].duration));
    BOOST_TEST(trace->jobs[1].arrival == 28.0);

    auto bad = parse_trace("name,time,application,num_replicas,batch_size\nx,1,ncf,1,0\n", "w.csv");
    BOOST_REQUIRE(!bad.ok());
    BOOST_TEST(contains(bad.error().message, "w.csv:2: batch_size: '0'"), bad.error().message);
}

BOOST_AUTO_TEST_CASE(sacct_jobs_arrays_steps_and_gpus) {
    const std::string text =
        "JobID|JobName|Submit|Start|End|Elapsed|State|AllocTRES\n"
        "100|cifar10|2023-05-01T10:00:00|2023-05-01T10:00:05|2023-05-01T11:00:05|01:00:00|COMPLETED|"
        "billing=4,cpu=4,gres/gpu=2,mem=8G,node=1\n"
        "100.batch|batch|2023-05-01T10:00:00|2023-05-01T10:00:05|2023-05-01T11:00:05|01:00:00|COMPLETED|"
        "cpu=4,gres/gpu=2,mem=8G,node=1\n"
        "101_3|sweep|2023-05-01T10:30:00|2023-05-01T10:31:00|2023-05-01T12:31:00|1-02:00:00|COMPLETED|"
        "cpu=1,gres/gpu:v100=1,mem=1G\n"
        "102|cpu|2023-05-01T10:40:00|2023-05-01T10:41:00|2023-05-01T10:42:00|00:01:00|COMPLETED|cpu=1,mem="
        "1G\n"
        "103|never|2023-05-01T10:50:00|Unknown|Unknown|00:00:00|CANCELLED|gres/gpu=1\n"
        "101_[4-9]|sweep|2023-05-01T10:30:00|Unknown|Unknown|00:00:00|PENDING|\n";
    auto trace = parse_trace(text, "sacct.txt");
    BOOST_REQUIRE_MESSAGE(trace.ok(), (trace.ok() ? std::string() : trace.error().message));
    BOOST_TEST(static_cast<int>(trace->format) == static_cast<int>(TraceFormat::sacct));
    BOOST_REQUIRE_EQUAL(trace->jobs.size(), 2u);
    BOOST_TEST(trace->skipped == 4u);  // a step, a CPU-only job, one that never ran, a pending array
    BOOST_TEST(trace->jobs[0].gpus == 2u);
    BOOST_TEST(trace->jobs[0].duration == 3600.0);
    BOOST_TEST(trace->jobs[0].job_name == "cifar10");
    BOOST_TEST(trace->jobs[1].sweep == "array-101");
    BOOST_TEST(trace->jobs[1].arrival == 1800.0);
    BOOST_TEST(trace->jobs[1].duration == 26 * 3600.0);
    BOOST_TEST(trace->jobs[1].gpus == 1u);
}

BOOST_AUTO_TEST_CASE(bad_sacct_row_names_line) {
    const std::string text =
        "JobID|Submit|ElapsedRaw|ReqTRES\n"
        "7|2023-05-01T10:00:00|60|gres/gpu=1\n"
        "8|yesterday|60|gres/gpu=1\n";
    auto trace = parse_trace(text, "sacct.txt");
    BOOST_REQUIRE(!trace.ok());
    BOOST_TEST(contains(trace.error().message, "sacct.txt:3: Submit: 'yesterday'"), trace.error().message);

    auto no_gpus = parse_trace("JobID|Submit|ElapsedRaw\n7|2023-05-01T10:00:00|60\n", "s");
    BOOST_REQUIRE(!no_gpus.ok());
    BOOST_TEST(contains(no_gpus.error().message, "GPU counts"), no_gpus.error().message);
}

BOOST_AUTO_TEST_CASE(unknown_header_and_empty_input_are_errors) {
    auto unknown = parse_trace("a,b,c\n1,2,3\n", "x.csv");
    BOOST_REQUIRE(!unknown.ok());
    BOOST_TEST(contains(unknown.error().message, "x.csv:1: header"), unknown.error().message);
    BOOST_TEST(!parse_trace("", "x.csv").ok());
    auto header_only = parse_trace("timestamp,duration,num_gpus\n", "x.csv");
    BOOST_REQUIRE(!header_only.ok());
    BOOST_TEST(contains(header_only.error().message, "no jobs"), header_only.error().message);
    auto missing = parse_trace("timestamp,num_gpus\n2017-01-01 00:00:00,1\n", "x.csv", TraceFormat::philly);
    BOOST_REQUIRE(!missing.ok());
    BOOST_TEST(contains(missing.error().message, "no 'duration' column"), missing.error().message);
}

BOOST_AUTO_TEST_CASE(elapsed_and_timestamps) {
    BOOST_TEST(*parse_slurm_elapsed("1-00:00:01") == 86401.0);
    BOOST_TEST(*parse_slurm_elapsed("02:03") == 123.0);
    BOOST_TEST(*parse_slurm_elapsed("00:00:01.5") == 1.5);
    BOOST_TEST(!parse_slurm_elapsed("1:xx:00").ok());
    BOOST_TEST(*parse_timestamp("1970-01-02 00:00:00") == 86400.0);
    BOOST_TEST(*parse_timestamp("2000-03-01T00:00:00") == 951868800.0);
    BOOST_TEST(!parse_timestamp("2000-02-30 25:00:00").ok());
}

BOOST_AUTO_TEST_CASE(shipped_traces_parse) {
    auto philly = read_trace(std::string(EXPLSCHED_DATA_DIR) + "/traces/philly.csv");
    BOOST_REQUIRE_MESSAGE(philly.ok(), (philly.ok() ? std::string() : philly.error().message));
    BOOST_TEST(philly->jobs.size() == 82247u);  // README's 82,248 lines include the header
    auto pollux = read_trace(std::string(EXPLSCHED_DATA_DIR) + "/traces/pollux-workloads/workload-1.csv");
    BOOST_REQUIRE(pollux.ok());
    BOOST_TEST(pollux->jobs.size() == 160u);
}

BOOST_AUTO_TEST_SUITE_END()
