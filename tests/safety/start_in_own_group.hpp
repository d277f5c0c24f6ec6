#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace wattwise::safety {

// Starts `argv` (argv[0] a path) in its own process group, like a shell's job, so the test's own group never
// gets the signals the test sends it; the group is set on both sides of the fork, so a signal sent right
// after this returns already finds it. stdout and stderr go to `out` and `err`. Returns the pid.
// Shared by the safety tests and the fault-injection suite.
pid_t start_in_own_group(const std::vector<std::string>& argv, const std::filesystem::path& out,
                         const std::filesystem::path& err);

}  // namespace wattwise::safety
