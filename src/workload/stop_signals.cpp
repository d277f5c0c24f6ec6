// HAZARD ZONE (stop signals). A mistake here leaves the job running after wattwise ends, or a GPU capped
// after Ctrl-C / SIGTERM. Before a change here lands, run test_workload, test_safety and `ctest -L faults`
// (Release build; docs/architecture.md "Hazard zones").

#include "workload/stop_signals.hpp"

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

constexpr int kHandled[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kHandledCount = 3;

// A signal handler can reach only static storage; these are lock-free atomics, safe to touch there.
std::atomic<bool> g_installed{false};
std::atomic<int> g_first_signal{0};
std::atomic<int> g_count{0};
std::atomic<uint64_t> g_received_mask{0};
// The latest signal not yet passed on to a job. Claimed with exchange() by whichever of the handler and
// set_job_group sees the other's write, so it is forwarded exactly once (see both).
std::atomic<int> g_pending{0};
std::atomic<pid_t> g_job_group{0};
std::atomic<int> g_wake_read{-1};
std::atomic<int> g_wake_write{-1};
struct sigaction g_previous[kHandledCount];

static_assert(std::atomic<int>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free &&
              std::atomic<uint64_t>::is_always_lock_free);

extern "C" void on_stop_signal(int signal_number) {
  const int saved_errno = errno;  // kill and write may change errno under the interrupted code's feet
  int none = 0;
  g_first_signal.compare_exchange_strong(none, signal_number);
  g_received_mask.fetch_or(uint64_t{1} << signal_number);
  g_pending.store(signal_number);
  const pid_t group = g_job_group.load();
  if (group > 0) {
    const int claimed = g_pending.exchange(0);
    if (claimed != 0) ::kill(-group, claimed);
  }
  // Counted after forwarding: a waiter that sees the count sees a job that already has the signal.
  g_count.fetch_add(1);
  const char byte = static_cast<char>(signal_number);
  const ssize_t ignored = ::write(g_wake_write.load(), &byte, 1);
  (void)ignored;
  errno = saved_errno;
}

}  // namespace

const std::vector<int>& StopSignals::handled_signals() {
  static const std::vector<int> kSignals(std::begin(kHandled), std::end(kHandled));
  return kSignals;
}

StopSignals::StopSignals() {
  if (g_installed.exchange(true)) throw Error(ErrorKind::kInternal, "StopSignals installed twice");
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_installed = false;
    throw environment_error(std::string("cannot create a pipe for signal handling: ") + std::strerror(errno));
  }
  g_first_signal = 0;
  g_count = 0;
  g_received_mask = 0;
  g_pending = 0;
  g_job_group = 0;
  g_wake_read = ends[0];
  g_wake_write = ends[1];
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  ::sigemptyset(&action.sa_mask);
  for (int signal_number : kHandled) ::sigaddset(&action.sa_mask, signal_number);  // one at a time
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < kHandledCount; ++i) {
    ::sigaction(kHandled[i], nullptr, &g_previous[i]);
    // Ignored when wattwise started: whoever started it asked for that (nohup for SIGHUP, a script's
    // background job for SIGINT, the settings watchdog for all three), and it stays so, as shells do.
    if (g_previous[i].sa_handler == SIG_IGN) continue;
    ::sigaction(kHandled[i], &action, nullptr);
  }
}

bool StopSignals::ignored_at_start(int signal_number) {
  for (int i = 0; i < kHandledCount; ++i)
    if (kHandled[i] == signal_number) return g_installed.load() && g_previous[i].sa_handler == SIG_IGN;
  return false;
}

StopSignals::~StopSignals() {
  for (int i = 0; i < kHandledCount; ++i) ::sigaction(kHandled[i], &g_previous[i], nullptr);
  g_job_group = 0;
  const int read_end = g_wake_read.exchange(-1);
  const int write_end = g_wake_write.exchange(-1);
  ::close(read_end);
  ::close(write_end);
  g_installed = false;
}

bool StopSignals::installed() {
  return g_installed.load();
}
bool StopSignals::stop_requested() {
  return g_first_signal.load() != 0;
}
int StopSignals::signal_number() {
  return g_first_signal.load();
}
int StopSignals::exit_code() {
  return 128 + g_first_signal.load();
}
int StopSignals::count() {
  return g_count.load();
}
int StopSignals::wake_fd() {
  return g_wake_read.load();
}

std::vector<int> StopSignals::received_signals() {
  std::vector<int> signals;
  const uint64_t mask = g_received_mask.load();
  for (int signal_number = 1; signal_number < 64; ++signal_number)
    if (mask & (uint64_t{1} << signal_number)) signals.push_back(signal_number);
  return signals;
}

pid_t StopSignals::job_group() {
  return g_job_group.load();
}

void StopSignals::set_job_group(pid_t process_group) {
  // Mirror of the handler: it stores pending then reads the group; this stores the group then claims
  // pending. Whichever runs second sees the other's write, and exchange() lets only one of them send.
  g_job_group.store(process_group);
  if (process_group <= 0) return;
  const int claimed = g_pending.exchange(0);
  if (claimed != 0) ::kill(-process_group, claimed);
}

}  // namespace wattwise::workload
