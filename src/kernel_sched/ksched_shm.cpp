#include "kernel_sched/ksched_shm.hpp"

#include <cerrno>
#include <cstring>

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

void channel_init(Channel& ch) {
    ch.header.magic = kMagic;
    ch.header.version = kVersion;
    ch.header.ring_size = kRingSize;
    ch.header.max_funcs = kMaxFuncs;
    for (std::uint32_t i = 0; i < kRingSize; ++i) ch.ring[i].cell.store(i, std::memory_order_relaxed);
    ch.header.tail.store(0, std::memory_order_relaxed);
    ch.header.dropped.store(0, std::memory_order_relaxed);
    ch.header.func_count.store(0, std::memory_order_relaxed);
    ch.header.waiters.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
}

std::string status_path_for(const std::string& socket_path) {
    const auto slash = socket_path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : socket_path.substr(0, slash);
    return dir + "/kerneld.status";
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

std::string read_field(const char* src, std::size_t size) {
    char local[256];
    const std::size_t n = size < sizeof local ? size : sizeof local;
    std::memcpy(local, src, n);  // one copy: the writer may change it while we look
    return std::string(local, strnlen(local, n));
}

void init_header(MsgHeader& h, MsgType type) {
    h.magic = kMsgMagic;
    h.version = kVersion;
    h.type = type;
    h.reserved = 0;
}

bool header_ok(const MsgHeader& h, MsgType type) {
    return h.magic == kMsgMagic && h.version == kVersion && h.type == type;
}

Mapping& Mapping::operator=(Mapping&& o) noexcept {
    if (this != &o) {
        if (p_ != nullptr) munmap(p_, size_);
        p_ = o.p_;
        size_ = o.size_;
        o.p_ = nullptr;
    }
    return *this;
}

Mapping::~Mapping() {
    if (p_ != nullptr) munmap(p_, size_);
}

Mapping map_fd(int fd, std::size_t size, bool writable, std::string& error) {
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        error = "cannot stat: " + errno_text(errno);
        return {};
    }
    // Never map beyond the end: that would fault on access.
    if (static_cast<std::uint64_t>(st.st_size) < size) {
        error = "size " + std::to_string(st.st_size) + " is less than " + std::to_string(size) +
                " (another explsched version?)";
        return {};
    }
    void* p = mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        error = "cannot map: " + errno_text(errno);
        return {};
    }
    return Mapping(p, size);
}

Mapping attach_status(const std::string& path, std::string& error) {
    const Fd f(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!f.valid()) {
        error = "cannot open " + path + ": " + errno_text(errno);
        return {};
    }
    struct stat st {};
    if (fstat(f.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        error = path + ": not a regular file";
        return {};
    }
    std::string why;
    Mapping m = map_fd(f.get(), kStatusSize, false, why);
    if (!m) {
        error = path + ": " + why;
        return {};
    }
    const StatusHeader& h = m.as<StatusFile>()->header;
    if (h.magic.load(std::memory_order_acquire) != kMagic)
        why = "not initialised (daemon starting or not an explsched status file)";
    else if (h.version != kVersion)
        why = "protocol version " + std::to_string(h.version) + ", expected " + std::to_string(kVersion);
    else if (h.max_jobs != kMaxJobs || h.status_size != kStatusSize)
        why = "layout differs from this build";
    if (!why.empty()) {
        error = path + ": " + why;
        return {};
    }
    return m;
}

}  // namespace explsched::ksched
