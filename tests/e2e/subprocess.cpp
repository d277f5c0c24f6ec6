#include "subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "../support/default_signals.hpp"

namespace wattwise::e2e {

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Environment minimal_environment() {
  Environment env;
  for (const char* name : {"PATH", "HOME", "TMPDIR", "LANG"}) {
    if (const char* value = std::getenv(name)) env[name] = value;
  }
  if (env.find("PATH") == env.end()) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  return env;
}

ProcessResult run_process(const std::vector<std::string>& argv, const Environment& env,
                          const SpawnOptions& options) {
  if (argv.empty()) throw std::invalid_argument("run_process: empty argv");
  static int serial = 0;
  const std::string stem = "proc" + std::to_string(++serial);
  const auto out_path = options.capture_dir / (stem + ".out");
  const auto err_path = options.capture_dir / (stem + ".err");

  // Everything the child needs is prepared before fork: only async-signal-safe calls happen after it.
  std::vector<char*> child_argv;
  for (const auto& arg : argv) child_argv.push_back(const_cast<char*>(arg.c_str()));
  child_argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  std::vector<char*> child_env;
  for (auto& entry : env_strings) child_env.push_back(entry.data());
  child_env.push_back(nullptr);
  const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out_fd < 0 || err_fd < 0) throw std::runtime_error("run_process: cannot create capture files");

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("run_process: fork failed");
  if (pid == 0) {
    // The test runner may block or ignore signals; the child must start with the defaults.
    testing::default_stop_signals();
    const int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, STDIN_FILENO);
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    ::execve(child_argv[0], child_argv.data(), child_env.data());
    _exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);

  ProcessResult result;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() - start > options.guard) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      result.killed_by_guard = true;
      break;
    }
    if (options.while_running) options.while_running(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  return result;
}

}  // namespace wattwise::e2e
