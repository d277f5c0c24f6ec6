#include "workload/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "core/error.hpp"

extern char** environ;

namespace wattwise::workload {
namespace {

using std::chrono::milliseconds;

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
[[noreturn]] void exec_child(const char* path, char* const argv[], char* const envp[], const char* cwd,
                             int error_pipe) {
  ::setpgid(0, 0);
  sigset_t all;
  ::sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) ::signal(sig, SIG_DFL);
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

  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    throw environment_error(std::string("cannot create a pipe to start the job: ") + std::strerror(errno));
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    int error_number = errno;
    ::close(error_pipe[0]);
    ::close(error_pipe[1]);
    throw environment_error(std::string("cannot start the job (fork failed): ") +
                            std::strerror(error_number));
  }
  if (pid == 0) {
    ::close(error_pipe[0]);
    exec_child(path->c_str(), argv.data(), envp.data(), cwd.empty() ? nullptr : cwd.c_str(), error_pipe[1]);
  }
  // Also set the group from here, so a signal forwarded right after start() cannot miss the group.
  ::setpgid(pid, pid);
  ::close(error_pipe[1]);
  Process process(pid);

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
    other.pid_ = -1;
    other.finished_ = true;
  }
  return *this;
}

Process::~Process() {
  kill_and_reap();
}

void Process::kill_and_reap() {
  if (pid_ <= 0 || finished_) return;
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  finished_ = true;
}

void Process::record_status(int wait_status) {
  finished_ = true;
  if (WIFSIGNALED(wait_status)) {
    signal_ = WTERMSIG(wait_status);
    exit_code_ = 128 + *signal_;
  } else {
    exit_code_ = WEXITSTATUS(wait_status);
  }
}

bool Process::poll() {
  if (finished_) return true;
  int status = 0;
  pid_t got = ::waitpid(pid_, &status, WNOHANG);
  if (got == pid_) record_status(status);
  if (got < 0 && errno == ECHILD) finished_ = true;  // reaped elsewhere; the status is lost
  return finished_;
}

bool Process::wait_until(std::optional<Nanos> deadline) {
  if (!deadline) {
    int status = 0;
    while (!finished_) {
      pid_t got = ::waitpid(pid_, &status, 0);
      if (got == pid_) record_status(status);
      if (got < 0 && errno != EINTR) finished_ = true;
    }
    return true;
  }
  // waitpid has no time-out; polling every few ms costs nothing next to a training job and keeps
  // this free of SIGCHLD handlers, which would clash with the CLI's own.
  for (;;) {
    if (poll()) return true;
    if (monotonic_now() >= *deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
}

int Process::wait(const WaitOptions& options) {
  if (finished_) return exit_code_;
  std::optional<Nanos> deadline;
  if (options.timeout) deadline = monotonic_now() + *options.timeout;
  if (wait_until(deadline)) return exit_code_;

  timed_out_ = true;
  forward_signal(SIGTERM);
  if (wait_until(monotonic_now() + options.kill_grace)) return exit_code_;
  forward_signal(SIGKILL);
  wait_until(std::nullopt);
  return exit_code_;
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
