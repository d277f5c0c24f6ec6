// HAZARD ZONE (process control). A mistake here orphans the job or its children, or kills a process that is
// not the job's. Before a change here lands, run test_workload, test_safety and `ctest -L faults` (Release
// build; docs/architecture.md "Hazard zones").

#include "workload/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "core/own_children.hpp"
#include "workload/child_processes.hpp"
#include "workload/stop_signals.hpp"

extern char** environ;

namespace wattwise::workload {
namespace {

using std::chrono::milliseconds;

// How often a running job's reparented daemons are looked for (a /proc scan) and handed to the guardian.
constexpr Nanos kEscapeCheckPeriod = std::chrono::milliseconds(500);
// How long ending a job's leftovers may take before we give up on one stuck in the kernel (D state).
constexpr Nanos kLeftoverDeadline = std::chrono::seconds(3);

template <typename... Args>
std::string fmt_line(const char* format, Args... args) {
  char text[256];
  std::snprintf(text, sizeof text, format, args...);
  return text;
}

Nanos monotonic_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return Nanos{static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec};
}

std::map<std::string, std::string> merged_environment(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> environment;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string text(*entry);
    size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    environment[text.substr(0, equals)] = text.substr(equals + 1);
  }
  for (const auto& [name, value] : extra) environment[name] = value;
  return environment;
}

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Resolved here, before fork: the child may only make async-signal-safe calls, and execvp is not one.
std::optional<std::string> resolve_command(const std::string& command, const std::string& search_path) {
  if (command.find('/') != std::string::npos) return command;
  size_t start = 0;
  while (start <= search_path.size()) {
    size_t colon = search_path.find(':', start);
    if (colon == std::string::npos) colon = search_path.size();
    // An empty PATH entry means the current directory, as in execvp.
    std::filesystem::path directory(colon > start ? search_path.substr(start, colon - start)
                                                  : std::string(1, '.'));
    std::string candidate = (directory / command).string();
    if (is_executable_file(candidate)) return candidate;
    start = colon + 1;
  }
  return std::nullopt;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Runs in the child between fork and exec: async-signal-safe calls only. On failure it writes errno
// into the CLOEXEC pipe, which the parent reads; a successful exec closes the pipe with nothing in it.
// The parent blocked every signal around fork(): the dispositions are reset before any can arrive here.
[[noreturn]] void exec_child(const char* path, char* const argv[], char* const envp[], const char* cwd,
                             int error_pipe, int guardian_fd, pid_t parent, bool stdout_to_stderr,
                             int stdout_fd, int stderr_fd) {
  ::setpgid(0, 0);
  if (stdout_to_stderr) ::dup2(STDERR_FILENO, STDOUT_FILENO);
  if (stdout_fd >= 0) ::dup2(stdout_fd, STDOUT_FILENO);
  if (stderr_fd >= 0) ::dup2(stderr_fd, STDERR_FILENO);
  // The guardian knows the group before the job can run any code of its own.
  JobGuardian::announce_group_from_child(guardian_fd, ::getpid());
  // A second line of defence if the guardian died with wattwise (fires when the forking thread ends).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (::getppid() != parent) ::_exit(127);  // wattwise died before the line above: nobody waits for us
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) ::signal(sig, SIG_DFL);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int error_number = 0;
  if (cwd && ::chdir(cwd) != 0) {
    error_number = errno;
  } else {
    ::execve(path, argv, envp);
    error_number = errno;
  }
  ssize_t ignored = ::write(error_pipe, &error_number, sizeof(error_number));
  (void)ignored;
  ::_exit(127);
}

}  // namespace

