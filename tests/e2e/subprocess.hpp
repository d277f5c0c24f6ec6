#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wattwise::e2e {

// How a child process ended and what it printed.
struct ProcessResult {
  std::optional<int> exit_code;  // absent when killed by a signal
  std::optional<int> signal;     // the signal that killed it
  bool killed_by_guard = false;  // ran past the guard time-out and was killed by the test
  std::string out;
  std::string err;
  double wall_s = 0;
};

// A child's environment is exactly these variables: nothing leaks in from the test's own environment
// (WATTWISE_SOCKET in particular) unless the caller copies it.
using Environment = std::map<std::string, std::string>;

// The few variables a child needs to find programs and a temporary directory.
Environment minimal_environment();

struct SpawnOptions {
  // stdout and stderr go to files in this directory (files do not block a child that outlives us).
  std::filesystem::path capture_dir;
  // Kill the child (SIGKILL) if it runs longer than this: a hung binary fails the test, not the suite.
  std::chrono::milliseconds guard{20000};
  // Called every few milliseconds while the child runs, with its pid; used to send it signals.
  std::function<void(int pid)> while_running;
};

// Runs argv[0] (a path, not searched in PATH) with the given environment and waits for it.
ProcessResult run_process(const std::vector<std::string>& argv, const Environment& env,
                          const SpawnOptions& options);

}  // namespace wattwise::e2e
