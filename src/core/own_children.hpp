#pragma once

#include <sys/types.h>

namespace wattwise {

// The children this process started on purpose (job leaders, guardians, meter commands): the job's
// clean-up takes any other child of ours for a leftover of the job (a daemon reparented to us) and ends and
// reaps it, so every deliberate child is registered here while it runs. Process-wide, thread-safe.
void register_own_child(pid_t pid);
void unregister_own_child(pid_t pid);
bool is_own_child(pid_t pid);

}  // namespace wattwise
