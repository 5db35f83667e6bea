#include "core/base/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/base/errno_text.hpp"
#include "core/base/fd.hpp"

namespace explsched {

namespace {

Status write_all(int fd, const std::string& text, const std::string& path) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return make_error("writing " + path + ": " + errno_text(errno));
        done += static_cast<std::size_t>(n);
    }
    return {};
}

std::string dir_of(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Status write_file_atomically(const std::string& path, const std::string& text,
                             const std::string& tmp_suffix) {
    const std::string tmp = path + tmp_suffix;
    {
        Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
        if (!fd.valid()) return make_error("cannot create " + tmp + ": " + errno_text(errno));
        if (::fchmod(fd.get(), 0600) != 0) return make_error("chmod " + tmp + ": " + errno_text(errno));
        if (Status st = write_all(fd.get(), text, tmp); !st) return st;
        if (::fsync(fd.get()) != 0) return make_error("fsync " + tmp + ": " + errno_text(errno));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0)
        return make_error("cannot rename " + tmp + " to " + path + ": " + errno_text(errno));
    const std::string dir = dir_of(path);
    Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (d.valid()) (void)::fsync(d.get());  // the rename itself; best effort
    return {};
}

}  // namespace explsched
