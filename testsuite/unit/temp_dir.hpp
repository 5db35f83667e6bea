// A fresh directory under /tmp for one test, removed with everything in it afterwards.
#pragma once

#include <stdlib.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        char tmpl[] = "/tmp/explsched-test-XXXXXX";
        BOOST_TEST_REQUIRE(mkdtemp(tmpl) != nullptr);
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    // Writes `text` to the file `rel` under it, making its directories.
    void write(const std::string& rel, const std::string& text) const {
        std::filesystem::create_directories((path / rel).parent_path());
        std::ofstream(path / rel) << text;
    }
    // A report store's path in it.
    std::string db(const char* name = "reports.db") const { return (path / name).string(); }
};
