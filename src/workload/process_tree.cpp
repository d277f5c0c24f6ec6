// HAZARD ZONE (process control). A mistake here orphans the job or its children, or kills a process that is
// not the job's. Before a change here lands, run test_workload, test_safety and `ctest -L faults` (Release
// build; docs/architecture.md "Hazard zones").

#include "workload/process_tree.hpp"

#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

#include "core/numbers.hpp"

namespace wattwise::workload {

namespace {

struct StatLine {
  pid_t parent = 0;
  pid_t process_group = 0;
};

// "/proc/<pid>/stat": "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses, so the
// fields are read after the last ')'.
std::optional<StatLine> read_stat(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  char state = 0;
  StatLine stat;
  if (!(rest >> state >> stat.parent >> stat.process_group)) return std::nullopt;
  return stat;
}

std::optional<pid_t> pid_of(const std::string& name) {
  return parse_integer<pid_t>(name);
}

}  // namespace

JobProcessTree::JobProcessTree(pid_t job, std::filesystem::path proc_root)
    : job_(job), proc_root_(std::move(proc_root)) {
  seen_.insert(job_);
}

void JobProcessTree::refresh() {
  std::map<pid_t, StatLine> processes;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc_root_, ec)) {
    const auto pid = pid_of(entry.path().filename().string());
    if (!pid) continue;
    // A process can exit between the listing and the read: it is simply not there.
    if (auto stat = read_stat(entry.path() / "stat")) processes[*pid] = *stat;
  }
  // Parents are not always listed before children (pids wrap): repeat until nothing new joins.
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, stat] : processes) {
      if (seen_.contains(pid)) continue;
      if (stat.process_group == job_ || seen_.contains(stat.parent)) {
        seen_.insert(pid);
        grew = true;
      }
    }
  }
}

bool JobProcessTree::visible_here(pid_t pid) const {
  std::error_code ec;
  return std::filesystem::exists(proc_root_ / std::to_string(pid), ec);
}

}  // namespace wattwise::workload
