#include "kernel_sched/ksched_shm.hpp"

#include <cerrno>
#include <new>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "core/base/errno_text.hpp"
#include "core/base/fd.hpp"

namespace explsched::ksched {

const char* entry_name(Entry e) {
    switch (e) {
        case Entry::launch_kernel:
            return "cuLaunchKernel";
        case Entry::launch_kernel_ptsz:
            return "cuLaunchKernel_ptsz";
        case Entry::launch_kernel_ex:
            return "cuLaunchKernelEx";
        case Entry::launch_kernel_ex_ptsz:
            return "cuLaunchKernelEx_ptsz";
        case Entry::launch_cooperative:
            return "cuLaunchCooperativeKernel";
        case Entry::launch_cooperative_ptsz:
            return "cuLaunchCooperativeKernel_ptsz";
        case Entry::graph_launch:
            return "cuGraphLaunch";
        case Entry::graph_launch_ptsz:
            return "cuGraphLaunch_ptsz";
        case Entry::count:
        case Entry::none:
            break;
    }
    return "?";
}

void ring_reset(ClientSlot& s) {
    for (std::uint32_t i = 0; i < kRingSize; ++i) s.ring[i].cell.store(i, std::memory_order_relaxed);
    s.tail.store(0, std::memory_order_relaxed);
    s.head.store(0, std::memory_order_relaxed);
    s.dropped.store(0, std::memory_order_relaxed);
    s.func_count.store(0, std::memory_order_relaxed);
    for (FuncInfo& f : s.funcs) f.ready.store(0, std::memory_order_relaxed);
    s.granted_upto.store(0, std::memory_order_relaxed);
    s.bypass.store(0, std::memory_order_relaxed);
    s.waiters.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
}

void copy_field(char* dst, std::size_t size, const char* src) {
    if (size == 0) return;
    std::size_t n = 0;
    if (src != nullptr) {
        while (n + 1 < size && src[n] != '\0') {
            dst[n] = src[n];
            ++n;
        }
    }
    dst[n] = '\0';
}

SegmentMap& SegmentMap::operator=(SegmentMap&& o) noexcept {
    if (this != &o) {
        if (seg_ != nullptr) munmap(seg_, kSegmentSize);
        seg_ = o.seg_;
        o.seg_ = nullptr;
    }
    return *this;
}

SegmentMap::~SegmentMap() {
    if (seg_ != nullptr) munmap(seg_, kSegmentSize);
}

namespace {

std::string sys_error(const std::string& what, const std::string& path) {
    return what + " " + path + ": " + errno_text(errno);
}

}  // namespace

bool SegmentMap::create(const std::string& path, std::uint32_t gpu_index, std::string& error) {
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    const Fd f(open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (!f.valid()) {
        error = sys_error("cannot create", tmp);
        return false;
    }
    // Clients of every user on the node attach read-write; the umask must not narrow that.
    if (fchmod(f.get(), 0666) != 0 || ftruncate(f.get(), static_cast<off_t>(kSegmentSize)) != 0) {
        error = sys_error("cannot size", tmp);
        unlink(tmp.c_str());
        return false;
    }
    void* p = mmap(nullptr, kSegmentSize, PROT_READ | PROT_WRITE, MAP_SHARED, f.get(), 0);
    if (p == MAP_FAILED) {
        error = sys_error("cannot map", tmp);
        unlink(tmp.c_str());
        return false;
    }
    // The file is fresh (all zero bytes); zero is the initial value of every field, so only
    // the ring cells and the geometry need writing.
    auto* seg = static_cast<Segment*>(p);
    SegmentHeader& h = seg->header;
    h.version = kVersion;
    h.max_clients = kMaxClients;
    h.ring_size = kRingSize;
    h.max_funcs = kMaxFuncs;
    h.max_jobs = kMaxJobs;
    h.segment_size = kSegmentSize;
    h.daemon_pid = getpid();
    h.gpu_index = gpu_index;
    h.started_ns = monotonic_ns();
    h.heartbeat_ns.store(h.started_ns, std::memory_order_relaxed);
    for (ClientSlot& s : seg->slots) ring_reset(s);
    if (rename(tmp.c_str(), path.c_str()) != 0) {
        error = sys_error("cannot rename " + tmp + " to", path);
        munmap(p, kSegmentSize);
        unlink(tmp.c_str());
        return false;
    }
    if (seg_ != nullptr) munmap(seg_, kSegmentSize);
    seg_ = seg;
    return true;
}

void SegmentMap::publish_ready() {
    if (seg_ != nullptr) seg_->header.magic.store(kMagic, std::memory_order_release);
}

bool SegmentMap::attach(const std::string& path, bool writable, std::string& error) {
    const Fd f(open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC));
    if (!f.valid()) {
        error = sys_error("cannot open", path);
        return false;
    }
    struct stat st {};
    if (fstat(f.get(), &st) != 0) {
        error = sys_error("cannot stat", path);
        return false;
    }
    if (static_cast<std::uint64_t>(st.st_size) != kSegmentSize) {
        error = path + ": size " + std::to_string(st.st_size) + " is not " + std::to_string(kSegmentSize) +
                " (another explsched version?)";
        return false;
    }
    const int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
    void* p = mmap(nullptr, kSegmentSize, prot, MAP_SHARED, f.get(), 0);
    if (p == MAP_FAILED) {
        error = sys_error("cannot map", path);
        return false;
    }
    auto* seg = static_cast<Segment*>(p);
    const SegmentHeader& h = seg->header;
    std::string why;
    if (h.magic.load(std::memory_order_acquire) != kMagic)
        why = "not initialised (daemon starting or not an explsched segment)";
    else if (h.version != kVersion)
        why = "protocol version " + std::to_string(h.version) + ", expected " + std::to_string(kVersion);
    else if (h.max_clients != kMaxClients || h.ring_size != kRingSize || h.max_funcs != kMaxFuncs ||
             h.max_jobs != kMaxJobs || h.segment_size != kSegmentSize)
        why = "segment geometry differs from this build";
    if (!why.empty()) {
        error = path + ": " + why;
        munmap(p, kSegmentSize);
        return false;
    }
    if (seg_ != nullptr) munmap(seg_, kSegmentSize);
    seg_ = seg;
    return true;
}

}  // namespace explsched::ksched
