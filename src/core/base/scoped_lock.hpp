// A lock taken through a C API's acquire/release pair (slurmctld's lock_slurmctld and
// unlock_slurmctld, the association manager's assoc_mgr_lock and assoc_mgr_unlock), held for a
// scope: an exception or an early return between the two releases it. A lock Slurm's other
// threads wait on must never outlive the code that needed it.
#pragma once

namespace explsched {

template <typename Arg, void (*Acquire)(Arg), void (*Release)(Arg)>
class [[nodiscard]] ScopedCLock {
public:
    explicit ScopedCLock(Arg arg) : arg_(arg) { Acquire(arg_); }
    ~ScopedCLock() {
        if (held_) Release(arg_);
    }
    ScopedCLock(const ScopedCLock&) = delete;
    ScopedCLock& operator=(const ScopedCLock&) = delete;

    // Releases before the end of the scope (logging afterwards, say); at most once.
    void unlock() {
        if (!held_) return;
        held_ = false;
        Release(arg_);
    }
    bool held() const { return held_; }

private:
    Arg arg_;
    bool held_ = true;
};

}  // namespace explsched
