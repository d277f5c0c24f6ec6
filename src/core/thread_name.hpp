#pragma once

namespace wattwise {

// Names the calling thread, as `top -H`, `ps -L` and /proc/PID/task/*/comm show it: an operator who sees
// wattwise's CPU can tell the sampler from the marker receiver (docs/operators.md lists the names). Linux
// keeps 15 characters; a longer name is cut. Best effort: a failure changes nothing else.
void name_this_thread(const char* name);

}  // namespace wattwise
