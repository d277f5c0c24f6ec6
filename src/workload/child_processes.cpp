#include "workload/child_processes.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace wattwise::workload {

std::vector<ChildProcess> children_of_this_process() {
  std::vector<ChildProcess> children;
  const pid_t self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return children;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // gone meanwhile
    char text[512];
    const ssize_t n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    if (n <= 0) continue;
    text[n] = '\0';
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so parse after the last ')'.
    const char* close_paren = std::strrchr(text, ')');
    if (close_paren == nullptr) continue;
    char state = '?';
    long parent = 0, process_group = 0;
    if (std::sscanf(close_paren + 1, " %c %ld %ld", &state, &parent, &process_group) != 3) continue;
    if (parent == self)
      children.push_back({static_cast<pid_t>(pid), state, static_cast<pid_t>(process_group)});
  }
  ::closedir(proc);
  return children;
}

void become_child_subreaper() {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);  // best effort: without it daemons go to init
}

}  // namespace wattwise::workload
