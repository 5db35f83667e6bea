// Replacing a file so that a reader (or a crash) sees the old content or the new, never a part:
// `path + tmp_suffix` is written (created 0600, never through a symlink), fsynced and renamed over
// `path`; then the directory is fsynced (best effort) so that the rename itself is durable.
#pragma once

#include <string>

#include "core/base/result.hpp"

namespace explsched {

Status write_file_atomically(const std::string& path, const std::string& text,
                             const std::string& tmp_suffix = ".tmp");

}  // namespace explsched
