#pragma once

#include <signal.h>

namespace wattwise::testing {

// The stop signals (and SIGQUIT, SIGPIPE) back to their default action, unblocked: for a child between fork
// and exec (async-signal-safe calls only), or a test binary at its start. wattwise leaves a signal that was
// ignored when it started ignored (nohup), so a test run from a script's background job or under nohup
// would otherwise hand that on to the wattwise it starts, and its Ctrl-C or hangup tests would test nothing.
inline void default_stop_signals() {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) signal(signal_number, SIG_DFL);
}

}  // namespace wattwise::testing
