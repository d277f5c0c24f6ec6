// The journal reader: `wattwise restore` (often as root) reads every journal in the state directory,
// which may be damaged by a crash, a full disk or another user.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "fuzz_harness.hpp"
#include "safety/journal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // read_journal takes a path: an in-memory file, reopened through /proc, keeps the disk out of the loop.
  static const int fd = ::memfd_create("journal", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ::ftruncate(fd, 0) != 0) std::abort();
  if (size > 0 && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  wattwise::fuzz::expect_only_wattwise_errors("journal", [&] { wattwise::safety::read_journal(path); });
  return 0;
}
