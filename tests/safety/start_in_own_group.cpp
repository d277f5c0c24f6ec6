#include "start_in_own_group.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "../support/default_signals.hpp"

namespace wattwise::safety {

pid_t start_in_own_group(const std::vector<std::string>& argv, const std::filesystem::path& out,
                         const std::filesystem::path& err) {
  std::vector<std::string> strings = argv;  // execv wants mutable strings; built before the fork
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    testing::default_stop_signals();  // what the test sends must reach wattwise as from a terminal
    const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    ::execv(pointers[0], pointers.data());
    ::_exit(127);
  }
  if (pid > 0) ::setpgid(pid, pid);
  return pid;
}

}  // namespace wattwise::safety
