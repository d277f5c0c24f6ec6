#include "store/durable_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "core/atomic_file.hpp"

namespace wattwise::store {

void write_file_durably(const std::filesystem::path& path, std::string_view content) {
  write_file_atomically(path, content, [](const WriteFailure& failure) {
    const int error_number = failure.error_number;
    if (error_number == ENOSPC || error_number == EDQUOT || error_number == EFBIG) {
      return environment_error(fmt::format("disk full writing {} ({}): free space and continue with --resume",
                                           failure.target.string(), std::strerror(error_number)));
    }
    return environment_error(
        fmt::format("cannot write {} ({}: {}): check the directory, then continue with --resume",
                    failure.target.string(), failure.step, std::strerror(error_number)));
  });
}

}  // namespace wattwise::store
