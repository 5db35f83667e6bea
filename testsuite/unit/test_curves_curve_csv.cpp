#define BOOST_TEST_MODULE test_curves_curve_csv
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>

#include "core/curves/curve_csv.hpp"
#include "temp_dir.hpp"

using namespace explsched;

BOOST_AUTO_TEST_SUITE(curve_csv)

BOOST_AUTO_TEST_CASE(picks_the_first_step_column_in_order) {
    auto a = parse_curve_csv("progress,iteration,metric\n1.5,10,0.3\n3.0,20,0.5\n", "t.csv");
    BOOST_REQUIRE(a.ok());
    BOOST_TEST(a->step_column == "iteration");
    BOOST_TEST(a->points.size() == 2u);
    BOOST_TEST(a->points[1].step == 20.0);
    BOOST_TEST(a->points[1].metric == 0.5);
    auto b = parse_curve_csv("progress,step,metric\n1,2,3\n", "t.csv");
    BOOST_REQUIRE(b.ok());
    BOOST_TEST(b->step_column == "step");
    auto c = parse_curve_csv("progress,loss\n1,2\n", "t.csv", "loss");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->step_column == "progress");
    BOOST_TEST(c->points[0].metric == 2.0);
}

BOOST_AUTO_TEST_CASE(tolerates_crlf_blank_lines_and_spaces) {
    auto r = parse_curve_csv("step, metric\r\n\r\n 1 , 0.5\r\n2,0.6\r\n", "t.csv");
    BOOST_REQUIRE(r.ok());
    BOOST_TEST(r->points.size() == 2u);
}

BOOST_AUTO_TEST_CASE(nan_metric_is_kept_for_divergence) {
    auto r = parse_curve_csv("step,metric\n1,0.5\n2,nan\n", "t.csv");
    BOOST_REQUIRE(r.ok());
    BOOST_TEST(std::isnan(r->points[1].metric));
}

BOOST_AUTO_TEST_CASE(errors_name_the_line_and_column) {
    auto missing_step = parse_curve_csv("epoch,metric\n1,2\n", "f.csv");
    BOOST_REQUIRE(!missing_step.ok());
    BOOST_TEST(missing_step.error().message ==
               "f.csv:1: header has no step column (step, iteration or progress)");
    auto missing_metric = parse_curve_csv("step,acc\n1,2\n", "f.csv");
    BOOST_REQUIRE(!missing_metric.ok());
    BOOST_TEST(missing_metric.error().message.find("no metric column 'metric'") != std::string::npos);
    auto bad_cell = parse_curve_csv("step,metric\n1,0.5\n2,abc\n", "f.csv");
    BOOST_REQUIRE(!bad_cell.ok());
    BOOST_TEST(bad_cell.error().message == "f.csv:3: column 'metric': 'abc' is not a number");
    auto bad_step = parse_curve_csv("step,metric\nx,0.5\n", "f.csv");
    BOOST_REQUIRE(!bad_step.ok());
    BOOST_TEST(bad_step.error().message.find("f.csv:2: column 'step'") == 0u);
    auto short_row = parse_curve_csv("step,metric\n1\n", "f.csv");
    BOOST_REQUIRE(!short_row.ok());
    BOOST_TEST(short_row.error().message == "f.csv:2: 1 cells, header has 2");
    auto back = parse_curve_csv("step,metric\n2,0.5\n1,0.6\n", "f.csv");
    BOOST_REQUIRE(!back.ok());
    BOOST_TEST(back.error().message.find("f.csv:3:") == 0u);
    BOOST_TEST(back.error().message.find("decreases") != std::string::npos);
    auto empty = parse_curve_csv("", "f.csv");
    BOOST_REQUIRE(!empty.ok());
    BOOST_TEST(empty.error().message.find("empty file") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(missing_file_is_an_error) {
    auto r = read_curve_csv("/nonexistent/curve.csv");
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message.find("/nonexistent/curve.csv: cannot open") == 0u);
}

BOOST_AUTO_TEST_CASE(reads_the_shared_data_set) {
    const std::string path = std::string(EXPLSCHED_DATA_DIR) + "/curves/cifar10/validation-128.csv";
    if (!std::filesystem::exists(path)) {
        BOOST_TEST_MESSAGE("shared data not present: " << path);
        return;
    }
    auto r = read_curve_csv(path);
    BOOST_REQUIRE(r.ok());
    BOOST_TEST(r->step_column == "iteration");
    BOOST_TEST(r->points.size() == 100u);
    BOOST_TEST(r->points.back().metric > 0.9);
}

BOOST_AUTO_TEST_CASE(a_sweeps_direction_file) {
    TempDir dir;
    auto none = read_direction_file(dir.path.string());
    BOOST_REQUIRE(none.ok());
    BOOST_TEST(!none->has_value());
    dir.write("direction", "min\n");
    auto min = read_direction_file(dir.path.string());
    BOOST_REQUIRE(min.ok() && min->has_value());
    BOOST_TEST(static_cast<int>(**min) == static_cast<int>(Direction::minimize));
    dir.write("direction", "up\n");
    auto bad = read_direction_file(dir.path.string());
    BOOST_REQUIRE(!bad.ok());
    BOOST_TEST(bad.error().message.find((dir.path / "direction").string() + ": ") == 0u);
    BOOST_TEST(bad.error().message.find("'up'") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
