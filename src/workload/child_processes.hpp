#pragma once

#include <sys/types.h>

#include <vector>

namespace wattwise::workload {

// A direct child of this process, as /proc describes it.
struct ChildProcess {
  pid_t pid = 0;
  char state = '?';  // 'Z': a zombie, waiting to be reaped
  pid_t process_group = 0;
};

// The direct children of this process, from /proc/<pid>/stat (the kernel's `children` list is not built
// everywhere). With PR_SET_CHILD_SUBREAPER these include orphaned descendants reparented to us.
std::vector<ChildProcess> children_of_this_process();

// Makes this process the reaper of its orphaned descendants (PR_SET_CHILD_SUBREAPER): a job's daemon
// that double-forks is reparented here, not to init, so it can be found and ended with the job.
void become_child_subreaper();

}  // namespace wattwise::workload
