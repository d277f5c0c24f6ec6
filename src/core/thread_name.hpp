#pragma once

#include <thread>
#include <utility>

namespace wattwise {

// Names the calling thread, as `top -H`, `ps -L` and /proc/PID/task/*/comm show it: an operator who sees
// wattwise's CPU can tell the sampler from the marker receiver (docs/measure-json.md lists the names). Linux
// keeps 15 characters; a longer name is cut. Best effort: a failure changes nothing else.
void name_this_thread(const char* name);

// A thread that names itself `name` (a string literal: it must outlive the thread's start), then runs `body`.
template <typename Body>
std::thread named_thread(const char* name, Body&& body) {
  return std::thread([name, body = std::forward<Body>(body)]() mutable {
    name_this_thread(name);
    body();
  });
}

}  // namespace wattwise
