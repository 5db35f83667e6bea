#define BOOST_TEST_MODULE sim_curve_library
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/curve_library.hpp"
#include "temp_dir.hpp"

using namespace explsched;
using namespace explsched::sim;
namespace fs = std::filesystem;

namespace {

const std::string kCurves = std::string(EXPLSCHED_DATA_DIR) + "/curves";

}  // namespace

BOOST_AUTO_TEST_SUITE(sim_curve_library)

BOOST_AUTO_TEST_CASE(shipped_curves_load_with_directions_and_ranges) {
    auto lib = CurveLibrary::load(kCurves);
    BOOST_REQUIRE_MESSAGE(lib.ok(), (lib.ok() ? std::string() : lib.error().message));
    BOOST_REQUIRE_EQUAL(lib->apps().size(), 4u);
    const int ds = lib->find("deepspeech2");
    const int cifar = lib->find("cifar10");
    BOOST_REQUIRE(ds >= 0 && cifar >= 0);
    const Application& speech = lib->apps()[static_cast<std::size_t>(ds)];
    const Application& c10 = lib->apps()[static_cast<std::size_t>(cifar)];
    BOOST_TEST(static_cast<int>(speech.direction) == static_cast<int>(Direction::minimize));  // WER
    BOOST_TEST(static_cast<int>(c10.direction) == static_cast<int>(Direction::maximize));     // accuracy
    BOOST_TEST(c10.variants.size() == 6u);
    BOOST_TEST(c10.variants.front().name == "128");  // numeric order
    BOOST_TEST(c10.variants.back().name == "4096");
    BOOST_TEST(c10.find_variant("2048") != nullptr);
    BOOST_TEST(c10.job_type == "ResNet-18 (batch size 64)");
    // quality: untrained level 0, best report 1, clamped, direction-aware
    BOOST_TEST(c10.quality(c10.untrained) == 0.0);
    BOOST_TEST(c10.quality(c10.best) == 1.0);
    BOOST_TEST(c10.quality(2.0) == 1.0);
    BOOST_TEST(speech.quality(speech.best) == 1.0);
    BOOST_TEST(speech.quality(speech.best + 1.0) < 1.0);  // higher WER is worse
    BOOST_TEST(c10.best > 0.94);
    BOOST_TEST(!c10.step_times.empty());
}

BOOST_AUTO_TEST_CASE(step_time_interpolates_and_extrapolates) {
    auto table = StepTimeTable::parse(
        "placement,local_bsz,step_time,sync_time\n1,32,0.1,0\n1,128,0.4,0\n4,32,0.2,0\n", "p.csv");
    BOOST_REQUIRE(table.ok());
    BOOST_TEST(table->step_time(1, 32) == 0.1, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(table->step_time(1, 64) == 0.2, boost::test_tools::tolerance(1e-9));    // log-log midpoint
    BOOST_TEST(table->step_time(1, 256) == 0.8, boost::test_tools::tolerance(1e-12));  // linear beyond
    BOOST_TEST(table->step_time(1, 8) == 0.1, boost::test_tools::tolerance(1e-12));    // clamped below
    BOOST_TEST(table->step_time(4, 32) == 0.2, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(table->step_time(16, 32) == 0.2, boost::test_tools::tolerance(1e-12));  // widest measured
    auto bad = StepTimeTable::parse("placement,local_bsz,step_time\n1,abc,0.1\n", "p.csv");
    BOOST_REQUIRE(!bad.ok());
    BOOST_TEST(bad.error().message.find("p.csv:2: local_bsz: 'abc'") != std::string::npos,
               bad.error().message);
}

BOOST_AUTO_TEST_CASE(site_directory_with_direction_override) {
    TempDir dir;
    dir.write("lm/run-a.csv", "step,metric\n1,5.0\n2,4.0\n3,3.5\n");
    dir.write("lm/run-b.csv", "step,metric\n1,5.5\n2,4.5\n3,4.0\n");
    auto lib = CurveLibrary::load(dir.path.string());
    BOOST_REQUIRE_MESSAGE(lib.ok(), (lib.ok() ? std::string() : lib.error().message));
    const Application& lm = lib->apps()[0];
    BOOST_TEST(lm.name == "lm");
    BOOST_TEST(static_cast<int>(lm.direction) == static_cast<int>(Direction::minimize));
    BOOST_TEST(lm.untrained == 5.5);
    BOOST_TEST(lm.best == 3.5);
    BOOST_TEST(lm.variants[0].name == "run-a");
    dir.write("lm/direction", "max\n");
    auto flipped = CurveLibrary::load(dir.path.string());
    BOOST_REQUIRE(flipped.ok());
    BOOST_TEST(static_cast<int>(flipped->apps()[0].direction) == static_cast<int>(Direction::maximize));
}

BOOST_AUTO_TEST_CASE(bad_curve_files_are_named) {
    TempDir dir;
    dir.write("x/a.csv", "step,metric\n1,0.5\n2,zero\n");
    auto lib = CurveLibrary::load(dir.path.string());
    BOOST_REQUIRE(!lib.ok());
    BOOST_TEST(lib.error().message.find("a.csv:3") != std::string::npos, lib.error().message);
    BOOST_TEST(!CurveLibrary::load((dir.path / "missing").string()).ok());
    TempDir flat;
    flat.write("y/a.csv", "step,metric\n1,0.5\n2,0.5\n");
    auto no_gain = CurveLibrary::load(flat.path.string());
    BOOST_REQUIRE(!no_gain.ok());
    BOOST_TEST(no_gain.error().message.find("improves") != std::string::npos, no_gain.error().message);
}

BOOST_AUTO_TEST_SUITE_END()
