// HAZARD ZONE (process control). A mistake here orphans the job or its children, or kills a process that is
// not the job's. Before a change here lands, run test_workload, test_safety and `ctest -L faults` (Release
// build; docs/architecture.md "Hazard zones").

#include "workload/child_processes.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/numbers.hpp"

namespace wattwise::workload {

namespace {

// /proc/<pid>/stat of `pid` when its parent is `parent`: "pid (comm) state ppid pgrp ...", where comm may
// hold spaces and parentheses, so the fields are parsed after the last ')'.
std::optional<ChildProcess> child_stat(long pid, pid_t parent) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;  // gone meanwhile
  char text[512];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  text[n] = '\0';
  const char* close_paren = std::strrchr(text, ')');
  if (close_paren == nullptr) return std::nullopt;
  char state = '?';
  long parent_read = 0, process_group = 0;
  if (std::sscanf(close_paren + 1, " %c %ld %ld", &state, &parent_read, &process_group) != 3)
    return std::nullopt;
  if (parent_read != parent) return std::nullopt;
  return ChildProcess{static_cast<pid_t>(pid), state, static_cast<pid_t>(process_group)};
}

long numeric_name(const char* name) {
  const long value = parse_integer<long>(name).value_or(0);
  return value > 0 ? value : 0;
}

}  // namespace

std::vector<ChildProcess> children_of_this_process() {
  std::vector<ChildProcess> children;
  const pid_t self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return children;
  while (const dirent* entry = ::readdir(proc)) {
    const long pid = numeric_name(entry->d_name);
    if (pid == 0) continue;
    if (auto child = child_stat(pid, self)) children.push_back(*child);
  }
  ::closedir(proc);
  return children;
}

std::optional<std::vector<ChildProcess>> children_from_task_lists() {
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return std::nullopt;
  const pid_t self = ::getpid();
  std::vector<ChildProcess> children;
  bool supported = false;
  while (const dirent* entry = ::readdir(tasks)) {
    const long tid = numeric_name(entry->d_name);
    if (tid == 0) continue;
    char path[80];
    std::snprintf(path, sizeof path, "/proc/self/task/%ld/children", tid);
    std::FILE* list = std::fopen(path, "re");
    if (list == nullptr) continue;  // no such file (kernel without the lists), or the thread just ended
    supported = true;
    long pid = 0;
    while (std::fscanf(list, "%ld", &pid) == 1) {
      if (auto child = child_stat(pid, self)) children.push_back(*child);
    }
    std::fclose(list);
  }
  ::closedir(tasks);
  if (!supported) return std::nullopt;
  return children;
}

void become_child_subreaper() {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);  // best effort: without it daemons go to init
}

}  // namespace wattwise::workload
