#define BOOST_TEST_MODULE test_device_orion_profile
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>

#include "core/device/orion_profile.hpp"

#include <ostream>

namespace explsched {
std::ostream& operator<<(std::ostream& out, KernelClass c) { return out << to_string(c); }
}  // namespace explsched

using namespace explsched;

namespace {
const std::string kHeader = "Name,Profile,Memory_footprint,SM_usage,Duration\n";

std::string error_of(const std::string& text) {
    auto r = parse_orion_profile(text, "p.csv", 80);
    BOOST_REQUIRE(!r.ok());
    return r.error().message;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(device_orion_profile)

BOOST_AUTO_TEST_CASE(parses_rows_and_names_with_commas) {
    const std::string text = kHeader +
                             "Conv,1,0,49,28672\r\n"
                             "void cudnn::bn_bw<float, (int)512, (bool)1>(float, float *),0,0,683,71712\n"
                             "\n"
                             "void at::native::elementwise_kernel,-1,0,0,3072\n";
    auto r = parse_orion_profile(text, "p.csv", 80);
    BOOST_REQUIRE(r.ok());
    BOOST_REQUIRE(r->size() == 3u);
    const auto& rows = *r;
    BOOST_TEST(rows[0].name == "Conv");
    BOOST_TEST(rows[0].cls == KernelClass::compute);
    BOOST_TEST(rows[0].demand.sms == 49.0);
    BOOST_TEST(rows[0].demand.duration_ns == 28672u);
    BOOST_TEST(rows[1].name == "void cudnn::bn_bw<float, (int)512, (bool)1>(float, float *)");
    BOOST_TEST(rows[1].cls == KernelClass::memory);
    BOOST_TEST(rows[1].sm_usage == 683u);
    BOOST_TEST(rows[1].demand.sms == 80.0);  // capped at the device
    BOOST_TEST(rows[1].demand.bw == 1.0);
    BOOST_TEST(rows[2].cls == KernelClass::unknown);
    BOOST_TEST(rows[2].demand.sms == 1.0);  // a running kernel holds at least one SM
}

BOOST_AUTO_TEST_CASE(errors_name_line_field_and_value) {
    BOOST_TEST(error_of("Name,Profile\n") ==
               "p.csv:1: header 'Name,Profile' is not '" + kHeader.substr(0, kHeader.size() - 1) + "'");
    BOOST_TEST(error_of(kHeader + "Conv,2,0,1,5\n") ==
               "p.csv:2: field 'Profile': '2' is not one of -1, 0, 1");
    BOOST_TEST(error_of(kHeader + "Conv,1,x,1,5\n") ==
               "p.csv:2: field 'Memory_footprint': 'x' is not a non-negative integer");
    BOOST_TEST(error_of(kHeader + "Conv,1,0,-3,5\n") ==
               "p.csv:2: field 'SM_usage': '-3' is not a non-negative integer");
    BOOST_TEST(error_of(kHeader + "Conv,1,0,1,0\n") ==
               "p.csv:2: field 'Duration': '0' is not a positive integer (nanoseconds)");
    BOOST_TEST(error_of(kHeader + "Conv,1,0\n") ==
               "p.csv:2: expected 5 fields (Name,Profile,Memory_footprint,SM_usage,Duration), got 3");
    BOOST_TEST(error_of(kHeader + ",1,0,1,5\n") == "p.csv:2: field 'Name' is empty");
    BOOST_TEST(error_of(kHeader) == "p.csv: profile has no kernel rows");
    BOOST_TEST(error_of("") == "p.csv: empty profile (no header)");
    auto r = parse_orion_profile(kHeader + "Conv,1,0,1,5\n", "p.csv", 0);
    BOOST_TEST(!r.ok());
    auto missing = load_orion_profile("/nonexistent/x.csv", 80);
    BOOST_REQUIRE(!missing.ok());
    BOOST_TEST(missing.error().message.find("cannot read kernel profile /nonexistent/x.csv") == 0u);
}

BOOST_AUTO_TEST_CASE(loads_every_shipped_profile) {
    const std::string dir = std::string(EXPLSCHED_DATA_DIR) + "/kernel-profiles/";
    if (!std::filesystem::exists(dir)) {
        BOOST_TEST_MESSAGE("shared data not present: " << dir);
        return;
    }
    struct Expect {
        const char* file;
        std::size_t rows;
    };
    // Row counts of the Orion files (wc -l minus the header).
    for (const Expect& e : {Expect{"resnet50_32_fb1_new.csv", 949}, Expect{"resnet50_4_fwd_new.csv", 175},
                            Expect{"resnet101_4_fwd_new.csv", 345}, Expect{"mobilenetv2_4_fwd_new.csv", 152},
                            Expect{"efficientnet_4_fwd_new.csv", 823}, Expect{"bert_2_fwd_new.csv", 572}}) {
        auto r = load_orion_profile(dir + e.file, 80);
        BOOST_REQUIRE_MESSAGE(r.ok(), e.file << ": " << (r.ok() ? "" : r.error().message));
        BOOST_TEST(r->size() == e.rows, e.file);
        for (const KernelProfile& k : *r) {
            BOOST_TEST(k.demand.sms >= 1.0);
            BOOST_TEST(k.demand.sms <= 80.0);
        }
    }
    // A training iteration of ResNet-50 (batch 32) takes about 96 ms on the V100, 5.5 ms of it
    // in the cuDNN batch-norm kernels whose names contain commas.
    auto train = load_orion_profile(dir + "resnet50_32_fb1_new.csv", 80);
    std::uint64_t total = 0;
    for (const KernelProfile& k : *train) total += k.demand.duration_ns;
    BOOST_TEST(total > 95'000'000u);
    BOOST_TEST(total < 96'000'000u);
}

BOOST_AUTO_TEST_SUITE_END()
