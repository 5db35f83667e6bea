// A helper of bench_rerank_slurmctld.sh (not a benchmark by itself): fills a report store with
// REPORTS rows for the job instances read from stdin ("<job id> <submit time> <uid>" per line),
// written straight through ReportStore in large transactions. explschedd would refuse this rate
// (its per-uid rate limits and per-job point caps are there for exactly that), and through the
// network a million reports take far longer than the benchmark should; what the benchmark measures
// is slurmctld's side: a store this large, read by priority/explsched.
//
// Rows are interleaved as concurrent trials would write them (every job's k-th step before any
// job's (k+1)-th), each job a noisy power-law curve of its own, steps 50 apart, arriving on a
// plausible server clock (10 s per report, ending now) with a plausible throughput claim.
//   bench_fill_store DB REPORTS < jobs      prints "<rows> rows for <jobs> jobs in <s> s"
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "core/report/report_store.hpp"

namespace {

using namespace explsched;

struct Job {
    uint32_t job_id = 0;
    int64_t submit = 0;
    uint32_t uid = 0;
};

std::vector<Job> read_jobs(std::istream& in) {
    std::vector<Job> jobs;
    Job j;
    while (in >> j.job_id >> j.submit >> j.uid) jobs.push_back(j);
    return jobs;
}

// Job k's metric at report i: an asymptote spread over the sweep, a power-law approach, and a
// deterministic wiggle standing in for noise.
double metric_of(std::size_t k, uint64_t i) {
    const double a = 0.1 + static_cast<double>(k % 17) / 40.0;
    const double s = 50.0 * static_cast<double>(i + 1);
    const double wiggle = 0.01 * std::sin(static_cast<double>(k * 131 + i * 17));
    return a + 2.0 * std::pow(s, -0.5) + wiggle;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: bench_fill_store DB REPORTS < jobs\n");
        return 2;
    }
    const std::string path = argv[1];
    const uint64_t total = std::strtoull(argv[2], nullptr, 10);
    const std::vector<Job> jobs = read_jobs(std::cin);
    if (jobs.empty() || total == 0) {
        std::fprintf(stderr, "explsched: bench_fill_store: no jobs on stdin or no reports asked for\n");
        return 1;
    }
    StoreOptions options;
    options.synchronous_full = false;
    auto store = ReportStore::open(path, options);
    if (!store) {
        std::fprintf(stderr, "%s\n", store.error().message.c_str());
        return 1;
    }

    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t per_job = (total + jobs.size() - 1) / jobs.size();
    const double now = static_cast<double>(std::time(nullptr));
    constexpr std::size_t kTransaction = 100000;
    std::vector<ReportInput> batch;
    batch.reserve(kTransaction);
    uint64_t written = 0;
    auto flush = [&]() -> bool {
        auto out = (*store)->submit(batch);
        if (!out) {
            std::fprintf(stderr, "%s\n", out.error().message.c_str());
            return false;
        }
        for (const StoreOutcome& o : *out)
            if (o.verdict != StoreVerdict::stored) {
                std::fprintf(stderr, "explsched: bench_fill_store: a report was not stored: %s\n",
                             o.message.c_str());
                return false;
            }
        written += batch.size();
        batch.clear();
        return true;
    };
    for (uint64_t i = 0; i < per_job && written + batch.size() < total; ++i) {
        const double at = now - 10.0 * static_cast<double>(per_job - i);
        for (std::size_t k = 0; k < jobs.size() && written + batch.size() < total; ++k) {
            ReportInput in;
            in.body.job_id = jobs[k].job_id;
            in.body.step = 50 * (i + 1);
            in.body.metric = metric_of(k, i);
            in.body.throughput = 5.0;
            in.body.client_time = at;
            in.job_submit = jobs[k].submit;
            in.uid = jobs[k].uid;
            in.server_time = at;
            batch.push_back(in);
            if (batch.size() == kTransaction && !flush()) return 1;
        }
    }
    if (!batch.empty() && !flush()) return 1;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%llu rows for %zu jobs in %.1f s\n", static_cast<unsigned long long>(written), jobs.size(),
                s);
    return 0;
}
