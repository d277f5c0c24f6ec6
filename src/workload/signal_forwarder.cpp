#include "workload/signal_forwarder.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace wattwise::workload {
namespace {

// A signal handler can only reach static storage; these are lock-free atomics, safe to touch there.
// They belong to the one live SignalForwarder (the constructor refuses a second).
std::atomic<bool> g_active{false};
std::atomic<pid_t> g_target_group{0};
std::atomic<uint64_t> g_received_mask{0};
std::atomic<int> g_first_signal{0};
std::atomic<int> g_wake_fd{-1};

static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free);

extern "C" void forward_to_job(int signal_number) {
  int saved_errno = errno;  // kill and write may change errno under the interrupted code's feet
  pid_t group = g_target_group.load();
  if (group > 0) ::kill(-group, signal_number);
  g_received_mask.fetch_or(uint64_t{1} << signal_number);
  int none = 0;
  g_first_signal.compare_exchange_strong(none, signal_number);
  char byte = static_cast<char>(signal_number);
  ssize_t ignored = ::write(g_wake_fd.load(), &byte, 1);
  (void)ignored;
  errno = saved_errno;
}

}  // namespace

const std::vector<int>& SignalForwarder::forwarded_signals() {
  static const std::vector<int> kSignals = {SIGINT, SIGTERM, SIGHUP};
  return kSignals;
}

SignalForwarder::SignalForwarder(pid_t job_process_group) {
  if (g_active.exchange(true)) {
    throw Error(ErrorKind::kInternal, "a second SignalForwarder was created while one is active");
  }
  if (::pipe2(wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_active = false;
    throw environment_error(std::string("cannot create a pipe for signal handling: ") + std::strerror(errno));
  }
  g_target_group = job_process_group;
  g_received_mask = 0;
  g_first_signal = 0;
  g_wake_fd = wake_pipe_[1];

  struct sigaction action {};
  action.sa_handler = forward_to_job;
  ::sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  previous_.resize(forwarded_signals().size());
  for (size_t i = 0; i < previous_.size(); ++i) ::sigaction(forwarded_signals()[i], &action, &previous_[i]);
}

SignalForwarder::~SignalForwarder() {
  const auto& signals = forwarded_signals();
  for (size_t i = 0; i < signals.size(); ++i) {
    ::sigaction(signals[i], &previous_[i], nullptr);
  }
  g_target_group = 0;
  g_wake_fd = -1;
  ::close(wake_pipe_[0]);
  ::close(wake_pipe_[1]);
  g_active = false;
}

std::optional<int> SignalForwarder::first_signal() const {
  int first = g_first_signal.load();
  if (first == 0) return std::nullopt;
  return first;
}

std::vector<int> SignalForwarder::received_signals() const {
  std::vector<int> signals;
  uint64_t mask = g_received_mask.load();
  for (int signal_number = 1; signal_number < 64; ++signal_number) {
    if (mask & (uint64_t{1} << signal_number)) signals.push_back(signal_number);
  }
  return signals;
}

}  // namespace wattwise::workload