Process Process::start(const LaunchSpec& spec) {
  if (spec.argv.empty() || spec.argv.front().empty()) {
    throw usage_error("no command to run: give it after `--`, e.g. `wattwise measure -- python train.py`");
  }
  auto environment = merged_environment(spec.extra_environment);
  const std::string& command = spec.argv.front();
  auto path = resolve_command(command, environment.count("PATH") ? environment["PATH"] : "/usr/bin:/bin");
  if (!path) throw environment_error("command not found: " + command + " (check the spelling and PATH)");

  std::vector<std::string> argv_strings = spec.argv;
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : environment) env_strings.push_back(name + "=" + value);
  std::vector<char*> argv = c_strings(argv_strings);
  std::vector<char*> envp = c_strings(env_strings);
  std::string cwd = spec.working_directory ? spec.working_directory->string() : "";

  become_child_subreaper();
  Process process;
  for (const ChildProcess& child : children_of_this_process()) process.children_before_.push_back(child.pid);
  process.guardian_ = std::make_unique<JobGuardian>();
  register_own_child(process.guardian_->pid());

  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    throw environment_error(std::string("cannot create a pipe to start the job: ") + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  // Every signal blocked in this thread around fork(): the child must not run wattwise's stop-signal
  // handler (it would act on wattwise's copy of the state); what arrives meanwhile waits for us.
  sigset_t all, previous;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(error_pipe[0]);
    exec_child(path->c_str(), argv.data(), envp.data(), cwd.empty() ? nullptr : cwd.c_str(), error_pipe[1],
               process.guardian_->socket_fd(), parent, spec.stdout_to_stderr, spec.stdout_fd, spec.stderr_fd);
  }
  const int fork_errno = errno;
  if (pid > 0) {
    register_own_child(pid);
    // Also set the group from here, so a signal forwarded right after start() cannot miss the group.
    ::setpgid(pid, pid);
    process.pid_ = pid;
    process.pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));  // close-on-exec; -1 before 5.3
    process.guardian_->guard_group(pid);
    // From here on stop signals reach the job; one that came since the fork is passed on now.
    if (StopSignals::installed()) StopSignals::set_job_group(pid);
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) {
    ::close(error_pipe[0]);
    ::close(error_pipe[1]);
    throw environment_error(std::string("cannot start the job (fork failed): ") + std::strerror(fork_errno));
  }
  ::close(error_pipe[1]);

  int child_errno = 0;
  ssize_t got;
  do {
    got = ::read(error_pipe[0], &child_errno, sizeof(child_errno));
  } while (got < 0 && errno == EINTR);
  ::close(error_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof(child_errno))) {
    process.wait();  // reap the child that failed to exec
    if (child_errno == ENOENT && !cwd.empty() && !std::filesystem::exists(cwd)) {
      throw environment_error("working directory not found: " + cwd);
    }
    if (child_errno == ENOENT) throw environment_error("command not found: " + command);
    throw environment_error("cannot execute " + *path + ": " + std::strerror(child_errno));
  }
  return process;
}

Process::Process(Process&& other) noexcept {
  *this = std::move(other);
}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = other.pid_;
    finished_ = other.finished_;
    exit_code_ = other.exit_code_;
    signal_ = other.signal_;
    timed_out_ = other.timed_out_;
    leftovers_killed_ = other.leftovers_killed_;
    guardian_ = std::move(other.guardian_);
    children_before_ = std::move(other.children_before_);
    escaped_ = std::move(other.escaped_);
    next_escape_check_ = other.next_escape_check_;
    pidfd_ = other.pidfd_;
    ended_at_ = other.ended_at_;
    other.pidfd_ = -1;
    other.pid_ = -1;
    other.finished_ = true;
  }
  return *this;
}

Process::~Process() {
  kill_and_reap();
}

