#include "daemon/committer.hpp"

namespace explsched::daemon {

Committer::Committer(ReportStore& store, std::size_t max_batch, CompletionQueue& done, Logger& log)
    : store_(store), max_batch_(max_batch == 0 ? 1 : max_batch), done_(done), log_(log) {
    thread_ = std::thread([this] { run(); });
}

Committer::~Committer() {
    queue_.close();
    if (thread_.joinable()) thread_.join();
}

Result<uint64_t> Committer::prune(uint32_t job_id, int64_t job_submit, uint64_t max_rows) {
    std::lock_guard<std::mutex> lock(store_mutex_);
    return store_.prune_instance(job_id, job_submit, max_rows);
}

void Committer::run() {
    for (;;) {
        std::vector<CommitTask> tasks = queue_.pop(max_batch_);
        if (tasks.empty()) return;  // closed and drained
        std::vector<ReportInput> inputs;
        inputs.reserve(tasks.size());
        for (const auto& t : tasks) inputs.push_back(t.input);

        auto outcomes = [&] {
            std::lock_guard<std::mutex> lock(store_mutex_);
            return store_.submit(inputs);
        }();
        std::vector<Completion> replies(tasks.size());
        for (std::size_t i = 0; i < tasks.size(); ++i) {
            Completion& c = replies[i];
            c.stage = Completion::Stage::commit;
            c.ticket = tasks[i].ticket;
            wire::Reply r;
            r.job_id = inputs[i].body.job_id;
            r.step = inputs[i].body.step;
            if (!outcomes) {
                r.status = wire::ReplyStatus::retry;
                r.code = wire::Code::unavailable;
                r.message = "not stored: " + outcomes.error().message;
            } else {
                const StoreOutcome& o = (*outcomes)[i];
                switch (o.verdict) {
                    case StoreVerdict::stored:
                        r.status = wire::ReplyStatus::stored;
                        break;
                    case StoreVerdict::duplicate:
                        r.status = wire::ReplyStatus::duplicate;
                        break;
                    case StoreVerdict::refused:
                        r.status = wire::ReplyStatus::refused;
                        r.code = o.code;
                        r.last_step = o.last_step;
                        r.message = o.message;
                        break;
                }
            }
            c.reply = std::move(r);
        }
        stats_.batches.fetch_add(1, std::memory_order_relaxed);
        if (!outcomes) {
            stats_.failed.fetch_add(tasks.size(), std::memory_order_relaxed);
            if (log_.enabled(LogLevel::error))
                log_.write(LogLevel::error, "batch of " + std::to_string(tasks.size()) +
                                                " reports not stored: " + outcomes.error().message);
        } else {
            for (const auto& o : *outcomes) {
                auto& counter = o.verdict == StoreVerdict::stored      ? stats_.stored
                                : o.verdict == StoreVerdict::duplicate ? stats_.duplicates
                                                                       : stats_.refused;
                counter.fetch_add(1, std::memory_order_relaxed);
            }
        }
        // Replies leave only now, after COMMIT returned.
        done_.post(std::move(replies));
    }
}

}  // namespace explsched::daemon
