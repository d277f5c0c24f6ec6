#include "safety/stop_signals.hpp"

#include <signal.h>

#include <csignal>

#include "core/error.hpp"

namespace wattwise::safety {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Process-wide by nature: a signal handler can reach nothing else. Written only by the handler.
volatile std::sig_atomic_t g_stop_signal = 0;
volatile std::sig_atomic_t g_installed = 0;
struct sigaction g_previous[3];

extern "C" void record_stop_signal(int signal_number) {
  if (g_stop_signal == 0) g_stop_signal = signal_number;  // the first one decides the exit code
}

}  // namespace

StopSignals::StopSignals() {
  if (g_installed) throw Error(ErrorKind::kInternal, "StopSignals installed twice");
  g_stop_signal = 0;
  struct sigaction action {};
  action.sa_handler = record_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: waits return EINTR so the runner notices promptly
  for (int i = 0; i < 3; ++i) sigaction(kStopSignals[i], &action, &g_previous[i]);
  g_installed = 1;
}

StopSignals::~StopSignals() {
  for (int i = 0; i < 3; ++i) sigaction(kStopSignals[i], &g_previous[i], nullptr);
  g_installed = 0;
}

bool StopSignals::stop_requested() {
  return g_stop_signal != 0;
}
int StopSignals::signal_number() {
  return g_stop_signal;
}
int StopSignals::exit_code() {
  return 128 + g_stop_signal;
}

}  // namespace wattwise::safety
