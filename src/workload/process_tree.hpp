#pragma once

#include <sys/types.h>

#include <filesystem>
#include <set>

namespace wattwise::workload {

// The pids of a job's process tree as /proc shows them: the job, every descendant (by parent pid) and every
// member of its process group (the job leads its own, so a descendant reparented to wattwise, its
// subreaper, is still found). Pids are remembered across refreshes, since processes exit between them.
class JobProcessTree {
 public:
  explicit JobProcessTree(pid_t job, std::filesystem::path proc_root = "/proc");

  // Reads /proc once more and adds the tree's current members.
  void refresh();
  // Whether `pid` was ever seen in the job's tree.
  bool contains(pid_t pid) const { return seen_.contains(pid); }
  const std::set<pid_t>& seen() const { return seen_; }
  // Whether `pid` names a process in this pid namespace now. A GPU's process that does not may be a host pid
  // shown to a container (NVML reports the driver's view): then it cannot be matched either way.
  bool visible_here(pid_t pid) const;

 private:
  pid_t job_;
  std::filesystem::path proc_root_;
  std::set<pid_t> seen_;
};

}  // namespace wattwise::workload
