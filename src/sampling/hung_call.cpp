#include "sampling/hung_call.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string_view>
#include <thread>
#include <utility>

namespace wattwise::sampling {

namespace {
thread_local CallSlot* t_call_slot = nullptr;
}  // namespace

namespace {

Nanos cpu_time(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return Nanos{0};
  return Nanos{static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec};
}

}  // namespace

std::optional<ThreadScheduling> thread_scheduling(const std::string& task_dir) {
  // stat: "TID (COMM) STATE ...", COMM may hold spaces and parentheses: the state follows the last ')'.
  // schedstat: time on a CPU, time waiting on a run queue (ns), time slices. Both a few bytes, read by the
  // supervisor at its looks only, never on the sampling thread's path.
  char stat[512] = {};
  std::FILE* file = std::fopen((task_dir + "stat").c_str(), "re");
  if (file == nullptr) return std::nullopt;
  const std::size_t length = std::fread(stat, 1, sizeof stat - 1, file);
  std::fclose(file);
  const std::string_view text(stat, length);
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos || close + 2 >= text.size()) return std::nullopt;
  ThreadScheduling scheduling;
  scheduling.runnable = text[close + 2] == 'R';
  // Without schedstat the state alone still tells a starved thread at most looks (before, both were lost).
  file = std::fopen((task_dir + "schedstat").c_str(), "re");
  if (file == nullptr) return scheduling;
  unsigned long long on_cpu = 0, waited = 0;
  const int fields = std::fscanf(file, "%llu %llu", &on_cpu, &waited);
  std::fclose(file);
  if (fields == 2) scheduling.run_queue_wait = Nanos{static_cast<std::int64_t>(waited)};
  return scheduling;
}

// /proc/thread-self links to "PID/task/TID" in /proc's own numbering; gettid() is the fallback of a /proc
// too old to have the link.
std::string this_threads_task_dir() {
  char link[64] = {};
  const ssize_t length = ::readlink("/proc/thread-self", link, sizeof link - 1);
  if (length > 0) return "/proc/" + std::string(link, static_cast<std::size_t>(length)) + "/";
  return "/proc/self/task/" + std::to_string(::gettid()) + "/";
}

CallSlot::CallSlot() : read_scheduling_(thread_scheduling) {}

CallSlot::CallSlot(SchedulingReader read, const Clock& clock)
    : read_scheduling_(std::move(read)), clock_(&clock) {}

void CallSlot::bind_this_thread() {
  clockid_t clock{};
  std::string task_dir = this_threads_task_dir();
  std::lock_guard lock(mutex_);
  if (pthread_getcpuclockid(pthread_self(), &clock) == 0) cpu_clock_ = clock;
  task_dir_ = std::move(task_dir);
  latest_look_.reset();
  before_call_.reset();
}

void CallSlot::enter(std::size_t gpu, const char* call, Nanos now) {
  const Nanos cpu = cpu_time(CLOCK_THREAD_CPUTIME_ID);
  std::lock_guard lock(mutex_);
  in_call_ = true;
  ++calls_entered_;
  call_ = HungCall{gpu, call, now};
  cpu_at_enter_ = cpu;
}

bool CallSlot::leave() {
  std::lock_guard lock(mutex_);
  in_call_ = false;
  return !given_up_;
}

std::optional<HungCall> CallSlot::give_up_if_begun_by(Nanos began_by) {
  std::string task_dir;
  {
    std::lock_guard lock(mutex_);
    task_dir = task_dir_;
  }
  // Read outside the lock: the sampling thread's enter() and leave() never wait on a file.
  const Nanos now = clock_->now();
  std::optional<ThreadScheduling> scheduling;
  if (!task_dir.empty()) scheduling = read_scheduling_(task_dir);
  std::lock_guard lock(mutex_);
  if (scheduling && scheduling->run_queue_wait) {
    // Counted under the lock, after the read: a call entered in between counts the read as its own, and
    // the baseline is then the look before, earlier: a starved call is not given up for it.
    const RunQueueLook look{now, *scheduling->run_queue_wait, calls_entered_};
    if (in_call_ && latest_look_ && latest_look_->calls_entered < calls_entered_) {
      before_call_ = latest_look_;
    } else if (in_call_ && !latest_look_) {
      before_call_ = look;
    }  // Else the previous look was in this call too: the baseline it found stays.
    latest_look_ = look;
  }
  if (!in_call_ || given_up_ || call_.since > began_by) return std::nullopt;
  // The thread is inside its call (leave() waits for this lock), so its CPU clock is valid.
  if (cpu_clock_ && cpu_time(*cpu_clock_) - cpu_at_enter_ >= kHungCallMaxCpu) return std::nullopt;
  // Starved, not blocked: slow, and still working.
  if (scheduling && scheduling->runnable) return std::nullopt;
  if (scheduling && scheduling->run_queue_wait && before_call_ && now > before_call_->at) {
    const double waited = static_cast<double>((*scheduling->run_queue_wait - before_call_->waited).count());
    if (waited >= kHungCallMaxRunQueueShare * static_cast<double>((now - before_call_->at).count()))
      return std::nullopt;
  }
  given_up_ = true;
  return call_;
}

CallSlot* current_call_slot() {
  return t_call_slot;
}

void set_current_call_slot(CallSlot* slot) {
  if (slot != nullptr) slot->bind_this_thread();
  t_call_slot = slot;
}

void park_forever() {
  // No signal handler runs on this thread again: it could only run our code, which is no longer ours to run.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  while (true) std::this_thread::sleep_for(std::chrono::hours(24));
}

WatchedCall::WatchedCall(std::size_t gpu, const char* call, const Clock& clock) : slot_(current_call_slot()) {
  if (slot_ != nullptr) slot_->enter(gpu, call, clock.now());
}

WatchedCall::~WatchedCall() {
  if (slot_ != nullptr && !slot_->leave()) park_forever();
}

}  // namespace wattwise::sampling