void Process::kill_and_reap() {
  if (pid_ <= 0) return;
  if (!finished_) {
    group_killed_ = true;
    ::kill(-pid_, SIGKILL);
    int status = 0;
    pid_t got;
    while ((got = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    finished_ = true;
  }
  after_exit();
}

void Process::record_status(int wait_status) {
  finished_ = true;
  ended_at_ = monotonic_now();
  if (WIFSIGNALED(wait_status)) {
    signal_ = WTERMSIG(wait_status);
    exit_code_ = 128 + *signal_;
  } else {
    exit_code_ = WEXITSTATUS(wait_status);
  }
  after_exit();
}

std::vector<ChildProcess> Process::new_children() const {
  std::vector<ChildProcess> found;
  for (const ChildProcess& child : children_of_this_process()) {
    if (std::find(children_before_.begin(), children_before_.end(), child.pid) != children_before_.end())
      continue;
    if (!is_own_child(child.pid)) found.push_back(child);
  }
  return found;
}

void Process::watch_escaped() {
  if (!guardian_) return;
  const Nanos now = monotonic_now();
  if (now < next_escape_check_) return;
  next_escape_check_ = now + kEscapeCheckPeriod;
  // The kernel's own lists where it has them: this runs every 0.5 s for the job's whole life.
  std::optional<std::vector<ChildProcess>> listed = children_from_task_lists();
  if (!listed) listed = children_of_this_process();
  for (const ChildProcess& child : *listed) {
    if (std::find(children_before_.begin(), children_before_.end(), child.pid) != children_before_.end() ||
        is_own_child(child.pid))
      continue;
    const bool known = std::find(escaped_.begin(), escaped_.end(), child.pid) != escaped_.end();
    if (child.state == 'Z') {
      // Forgotten by the guardian before it is reaped: once reaped, its pid may belong to anyone.
      if (known) guardian_->forget_process(child.pid);
      escaped_.erase(std::remove(escaped_.begin(), escaped_.end(), child.pid), escaped_.end());
      ::waitpid(child.pid, nullptr, WNOHANG);
    } else if (!known) {
      guardian_->guard_process(child.pid);
      escaped_.push_back(child.pid);
    }
  }
}

void Process::after_exit() {
  if (pidfd_ >= 0) ::close(pidfd_);
  pidfd_ = -1;
  if (!guardian_) return;  // done already (or never started)
  unregister_own_child(pid_);
  if (StopSignals::installed() && StopSignals::job_group() == pid_) StopSignals::set_job_group(0);

  // What is left of the job: members of its group (a shell's background child) and daemons that left
  // the group and were reparented to us (we are their subreaper). The leader has ended, so none of them
  // is waited for by anyone but us: end them all, and reap them, until none is left.
  // Reported: those that were still running, not the ones our own SIGKILL of the group was ending.
  std::set<pid_t> killed;
  for (const ChildProcess& child : new_children())
    if (child.state != 'Z' && !(group_killed_ && child.process_group == pid_)) killed.insert(child.pid);
  ::kill(-pid_, SIGKILL);
  const Nanos deadline = monotonic_now() + kLeftoverDeadline;
  for (;;) {
    bool any = false;
    for (const ChildProcess& child : new_children()) {
      any = true;
      if (child.state != 'Z') {
        ::kill(-child.pid, SIGKILL);  // its own group, if it made one (setsid)
        ::kill(child.pid, SIGKILL);
        if (!(group_killed_ && child.process_group == pid_)) killed.insert(child.pid);
      }
      ::waitpid(child.pid, nullptr, WNOHANG);
    }
    const bool group_left = ::kill(-pid_, 0) == 0;
    if ((!any && !group_left) || monotonic_now() >= deadline) break;
    std::this_thread::sleep_for(milliseconds(2));
  }
  leftovers_killed_ = killed.size();
  if (!killed.empty()) {
    std::string pids;
    for (pid_t pid : killed) pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
    std::fprintf(stderr, "wattwise: the job left %zu process%s running after it ended (pid %s): killed\n",
                 killed.size(), killed.size() == 1 ? "" : "es", pids.c_str());
  }
  unregister_own_child(guardian_->pid());
  guardian_->dismiss();
  guardian_.reset();
  escaped_.clear();
}

bool Process::poll() {
  if (finished_) return true;
  int status = 0;
  pid_t got = ::waitpid(pid_, &status, WNOHANG);
  if (got == pid_) record_status(status);
  if (got < 0 && errno == ECHILD) {  // reaped elsewhere; the status is lost
    finished_ = true;
    after_exit();
  }
  return finished_;
}

bool Process::wait_until(std::optional<Nanos> deadline) {
  // waitpid has no time-out; polling every few ms costs nothing next to a training job and keeps
  // this free of SIGCHLD handlers, which would clash with the CLI's own.
  for (;;) {
    if (poll()) return true;
    if (deadline && monotonic_now() >= *deadline) return false;
    watch_escaped();
    wait_for_event(deadline);
  }
}

void Process::wait_for_event(std::optional<Nanos> until) const {
  if (pidfd_ < 0) {
    std::this_thread::sleep_for(milliseconds(5));
    return;
  }
  Nanos limit = monotonic_now() + std::chrono::milliseconds(500);
  if (until && *until < limit) limit = *until;
  if (next_escape_check_ > Nanos{0} && next_escape_check_ < limit) limit = next_escape_check_;
  const auto timeout_ms = std::chrono::duration_cast<milliseconds>(limit - monotonic_now()).count() + 1;
  pollfd events[2] = {{pidfd_, POLLIN, 0}, {StopSignals::wake_fd(), POLLIN, 0}};
  const nfds_t count = events[1].fd >= 0 ? 2 : 1;
  if (::poll(events, count, static_cast<int>(std::max<long long>(timeout_ms, 0))) > 0 && count == 2 &&
      (events[1].revents & POLLIN)) {
    // Drained: the count in StopSignals is what tells a new signal, the pipe only wakes us.
    char bytes[64];
    while (::read(events[1].fd, bytes, sizeof bytes) > 0) {
    }
  }
}

int Process::wait(const WaitOptions& options) {
  if (finished_) return exit_code_;
  const Nanos started = monotonic_now();
  std::optional<Nanos> term_at;  // the time-out
  if (options.timeout) term_at = started + *options.timeout;
  std::optional<Nanos> kill_at;
  std::string kill_message;  // said when kill_at comes
  int stops_seen = 0;
  for (;;) {
    if (poll()) return exit_code_;
    const Nanos now = monotonic_now();
    // A stop signal reached wattwise and, through StopSignals, the job's group: give the job stop_grace to
    // end (a checkpoint), kill it after that or at the next stop signal.
    const int stops = StopSignals::installed() ? StopSignals::count() : 0;
    if (stops > stops_seen) {
      const char* name = ::sigabbrev_np(StopSignals::signal_number());
      if (stops_seen == 0 && stops == 1) {
        const Nanos at = now + options.stop_grace;
        if (!kill_at || at < *kill_at) {
          kill_at = at;
          kill_message = fmt_line("the job did not end within %g s of SIG%s: killing its process group %d",
                                  to_seconds(options.stop_grace), name ? name : "?", static_cast<int>(pid_));
        }
        std::fprintf(stderr,
                     "wattwise: SIG%s passed on to the job (process group %d); it is killed if it has not "
                     "ended in %g s (send the signal again, e.g. Ctrl-C, to kill it now)\n",
                     name ? name : "?", static_cast<int>(pid_), to_seconds(options.stop_grace));
      } else {
        kill_at = now;
        kill_message =
            fmt_line("a second stop signal: killing the job's process group %d", static_cast<int>(pid_));
      }
      stops_seen = stops;
    }
    if (term_at && now >= *term_at && !timed_out_) {
      timed_out_ = true;
      forward_signal(SIGTERM);
      const Nanos at = now + options.kill_grace;
      if (!kill_at || at < *kill_at) {
        kill_at = at;
        kill_message.clear();  // the time-out is reported with the job's outcome
      }
    }
    if (kill_at && now >= *kill_at) {
      if (!kill_message.empty()) std::fprintf(stderr, "wattwise: %s\n", kill_message.c_str());
      group_killed_ = true;
      forward_signal(SIGKILL);
      wait_until(std::nullopt);
      return exit_code_;
    }
    watch_escaped();
    std::optional<Nanos> next = kill_at;
    if (term_at && !timed_out_ && (!next || *term_at < *next)) next = term_at;
    wait_for_event(next);
  }
}

void Process::forward_signal(int signal_number) {
  if (pid_ <= 0 || finished_) return;
  if (::kill(-pid_, signal_number) != 0 && errno == ESRCH) {
    // The group may not exist yet if the child has not run setpgid; the parent set it too, so this
    // only happens when the leader is a zombie: signal the pid itself.
    ::kill(pid_, signal_number);
  }
}

}  // namespace wattwise::workload
