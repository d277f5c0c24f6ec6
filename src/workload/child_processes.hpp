#pragma once

#include <sys/types.h>

#include <optional>
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

// The same from the kernel's per-thread lists (/proc/self/task/TID/children, CONFIG_PROC_CHILDREN): a few
// small files instead of every process's stat, which is what a look every 0.5 s for escaped daemons cost
// on a busy node (~0.3% of a core). Nullopt where the kernel does not build the lists. The kernel documents
// them as exact only while the children are stopped: a child forked or reaped during the read can be
// missing, so only the periodic look uses this (its next look finds it), never the final clean-up.
std::optional<std::vector<ChildProcess>> children_from_task_lists();

// Makes this process the reaper of its orphaned descendants (PR_SET_CHILD_SUBREAPER): a job's daemon
// that double-forks is reparented here, not to init, so it can be found and ended with the job.
void become_child_subreaper();

}  // namespace wattwise::workload
